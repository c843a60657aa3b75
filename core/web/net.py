"""Every outbound HTTP request goes through here: only http(s), never to this machine or its
private network (server-side request forgery) unless that exact host was configured, every
redirect followed one hop at a time through the same check, and every answer read against a
byte cap (decompressed bytes counted).

Where each form of an internal address is refused:

- `AddressGuard.check`, before any connection, on the host exactly as aiohttp and httpx will
  see it (yarl's parse: "①②⑦.0.0.1" is 127.0.0.1 there, not a name): IP literals, IPv6 ones
  with an IPv4 address inside (::ffff:127.0.0.1, 6to4, NAT64), and the legacy numeric IPv4
  forms the system resolver accepts through inet_aton (2130706433, 0177.0.0.1, 0x7f.0.0.1,
  127.1) are decoded as that resolver decodes them, then judged by address;
- `GuardedResolver`, for names: every address a name resolves to must be public, so
  "localtest.me" or a DNS rebinding answer is refused as well (aiohttp skips the resolver for
  literals, hence the first check);
- `guarded_socket`, on the page session, the address of the socket actually connected: the
  last word, whatever parsed the URL.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from core.errors import BlockedAddressError, RedirectError, ResponseTooLargeError

__all__ = ["MAX_REDIRECTS", "AddressGuard", "BlockedAddressError", "CappedTransport",
           "GuardedResolver", "address_allowed", "api_session", "capped_http_client",
           "check_url", "guarded_get", "guarded_session", "read_capped"]

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
CHUNK_BYTES = 65536
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
HostPort = tuple[str, int]
_NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+", re.I)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64), which is where it leads."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def ip_allowed(ip: IPAddress) -> bool:
    """Public unicast addresses only."""
    ip = _embedded_ipv4(ip)
    if ip.is_loopback:
        return False
    return ip.is_global and not (ip.is_private or ip.is_link_local or ip.is_multicast
                                 or ip.is_reserved or ip.is_unspecified)


def address_allowed(address: str) -> bool:
    return ip_allowed(ipaddress.ip_address(address.split("%", 1)[0]))


def host_address(host: str) -> IPAddress | None:
    """The address a URL's host names literally, None for a name. A host whose last label is
    a number is an IPv4 address in every legacy form inet_aton takes (as browsers and the
    system resolver read it); one that is not a valid address is refused."""
    bare = host[:-1] if host.endswith(".") else host
    try:
        return ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        pass
    if not _NUMERIC_LABEL.fullmatch(bare.rsplit(".", 1)[-1]):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except OSError:
        raise BlockedAddressError(f"{host} is not a valid address") from None


def endpoint(url: URL) -> HostPort:
    """(host, port) as a connection sees it: a literal address in its canonical form."""
    host = (url.raw_host or "").lower()
    literal = host_address(host) if host else None
    return (str(literal) if literal is not None else host.rstrip("."), url.port or 0)


@dataclass(frozen=True)
class AddressGuard:
    """Which URLs outbound requests may reach: public addresses, plus the `trusted` endpoints
    (host, port) the user configured (a SearXNG on their LAN). Tests trust their local
    servers' endpoints the same way."""

    trusted: frozenset[HostPort] = field(default_factory=frozenset)

    @classmethod
    def trusting(cls, *urls: str) -> AddressGuard:
        """A guard that trusts the endpoints of `urls` (ones that do not parse are skipped)."""
        found = set()
        for url in urls:
            try:
                host, port = endpoint(URL(url))
            except (ValueError, BlockedAddressError):
                continue
            if host:
                found.add((host, port))
        return cls(frozenset(found))

    def trusts(self, host: str, port: int) -> bool:
        return (host.lower().rstrip("."), port) in self.trusted

    def check(self, url: str | URL) -> URL:
        """The URL to request, parsed once as the client will; BlockedAddressError if it may
        not be reached."""
        try:
            parsed = url if isinstance(url, URL) else URL(url)
            endpoint(parsed)  # the port, too, must parse
        except ValueError as error:
            raise BlockedAddressError(f"not a valid URL: {error}") from None
        if parsed.scheme not in ("http", "https"):
            raise BlockedAddressError(f"only http and https URLs are fetched, not "
                                      f"{parsed.scheme!r}")
        if not parsed.raw_host:
            raise BlockedAddressError("the URL has no host")
        if endpoint(parsed) in self.trusted:
            return parsed
        host = parsed.raw_host.lower().rstrip(".")
        literal = host_address(host)
        if literal is None:
            if host == "localhost" or host.endswith(".localhost"):
                raise BlockedAddressError(f"{host} is this machine")
            return parsed  # a name: the resolver judges its addresses
        if not ip_allowed(literal):
            raise BlockedAddressError(f"{parsed.raw_host} is a private or reserved address "
                                      f"({literal})")
        return parsed

    def check_address(self, address: str, host: str, port: int) -> None:
        """Refuse a resolved or connected `address` unless public or the endpoint trusted."""
        if self.trusts(host, port) or address_allowed(address):
            return
        raise BlockedAddressError(f"{host} resolves to a private or reserved address")


