"""Outbound HTTP to addresses taken from search results: only http(s), and never to this
machine or its private network (server-side request forgery), checked on every connection,
redirects included, by the resolver itself so a name cannot re-resolve somewhere else."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from core.errors import ResearchBotError


class BlockedAddressError(ResearchBotError):
    """A URL points at an address the bot must not reach (loopback, private, ...)."""


def address_allowed(address: str, allow_loopback: bool = False) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return allow_loopback
    return not (ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_reserved
                or ip.is_unspecified)


def check_url(url: str, allow_loopback: bool = False) -> str:
    """The URL when it is http(s) to a name or a public address; BlockedAddressError else."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise BlockedAddressError(f"only http and https URLs are fetched, not {parts.scheme!r}")
    host = parts.hostname
    if not host:
        raise BlockedAddressError("the URL has no host")
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        if (host == "localhost" or host.endswith(".localhost")) and not allow_loopback:
            raise BlockedAddressError(f"{host} is this machine") from None
        return url
    if not address_allowed(str(literal), allow_loopback):
        raise BlockedAddressError(f"{host} is a private or reserved address")
    return url


class GuardedResolver(AbstractResolver):
    """Resolves like the system, then refuses names with any non-public address."""

    def __init__(self, allow_loopback: bool = False) -> None:
        self._inner = ThreadedResolver()
        self._allow_loopback = allow_loopback

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        for entry in found:
            if not address_allowed(entry["host"], self._allow_loopback):
                raise BlockedAddressError(f"{host} resolves to a private or reserved address")
        return found

    async def close(self) -> None:
        await self._inner.close()


def guarded_session(user_agent: str, allow_loopback: bool = False,
                    limit: int = 32) -> aiohttp.ClientSession:
    """A session for fetching pages found on the web."""
    connector = aiohttp.TCPConnector(resolver=GuardedResolver(allow_loopback), limit=limit,
                                     ttl_dns_cache=60)
    return aiohttp.ClientSession(connector=connector, headers={"User-Agent": user_agent},
                                 trust_env=False)


def api_session(user_agent: str, connect_timeout_s: float | None = None,
                **options: Any) -> aiohttp.ClientSession:
    """A session for the search APIs the user configured (their hosts are trusted).
    `connect_timeout_s` bounds making a connection, so that a network that silently drops
    packets shows as unreachable (not as a slow answer) and is given up on at once."""
    if connect_timeout_s is not None:
        options.setdefault("timeout", aiohttp.ClientTimeout(total=None,
                                                            sock_connect=connect_timeout_s))
    return aiohttp.ClientSession(headers={"User-Agent": user_agent}, **options)
