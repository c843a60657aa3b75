"""Fetching the pages that search results point at: politely (robots.txt, a global and a
per-host concurrency limit) and safely (http(s) only, no private addresses even after a
redirect, a size cap, HTML / PDF / plain text only). Pages and robots.txt take the same road:
core.web.net's `guarded_get`, which checks every redirect's target before connecting to it.
What a page says (its main text, passages) is read above, in core.sources.pages."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

import aiohttp
from protego import Protego
from yarl import URL

from core.errors import BlockedAddressError, FetchError, RedirectError, ResponseTooLargeError
from core.web.net import AddressGuard, guarded_get, read_capped

T = TypeVar("T")

ROBOTS_MAX_BYTES = 512 * 1024
ROBOTS_TTL_S = 3600.0
# The content types read as pages, and the file suffix their reader knows them by.
PAGE_TYPES = {"text/html": ".html", "application/xhtml+xml": ".html",
              "application/pdf": ".pdf", "text/plain": ".txt"}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w.:-]+)""", re.I)


@dataclass(frozen=True)
class FetchedPage:
    """A page's bytes as the server sent them (at most the fetcher's cap), not yet read."""

    url: str
    final_url: str
    content_type: str  # one of PAGE_TYPES
    body: bytes
    charset: str | None


class PageFetcher:
    """Fetches pages (`fetch`, `fetch_many`) within `timeout_s` each, up to `max_bytes`, asking
    robots.txt first; a page not fetched is a FetchError saying why."""

    def __init__(self, session: aiohttp.ClientSession, *, user_agent: str = "researchbot",
                 max_bytes: int = 5 * 1024 * 1024, concurrency: int = 8, per_host: int = 2,
                 timeout_s: float = 10.0, guard: AddressGuard | None = None) -> None:
        self._session = session
        self._agent = user_agent
        self._max_bytes = max_bytes
        self._all = asyncio.Semaphore(concurrency)
        self._per_host = per_host
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self.timeout_s = timeout_s
        self._guard = guard or AddressGuard()
        self._robots: dict[str, tuple[float, Protego | None]] = {}
        self._robots_locks: dict[str, asyncio.Lock] = {}

    async def fetch_many(self, urls: Sequence[str]) -> dict[str, FetchedPage | FetchError]:
        async def one(url: str) -> FetchedPage | FetchError:
            try:
                return await self.fetch(url)
            except FetchError as error:
                return error

        outcomes = await asyncio.gather(*(one(url) for url in urls))
        return dict(zip(urls, outcomes, strict=True))

    async def fetch(self, url: str) -> FetchedPage:
        return await self._within_limits(url, self._fetch(url))

    async def admissible(self, url: str) -> str:
        """`url` once it may be fetched: http(s), not a private address (unless trusted),
        allowed by its site's robots.txt. FetchError saying why not; nothing but robots.txt
        is requested. (A name that resolves to a private address is refused when fetched.)"""
        try:
            checked = self._guard.check(url.strip())
        except BlockedAddressError as error:
            raise FetchError(f"{url}: refused: {error}", "blocked") from None
        try:
            async with asyncio.timeout(self.timeout_s):
                allowed = await self._robots_allow(str(checked))
        except TimeoutError:
            allowed = True  # unreachable robots.txt: "unavailable" (RFC 9309 2.3.1)
        if not allowed:
            raise FetchError(f"{checked}: disallowed by robots.txt", "robots")
        return str(checked)

    async def fetch_bytes(self, url: str, max_bytes: int) -> bytes:
        """Any document the site serves (a sitemap), as a page is fetched: robots.txt, the
        address guard, a cap and the time limit; FetchError saying why not."""
        return await self._within_limits(url, self._fetch_bytes(url, max_bytes))

    async def _fetch_bytes(self, url: str, max_bytes: int) -> bytes:
        async with guarded_get(self._session, url, self._guard, admit=self._admit) as response:
            if response.status >= 400:
                raise FetchError(f"{response.url}: HTTP {response.status}", "http_error")
            return await read_capped(response, max_bytes)

    async def _within_limits(self, url: str, fetching: Awaitable[T]) -> T:
        try:
            async with asyncio.timeout(self.timeout_s):
                return await fetching
        except TimeoutError:
            raise FetchError(f"{url}: timed out after {self.timeout_s:g} s", "timeout") from None
        except BlockedAddressError as error:
            raise FetchError(f"{url}: refused: {error}", "blocked") from None
        except RedirectError as error:
            raise FetchError(str(error)) from None
        except ResponseTooLargeError:
            raise FetchError(f"{url}: larger than {self._max_bytes / 2**20:g} MB",
                             "too_large") from None
        except (aiohttp.ClientError, OSError) as error:
            raise FetchError(f"{url}: {type(error).__name__}: {error}"[:300]) from None

    async def _fetch(self, url: str) -> FetchedPage:
        async with guarded_get(self._session, url, self._guard, admit=self._admit) as response:
            final = str(response.url)
            if response.status >= 400:
                raise FetchError(f"{final}: HTTP {response.status}", "http_error")
            kind = response.content_type.lower()
            if kind not in PAGE_TYPES:
                raise FetchError(f"{final}: not a page ({kind or 'no content type'})",
                                 "not_a_page")
            body = await read_capped(response, self._max_bytes)
            return FetchedPage(url, final, kind, body, response.charset)

    async def _admit(self, url: URL) -> contextlib.AbstractAsyncContextManager[None]:
        """Each hop: robots.txt must allow it; then a place in the global and the per-host
        limits, held while it is read."""
        if not await self._robots_allow(str(url)):
            raise FetchError(f"{url}: disallowed by robots.txt", "robots")
        return self._slot(url.raw_host or "")

    @asynccontextmanager
    async def _slot(self, host: str) -> AsyncIterator[None]:
        async with self._all, self._hosts.setdefault(host, asyncio.Semaphore(self._per_host)):
            yield

    async def _robots_allow(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        async with self._robots_locks.setdefault(origin, asyncio.Lock()):
            known = self._robots.get(origin)
            if known is None or time.monotonic() - known[0] > ROBOTS_TTL_S:
                known = (time.monotonic(), await self._load_robots(origin))
                self._robots[origin] = known
            rules = known[1]
        return rules is None or rules.can_fetch(url, self._agent)

    async def _load_robots(self, origin: str) -> Protego | None:
        """The site's rules (RFC 9309, parsed by protego: wildcards, $ and Allow); None
        (everything allowed) when it has none. A robots.txt that errors (5xx) disallows the
        site for now, as crawlers do."""
        try:
            async with guarded_get(self._session, f"{origin}/robots.txt",
                                   self._guard) as response:
                if 400 <= response.status < 500:
                    return None
                if response.status >= 500:
                    return Protego.parse("User-agent: *\nDisallow: /")
                body = await response.content.read(ROBOTS_MAX_BYTES)
        except (aiohttp.ClientError, OSError, TimeoutError, BlockedAddressError, RedirectError):
            # Unreachable, or redirected somewhere refused: "unavailable" (RFC 9309 2.3.1).
            return None
        return Protego.parse(body.decode("utf-8", "replace"))


def decode(body: bytes, charset: str | None, html: bool = False) -> str:
    """Text in the charset the server declared, else the page's <meta charset>, else UTF-8
    when it is valid, else charset-normalizer's best guess."""
    candidates = [charset]
    if html:
        meta = _META_CHARSET.search(body[:4096])
        candidates.append(meta.group(1).decode("ascii", "ignore") if meta else None)
    for name in candidates:
        if name:
            try:
                return body.decode(name)
            except (LookupError, UnicodeDecodeError):
                continue
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        best = from_bytes(body).best()
        return str(best) if best is not None else body.decode("latin-1")
