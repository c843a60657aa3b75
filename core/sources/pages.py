"""Reading the pages behind web hits: each fetched page (core.web.fetch) into clean text (the
page's charset, trafilatura for the main text, pypdf for PDFs), and the passage of it that
best matches the question in place of the search snippet."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel

from core.errors import FetchError, UnreadableDocumentError
from core.metrics import SOURCE_FETCHES
from core.models import Source
from core.retrieval.embedding import Embedder
from core.retrieval.kb.documents import looks_binary, read_document
from core.sources.search_hits import parse_date
from core.text import sentences
from core.web.fetch import PAGE_TYPES, FetchedPage, PageFetcher, decode


class PageText(BaseModel):
    """What a fetched page says."""

    url: str
    final_url: str
    title: str
    text: str
    author: str | None = None
    published: str | None = None
    content_type: str
    size: int


def page_text(page: FetchedPage) -> PageText:
    """The page's text, title, author and date; FetchError (not_a_page) when it holds none."""
    suffix = PAGE_TYPES[page.content_type]
    body = page.body
    if suffix != ".pdf":
        if looks_binary(body):
            raise FetchError(f"{page.final_url}: binary content labelled {page.content_type}",
                             "not_a_page")
        body = decode(body, page.charset, html=suffix == ".html").encode("utf-8")
    try:
        document = read_document(Path(f"page{suffix}"), body)
    except UnreadableDocumentError as error:
        raise FetchError(f"{page.final_url}: {error}", "not_a_page") from None
    text = "\n\n".join(s.text for s in document.sections).strip()
    # A page without a <title> gets its file name ("page") from the reader: use the host.
    title = document.title if document.title.lower() != "page" \
        else urlsplit(page.final_url).netloc
    return PageText(url=page.url, final_url=page.final_url, title=title, text=text,
                    author=document.author, published=document.published,
                    content_type=page.content_type, size=len(body))


class PageReader:
    """Reads the pages behind the top web hits and keeps, for each, the passage that best
    matches the question in place of the search snippet."""

    def __init__(self, fetcher: PageFetcher, embedder: Embedder, pages: int = 5,
                 passage_chars: int = 1500) -> None:
        self._fetcher = fetcher
        self._embedder = embedder
        self._pages = pages
        self._passage_chars = passage_chars

    async def text_of(self, url: str) -> PageText:
        """The page at `url` fetched and read, both within the fetcher's time limit; each
        outcome counted in source_fetch_total."""
        try:
            page = await self._fetch_and_read(url)
        except FetchError as error:
            SOURCE_FETCHES.labels(error.outcome).inc()
            raise
        SOURCE_FETCHES.labels("ok").inc()
        return page

    async def _fetch_and_read(self, url: str) -> PageText:
        limit_s = self._fetcher.timeout_s
        try:
            async with asyncio.timeout(limit_s):
                return await asyncio.to_thread(page_text, await self._fetcher.fetch(url))
        except TimeoutError:
            raise FetchError(f"{url}: timed out after {limit_s:g} s", "timeout") from None

    async def texts_of(self, urls: Sequence[str]) -> dict[str, PageText | FetchError]:
        async def one(url: str) -> PageText | FetchError:
            try:
                return await self.text_of(url)
            except FetchError as error:
                return error

        outcomes = await asyncio.gather(*(one(url) for url in urls))
        return dict(zip(urls, outcomes, strict=True))

    async def read(self, question: str, sources: list[Source], snippet_providers: Collection[str]
                   ) -> tuple[list[Source], list[str]]:
        """`sources` with the pages of the top hits of `snippet_providers` (sources whose
        hits are search snippets) read in; the reasons pages were not."""
        targets = [s for s in sources if s.url and s.metadata.provider in snippet_providers]
        targets = targets[: self._pages]
        if not targets:
            return sources, []
        outcomes = await self.texts_of([s.url or "" for s in targets])
        problems = [str(o) for o in outcomes.values() if isinstance(o, FetchError)]
        pages = {url: o for url, o in outcomes.items() if isinstance(o, PageText) and o.text}
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
    passages, current = [], ""
    for sentence in sentences(text):
        if current and len(current) + len(sentence) + 1 > size:
            passages.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        passages.append(current)
    return passages or [text[:size]]
