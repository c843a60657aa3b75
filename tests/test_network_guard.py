import socket

import pytest

from tests.support.network_guard import NetworkGuardError

pytestmark = pytest.mark.integration


def test_non_loopback_connection_is_refused() -> None:
    with socket.socket() as sock, pytest.raises(NetworkGuardError):
        sock.connect(("192.0.2.1", 80))


def test_loopback_connection_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.socket() as client:
            client.connect(server.getsockname())