def check_url(url: str) -> str:
    """The URL when it is http(s) to a name or a public address; BlockedAddressError else."""
    AddressGuard().check(url)
    return url


class GuardedResolver(AbstractResolver):
    """Resolves like the system, then refuses names with any non-public address (unless the
    guard trusts that endpoint)."""

    def __init__(self, guard: AddressGuard | None = None) -> None:
        self._inner = ThreadedResolver()
        self._guard = guard or AddressGuard()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        for entry in found:
            self._guard.check_address(entry["host"], host, port)
        return found

    async def close(self) -> None:
        await self._inner.close()


def guarded_socket(guard: AddressGuard) -> Callable[[Any], socket.socket]:
    """An aiohttp socket factory that refuses to open a socket to a non-public address: the
    check that holds whatever parsed the URL or resolved the name. Trust is by address and
    port here (the name is not known), so it suits the page session only."""

    def open_socket(addr_info: Any) -> socket.socket:
        family, kind, proto, _, address = addr_info
        host, port = str(address[0]), int(address[1])
        guard.check_address(host, host, port)
        return socket.socket(family=family, type=kind, proto=proto)

    return open_socket


def guarded_session(user_agent: str, limit: int = 32,
                    guard: AddressGuard | None = None) -> aiohttp.ClientSession:
    """A session for fetching pages found on the web."""
    guard = guard or AddressGuard()
    connector = aiohttp.TCPConnector(resolver=GuardedResolver(guard=guard), limit=limit,
                                     ttl_dns_cache=60, socket_factory=guarded_socket(guard))
    return aiohttp.ClientSession(connector=connector, headers={"User-Agent": user_agent},
                                 trust_env=False)


def api_session(user_agent: str, connect_timeout_s: float | None = None,
                trusted: Iterable[str] = (), **options: Any) -> aiohttp.ClientSession:
    """A session for the search APIs the user configured: their endpoints (`trusted`, base
    URLs) may be private; any other name a redirect leads to must resolve to public addresses.
    `connect_timeout_s` bounds making a connection, so that a network that silently drops
    packets shows as unreachable (not as a slow answer) and is given up on at once."""
    if connect_timeout_s is not None:
        options.setdefault("timeout", aiohttp.ClientTimeout(total=None,
                                                            sock_connect=connect_timeout_s))
    guard = AddressGuard.trusting(*trusted)
    options.setdefault("connector", aiohttp.TCPConnector(resolver=GuardedResolver(guard=guard)))
    return aiohttp.ClientSession(headers={"User-Agent": user_agent}, **options)


@asynccontextmanager
async def guarded_get(session: aiohttp.ClientSession, url: str, guard: AddressGuard, *,
                      params: Mapping[str, str] | None = None,
                      admit: Callable[[URL], Awaitable[Any]] | None = None,
                      max_redirects: int = MAX_REDIRECTS,
                      **options: Any) -> AsyncIterator[aiohttp.ClientResponse]:
    """GET `url`, following up to `max_redirects` redirects one hop at a time: each target is
    checked by `guard` before any connection to it, so a redirect cannot lead inside.
    `admit(url)`, when given, is awaited before each hop and may refuse it (robots.txt) and
    hold limits while the hop is open (it returns an async context manager). Yields the
    first answer that is not a redirect."""
    current = guard.check(URL(url).extend_query(params) if params else url)
    for _ in range(max_redirects + 1):
        async with await _admitted(admit, current), session.get(
                current, allow_redirects=False, **options) as response:
            if response.status not in REDIRECT_STATUSES:
                yield response
                return
            location = response.headers.get("Location")
            if not location:
                raise RedirectError(f"{current}: a redirect without a location")
        try:
            target = current.join(URL(location))
        except ValueError:
            raise RedirectError(f"{current}: a redirect to an invalid URL") from None
        current = guard.check(target)
    raise RedirectError(f"{url}: more than {max_redirects} redirects")


