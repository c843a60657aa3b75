"""The test network guard: once installed, a socket may connect to loopback only."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any


class NetworkGuardError(RuntimeError):
    """A test tried to reach a host that is not loopback."""


def _loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _loopback(address):
        raise NetworkGuardError(f"tests may not connect to {address!r}")
    return _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if not _loopback(address):
        raise NetworkGuardError(f"tests may not connect to {address!r}")
    return _connect_ex(self, address)


def install_network_guard() -> None:
    """Refuse every connection beyond loopback in this process (tests/conftest.py calls it
    before any test module is imported)."""
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
