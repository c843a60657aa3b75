"""Each tenant's BM25 corpus in memory, built from the catalogue at one generation.

A corpus holds the passages' ids and their BM25 index, never their texts: a search reads the
passages of its hits from the catalogue by id. A process whose BM25 index is cached (and
current) so reads nothing per chunk but its id, and memory does not hold the tenant's texts.

Tenants are independent: one tenant's rebuild never holds up another's search. When the
generation moves, searches go on answering from the loaded corpus while one background task
builds the new one (see `KnowledgeSearch.search` for what that staleness allows). At most
`max_loaded_tenants` corpora stay loaded, and none longer than `tenant_idle_seconds` without
a search.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from core.config import KnowledgeBaseSettings
from core.models import Clock
from core.store.catalogue import KnowledgeCatalogue, Passage
from core.text import terms

log = logging.getLogger(__name__)

# How long a search waits for the rebuild of a corpus an index run made stale before it
# answers from the stale one (bench/kb_tenants.py: a few hundred chunks take milliseconds,
# 5,000 several seconds).
STALE_WAIT_S = 1.0


@dataclass
class Corpus:
    """Everything search needs in memory for one tenant at one catalogue generation: the
    passages' ids, in the order of the BM25 index's documents."""

    generation: int
    ids: list[str]
    bm25: Any
    _members: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._members = frozenset(self.ids)

    def __contains__(self, passage_id: object) -> bool:
        return passage_id in self._members

    def bm25_ranking(self, query: str, limit: int) -> list[str]:
        """Up to `limit` passage ids that share a term with the query, best first."""
        tokens = terms(query)
        if not tokens or self.bm25 is None:
            return []
        k = min(limit, len(self.ids))
        documents, scores = self.bm25.retrieve([tokens], k=k, show_progress=False)
        return [self.ids[int(d)] for d, s in zip(documents[0], scores[0], strict=True) if s > 0]


class TenantCorpora:
    def __init__(
        self,
        catalogue: KnowledgeCatalogue,
        settings: KnowledgeBaseSettings,
        index_cache: Any = None,
        clock: Clock = time.monotonic,
    ) -> None:
        """`index_cache`, a diskcache.Cache, keeps each tenant's BM25 index between
        processes (building it tokenizes every chunk: ~2 s for 7k chunks). `clock`: seconds,
        for the idle time of loaded tenants (tests move it instead of waiting)."""
        self._catalogue = catalogue
        self._index_cache = index_cache
        self._loaded = _LoadedTenants(settings.max_loaded_tenants,
                                      settings.tenant_idle_seconds, clock)
        # The event loop holds tasks weakly; an evicted tenant's rebuild must still finish.
        self._rebuilds: set[asyncio.Task[Corpus]] = set()

    async def get(self, tenant: str, generation: int | None = None) -> Corpus:
        """The tenant's corpus for a search of the catalogue at `generation` (default: now).
        With an older one loaded, the search waits up to `STALE_WAIT_S` for the rebuild (a
        few hundred chunks rebuild in milliseconds: the question after an index run finds
        what it added) and then answers from the older one while the rebuild goes on in the
        background; with nothing (or nothing searchable) loaded it waits, sharing one
        build."""
        if generation is None:
            generation = await self._catalogue.generation(tenant)
        entry = self._loaded.use(tenant)
        waited = False
        while True:
            loaded = entry.corpus
            if loaded is not None and loaded.generation >= generation:
                return loaded
            rebuild = self._start_rebuild(tenant, entry, generation)
            # Shielded: a search given up on (a source timeout) must not cancel a build that
            # other searches are waiting for.
            if loaded is not None and loaded.ids:
                if waited:
                    return loaded
                waited = True
                # Too slow (the rebuild goes on) or failed (_rebuild_done logs it): the older
                # corpus answers.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(rebuild), STALE_WAIT_S)
                continue
            # The build may be one for an older generation that was already running: then
            # the loop starts the next.
            await asyncio.shield(rebuild)

    async def generation(self, tenant: str) -> int:
        """The catalogue generation that searches of the tenant answer from now: it trails
        the catalogue while a rebuild runs in the background, and reading it starts that
        rebuild."""
        return (await self.generations(tenant))[1]

    async def generations(self, tenant: str) -> tuple[int, int]:
        """The catalogue's generation now, and the one searches answer from (`generation`)."""
        stored = await self._catalogue.generation(tenant)
        entry = self._loaded.get(tenant)
        if entry is None or entry.corpus is None or not entry.corpus.ids:
            return stored, stored  # a search now waits for a corpus at least this new
        if entry.corpus.generation < stored:
            self._start_rebuild(tenant, entry, stored)
        return stored, min(entry.corpus.generation, stored)

    def loaded_tenants(self) -> list[str]:
        """Tenants with a corpus in memory, least recently searched first."""
        return self._loaded.tenants()

    def rebuild_of(self, tenant: str) -> asyncio.Task[Corpus] | None:
        """The tenant's running rebuild, if one runs."""
        entry = self._loaded.get(tenant)
        return entry.rebuild if entry is not None else None

    async def build(self, tenant: str, generation: int) -> Corpus:
        """A corpus of the tenant's catalogue as it is now, taken for `generation`. A cached
        BM25 index is used when it was built at this generation over these very ids (a
        generation alone could be another store's, or one from before a store was emptied);
        then only the ids are read. Otherwise every passage is read to build the index."""
        key = f"bm25:{tenant}"
        if self._index_cache is not None:
            # Unpickling the index takes ~0.1 s at 50k chunks: other tenants' searches go on.
            saved = await asyncio.to_thread(self._index_cache.get, key)
            if saved is not None and saved[0] == generation:
                ids = await self._catalogue.passage_ids(tenant)
                if saved[1] == ids:
                    return Corpus(generation, ids, saved[2])
        passages = await self._catalogue.passages(tenant)
        ids = [p.id for p in passages]
        bm25 = await asyncio.to_thread(_build_bm25, passages) if passages else None
        if (self._index_cache is not None
                and generation == await self._catalogue.generation(tenant)):
            await asyncio.to_thread(self._index_cache.set, key, (generation, ids, bm25))
        return Corpus(generation, ids, bm25)

    def _start_rebuild(self, tenant: str, entry: _Loaded, generation: int
                       ) -> asyncio.Task[Corpus]:
        """The tenant's running rebuild, or a new one: one at a time for each tenant."""
        if entry.rebuild is None:
            entry.rebuild = asyncio.create_task(self._rebuild(tenant, entry, generation))
            self._rebuilds.add(entry.rebuild)
            entry.rebuild.add_done_callback(self._rebuild_done)
        return entry.rebuild

    async def _rebuild(self, tenant: str, entry: _Loaded, generation: int) -> Corpus:
        try:
            corpus = await self.build(tenant, generation)
            entry.corpus = corpus
            return corpus
        finally:
            entry.rebuild = None

    def _rebuild_done(self, task: asyncio.Task[Corpus]) -> None:
        self._rebuilds.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # A waiting search raises it; a background rebuild's failure would go unseen.
            log.warning("rebuilding a tenant's search index failed (the next search tries "
                        "again): %s", task.exception())