async def _admitted(admit: Callable[[URL], Awaitable[Any]] | None, url: URL) -> Any:
    if admit is None:
        return _Nothing()
    return await admit(url)


class _Nothing:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *_: object) -> None:
        return None


async def read_capped(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """The body, read as it streams and abandoned past `max_bytes`. aiohttp decompresses as it
    streams (in bounded steps), so the bytes counted are the decoded ones: a gzip bomb stops
    at the cap like any other large answer."""
    declared = response.content_length
    if declared is not None and declared > max_bytes:
        raise ResponseTooLargeError(max_bytes, 0)
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(CHUNK_BYTES):
        size += len(chunk)
        if size > max_bytes:
            raise ResponseTooLargeError(max_bytes, size)
        chunks.append(chunk)
    return b"".join(chunks)


class CappedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose answers stop at `max_bytes` of decoded body, for the clients
    that read whole bodies themselves (tavily-python, the OpenAI SDK under litellm). httpx
    decodes after the transport, so decoded sizes are counted here with a zlib decoder of
    their own; gzip (and zlib deflate) is asked for, any other encoding refused."""

    def __init__(self, inner: httpx.AsyncBaseTransport, max_bytes: int) -> None:
        self._inner = inner
        self._max_bytes = max_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "gzip"
        response = await self._inner.handle_async_request(request)
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            await response.aclose()
            raise ResponseTooLargeError(self._max_bytes, 0)
        encoding = response.headers.get("Content-Encoding", "identity").lower().strip()
        if encoding not in ("identity", "gzip", "x-gzip", "deflate", ""):
            await response.aclose()
            raise httpx.DecodingError(f"the answer is {encoding}-encoded; gzip was asked for",
                                      request=request)
        stream = _CappedStream(response.stream, self._max_bytes,  # type: ignore[arg-type]
                               encoding not in ("identity", ""))
        return httpx.Response(response.status_code, headers=response.headers, stream=stream,
                              extensions=response.extensions, request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, max_bytes: int, compressed: bool) -> None:
        self._inner = inner
        self._max_bytes = max_bytes
        self._inflater = _Inflater() if compressed else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._inner:
            size += len(chunk) if self._inflater is None else \
                self._inflater.size(chunk, self._max_bytes - size + 1)
            if size > self._max_bytes:
                await self._inner.aclose()
                raise ResponseTooLargeError(self._max_bytes, size)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Inflater:
    """Counts the decoded size of a gzip or zlib stream, 64 KB of output at a time."""

    def __init__(self) -> None:
        self._zlib = zlib.decompressobj(wbits=47)  # gzip or zlib header, detected

    def size(self, chunk: bytes, budget: int) -> int:
        """Decoded bytes in `chunk`, counting stopped once past `budget`."""
        total = 0
        while total <= budget:
            try:
                out = self._zlib.decompress(chunk, CHUNK_BYTES)
            except zlib.error as error:
                raise httpx.DecodingError(f"the answer is not valid gzip: {error}") from None
            total += len(out)
            chunk = self._zlib.unconsumed_tail
            if self._zlib.eof and self._zlib.unused_data:  # a further gzip member
                chunk = self._zlib.unused_data
                self._zlib = zlib.decompressobj(wbits=47)
            elif not chunk and len(out) < CHUNK_BYTES:
                break
        return total


def capped_http_client(max_bytes: int, inner: httpx.AsyncBaseTransport | None = None,
                       **options: Any) -> httpx.AsyncClient:
    """An httpx client (tavily-python's, litellm's) whose answers stop at `max_bytes` and which
    follows no redirect, over `inner` (httpx's own transport by default). httpx's environment
    proxies are off: they would be mounted on transports of httpx's own, uncapped (litellm's
    aiohttp transport reads the proxy settings itself)."""
    transport = CappedTransport(inner or httpx.AsyncHTTPTransport(), max_bytes)
    return httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False,
                             **options)
