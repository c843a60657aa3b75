"""Fetching the pages that search results point at: politely (robots.txt, a global and a
per-host concurrency limit), safely (http(s) only, no private addresses even after a redirect,
a size cap, HTML / PDF / plain text only) and into clean text (the page's charset, trafilatura
for the main text, pypdf for PDFs). Pages and robots.txt take the same road: core.web.net's
`guarded_get`, which checks every redirect's target before connecting to it."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
from protego import Protego
from pydantic import BaseModel
from yarl import URL

from core.errors import RedirectError, ResearchBotError, ResponseTooLargeError
from core.metrics import SOURCE_FETCHES
from core.models import Source
from core.retrieval.embedding import Embedder
from core.retrieval.kb.documents import UnreadableDocumentError, looks_binary, read_document
from core.sources.search_hits import parse_date
from core.web.net import AddressGuard, BlockedAddressError, guarded_get, read_capped

ROBOTS_MAX_BYTES = 512 * 1024
ROBOTS_TTL_S = 3600.0
_KINDS = {"text/html": ".html", "application/xhtml+xml": ".html", "application/pdf": ".pdf",
          "text/plain": ".txt"}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w.:-]+)""", re.I)


class FetchError(ResearchBotError):
    """A page was not fetched; the message says why (refused, too big, not text, ...) and
    `outcome` names the kind (source_fetch_total): blocked, robots, too_large, timeout,
    http_error, not_a_page or error."""

    def __init__(self, message: str, outcome: str = "error") -> None:
        super().__init__(message)
        self.outcome = outcome


class FetchedPage(BaseModel):
    url: str
    final_url: str
    title: str
    text: str
    author: str | None = None
    published: str | None = None
    content_type: str
    size: int


class PageFetcher:
    def __init__(self, session: aiohttp.ClientSession, *, user_agent: str = "researchbot",
                 max_bytes: int = 5 * 1024 * 1024, concurrency: int = 8, per_host: int = 2,
                 timeout_s: float = 10.0, allow_loopback: bool = False,
                 guard: AddressGuard | None = None) -> None:
        self._session = session
        self._agent = user_agent
        self._max_bytes = max_bytes
        self._all = asyncio.Semaphore(concurrency)
        self._per_host = per_host
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._timeout_s = timeout_s
        self._guard = guard or AddressGuard(allow_loopback)
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
        try:
            page = await self._fetch_within_time(url)
        except FetchError as error:
            SOURCE_FETCHES.labels(error.outcome).inc()
            raise
        SOURCE_FETCHES.labels("ok").inc()
        return page

    async def _fetch_within_time(self, url: str) -> FetchedPage:
        try:
            async with asyncio.timeout(self._timeout_s):
                return await self._fetch(url)
        except TimeoutError:
            raise FetchError(f"{url}: timed out after {self._timeout_s:g} s", "timeout") from None
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
            if kind not in _KINDS:
                raise FetchError(f"{final}: not a page ({kind or 'no content type'})",
                                 "not_a_page")
            body = await read_capped(response, self._max_bytes)
            charset = response.charset
        return await asyncio.to_thread(self._extract, url, final, kind, body, charset)

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

    def _extract(self, url: str, final: str, kind: str, body: bytes,
                 charset: str | None) -> FetchedPage:
        suffix = _KINDS[kind]
        if suffix != ".pdf":
            if looks_binary(body):
                raise FetchError(f"{final}: binary content labelled {kind}", "not_a_page")
            body = decode(body, charset, html=suffix == ".html").encode("utf-8")
        try:
            document = read_document(Path(f"page{suffix}"), body)
        except UnreadableDocumentError as error:
            raise FetchError(f"{final}: {error}", "not_a_page") from None
        text = "\n\n".join(s.text for s in document.sections).strip()
        # A page without a <title> gets its file name ("page") from the reader: use the host.
        title = document.title if document.title.lower() != "page" else urlsplit(final).netloc
        return FetchedPage(url=url, final_url=final, title=title, text=text,
                           author=document.author, published=document.published,
                           content_type=kind, size=len(body))

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


class PageReader:
    """Reads the pages behind the top web hits and keeps, for each, the passage that best
    matches the question in place of the search snippet."""

    def __init__(self, fetcher: PageFetcher, embedder: Embedder, pages: int = 5,
                 passage_chars: int = 1500) -> None:
        self._fetcher = fetcher
        self._embedder = embedder
        self._pages = pages
        self._passage_chars = passage_chars

    async def read(self, question: str, sources: list[Source], snippet_providers: Collection[str]
                   ) -> tuple[list[Source], list[str]]:
        """`sources` with the pages of the top hits of `snippet_providers` (sources whose
        hits are search snippets) read in; the reasons pages were not."""
        targets = [s for s in sources if s.url and s.metadata.provider in snippet_providers]
        targets = targets[: self._pages]
        if not targets:
            return sources, []
        outcomes = await self._fetcher.fetch_many([s.url or "" for s in targets])
        problems = [str(o) for o in outcomes.values() if isinstance(o, FetchError)]
        pages = {url: o for url, o in outcomes.items() if isinstance(o, FetchedPage) and o.text}
        if not pages:
            return sources, problems
        flat = [(url, passage) for url, page in pages.items()
                for passage in windows(page.text, self._passage_chars)]
        vectors = await asyncio.to_thread(self._embedder.embed,
                                          [question] + [passage for _, passage in flat])
        best: dict[str, tuple[float, str]] = {}
        for (url, passage), score in zip(flat, vectors[1:] @ vectors[0], strict=True):
            if url not in best or float(score) > best[url][0]:
                best[url] = (float(score), passage)
        updated = []
        for source in sources:
            page = pages.get(source.url or "")
            if page is None:
                updated.append(source)
                continue
            metadata = source.metadata.model_copy(update={
                "author": source.metadata.author or page.author,
                "published_at": source.metadata.published_at or parse_date(page.published),
                "word_count": len(page.text.split())})
            updated.append(source.model_copy(update={
                "content": best[source.url or ""][1], "metadata": metadata, "embedding": None,
                "title": source.title or page.title}))
        return updated, problems


def windows(text: str, size: int) -> list[str]:
    """The text in passages of about `size` characters, cut at paragraph or sentence ends."""
    from core.text import sentences

    passages, current = [], ""
    for sentence in sentences(text):
        if current and len(current) + len(sentence) + 1 > size:
            passages.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        passages.append(current)
    return passages or [text[:size]]