@dataclass
class _Loaded:
    """A tenant's corpus in memory, the rebuild that will replace it, and its last search."""

    corpus: Corpus | None = None
    rebuild: asyncio.Task[Corpus] | None = None
    used: float = 0.0


class _LoadedTenants:
    """At most `limit` tenants, least recently searched first; a tenant not searched for
    `idle` seconds is dropped at the next search of any tenant (no timer to own and stop).
    An OrderedDict rather than cachetools: an entry's idle time runs from its last use (a
    TTLCache counts from insertion), and the entries hold rebuild tasks, not cached values."""

    def __init__(self, limit: int, idle: float, clock: Clock) -> None:
        self._limit = limit
        self._idle = idle
        self._clock = clock
        self._entries: OrderedDict[str, _Loaded] = OrderedDict()

    def use(self, tenant: str) -> _Loaded:
        now = self._clock()
        entry = self._entries.pop(tenant, None) or _Loaded()
        entry.used = now
        self._drop(now, room_for=1)
        self._entries[tenant] = entry
        return entry

    def get(self, tenant: str) -> _Loaded | None:
        return self._entries.get(tenant)

    def tenants(self) -> list[str]:
        """Least recently searched first."""
        return list(self._entries)

    def _drop(self, now: float, room_for: int) -> None:
        while self._entries:
            oldest = next(iter(self._entries.values()))
            full = len(self._entries) + room_for > self._limit
            if not full and now - oldest.used <= self._idle:
                return
            self._entries.popitem(last=False)


def _build_bm25(passages: list[Passage]) -> Any:
    import bm25s

    retriever = bm25s.BM25()
    corpus = [terms(f"{p.title} {p.location or ''} {p.text}") or ["_"] for p in passages]
    retriever.index(corpus, show_progress=False)
    return retriever
