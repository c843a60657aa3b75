"""The knowledge base as the rest of the bot sees it: index a tenant's files, search them.

It only wires the parts together: the catalogue (core.store.catalogue) and the vectors hold
what is indexed; `Indexer` (indexer.py) writes both, crash-safe; `TenantCorpora` (corpus.py)
keeps each tenant's BM25 corpus in memory; `KnowledgeSearch` (search.py) ranks passages.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config import KnowledgeBaseSettings
from core.models import Clock, Source, utcnow
from core.retrieval.embedding import Embedder
from core.retrieval.kb.corpus import TenantCorpora
from core.retrieval.kb.indexer import FileEvent, Indexer, IndexReport, SentFile, WorkerAlive
from core.retrieval.kb.search import KnowledgeSearch, SearchMode
from core.retrieval.vectors import TenantCollections, VectorStore
from core.store.catalogue import (
    CatalogueDocument,
    CatalogueSite,
    CatalogueSize,
    KnowledgeCatalogue,
)

if TYPE_CHECKING:
    from core.web.fetch import FetchedPage, PageFetcher


@dataclass(frozen=True)
class SiteRefresh:
    site: CatalogueSite
    report: IndexReport


@dataclass(frozen=True)
class SiteRead:
    report: IndexReport
    pages: int  # pages read
    start_failed: str | None  # why the start page could not be read (nothing was)

__all__ = ["FileEvent", "IndexReport", "KnowledgeBase", "SearchMode", "WorkerAlive"]

# The vector collections' purpose name: kb_<tenant digest>
_PURPOSE = "kb"


class KnowledgeBase:
    def __init__(
        self,
        catalogue: KnowledgeCatalogue,
        vectors: VectorStore,
        embedder: Embedder,
        settings: KnowledgeBaseSettings,
        index_cache: Any = None,
        worker: str = "",
        worker_alive: WorkerAlive | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        """`index_cache` (a diskcache.Cache) and `clock`: see `TenantCorpora`; `worker` and
        `worker_alive`: see `Indexer`."""
        collections = TenantCollections(vectors, _PURPOSE)
        self._vectors = vectors
        self._catalogue = catalogue
        self._indexer = Indexer(catalogue, collections, embedder, settings, worker,
                                worker_alive)
        self.corpora = TenantCorpora(catalogue, settings, index_cache, clock)
        self._search = KnowledgeSearch(catalogue, self.corpora, collections, embedder,
                                       settings)

    @property
    def vectors(self) -> VectorStore:
        """The vector store (a readiness probe's heartbeat)."""
        return self._vectors

    async def index(self, paths: list[Path], tenant: str, on_file: FileEvent | None = None
                    ) -> IndexReport:
        return await self._indexer.index(paths, tenant, on_file)

    async def index_pages(self, pages: list[FetchedPage], failed: list[tuple[str, str]],
                          tenant: str, on_file: FileEvent | None = None,
                          added_by: str | None = None) -> IndexReport:
        """Index fetched web pages under their URLs (core.web.crawl reads them)."""
        return await self._indexer.index_pages(pages, failed, tenant, on_file, added_by)

    async def index_sent(self, tenant: str, sent: list[SentFile],
                         on_file: FileEvent | None = None, added_by: str | None = None
                         ) -> IndexReport:
        """Index files sent (uploads), each under its key."""
        return await self._indexer.index_sent(tenant, sent, on_file, added_by)

    async def add_site(self, tenant: str, url: str, max_pages: int, depth: int) -> None:
        """Remember a page or site just indexed from `url`, for `refresh_sites`."""
        await self._catalogue.add_site(tenant, url, max_pages, depth)

    async def sites(self, tenant: str | None = None) -> list[CatalogueSite]:
        """The pages and sites indexed from a URL (a tenant's, or all), least recently read
        first."""
        return await self._catalogue.sites(tenant)

    async def refresh_sites(self, fetcher: PageFetcher, every: timedelta | None = None,
                            tenant: str | None = None, on_file: FileEvent | None = None
                            ) -> list[SiteRefresh]:
        """Read the sites indexed from a URL again, as `researchbot index URL` read them:
        unchanged pages skipped, changed ones replaced, pages now gone (404, 410) removed,
        newly linked ones added. With `every`, only the sites not refreshed for that long,
        each claimed first so that one process of many reads it; otherwise all of them."""
        from core.web.crawl import crawl

        due_before = utcnow() - every if every is not None else None
        done = []
        for site in await self._catalogue.sites(tenant):
            if not await self._catalogue.claim_site(site, due_before):
                continue
            skip = await self._catalogue.removed_pages(site.tenant)
            read = await crawl(fetcher, site.url, site.max_pages, site.depth, skip)
            report = await self.index_pages(read.pages, read.failed, site.tenant, on_file)
            done.append(SiteRefresh(site, report))
        return done

    async def read_site(self, fetcher: PageFetcher, tenant: str, url: str, max_pages: int,
                        depth: int, on_file: FileEvent | None = None,
                        added_by: str | None = None) -> SiteRead:
        """Index a page (with `max_pages` > 1, its site's pages under its path, those a
        person removed left out) and remember it for `refresh_sites`. Asked for by its own
        URL, a page removed before is indexed again."""
        from core.web.crawl import crawl, page_key

        start = page_key(url)
        await self._catalogue.allow_page(tenant, start)
        skip = await self._catalogue.removed_pages(tenant)
        read = await crawl(fetcher, start, max_pages, depth, skip)
        if not read.pages:  # the start page could not be read: nothing else was
            failed = next((why for where, why in read.failed if where == start), None)
            return SiteRead(IndexReport(skipped=read.failed), 0, failed or "no page was read")
        report = await self.index_pages(read.pages, read.failed, tenant, on_file, added_by)
        await self._catalogue.add_site(tenant, start, max_pages, depth)
        return SiteRead(report, len(read.pages), None)

    async def documents(self, tenant: str, limit: int | None = None,
                        after: str = "") -> list[CatalogueDocument]:
        """The tenant's documents by path (those after path `after`)."""
        return await self._catalogue.documents(tenant, limit, after)

    async def document(self, tenant: str, document_id: str) -> CatalogueDocument | None:
        return await self._catalogue.document(tenant, document_id)

    async def remove_document(self, tenant: str, document_id: str) -> CatalogueDocument | None:
        """Take the tenant's document out of search: its catalogue rows, chunks and vectors
        (and, as the catalogue's generation moves on, the cached answers found among them).
        None when the tenant has no such document."""
        document = await self._catalogue.document(tenant, document_id)
        if document is not None:
            await self._indexer.remove(tenant, document.path)
            if document.origin == "url":  # not read again, alone or by its site's refresh
                await self._catalogue.forget_site(tenant, document.path)
                await self._catalogue.remove_page(tenant, document.path)
        return document

    async def stats(self, tenant: str) -> CatalogueSize:
        """(files, chunks) indexed for the tenant."""
        return await self._catalogue.size(tenant)

    async def search(self, query: str, tenant: str, limit: int = 8,
                     mode: SearchMode = "hybrid", per_document: int = 3) -> list[Source]:
        return await self._search.search(query, tenant, limit, mode, per_document)

    async def generation(self, tenant: str) -> int:
        """The catalogue generation that searches of the tenant answer from now. The answer
        cache keys on it, so an answer is stored under the generation of the documents it was
        found in, never under a newer one. It trails the catalogue while a rebuild runs in the
        background, and reading it starts that rebuild (a tenant whose questions all hit the
        cache would otherwise never search, and never see its new documents)."""
        return await self.corpora.generation(tenant)

    async def generations(self, tenant: str) -> tuple[int, int]:
        """The catalogue's generation now, and `generation`: the answer cache serves answers
        of the first (a document removed a moment ago is not cited by an answer served) and
        keeps new ones under the second (the documents they were found in)."""
        return await self.corpora.generations(tenant)
