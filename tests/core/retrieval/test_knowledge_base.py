from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.config import KnowledgeBaseSettings
from core.errors import IndexingError
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import VectorCollection
from core.store.catalogue import KnowledgeCatalogue, Passage

pytestmark = pytest.mark.integration


async def test_index_then_search_each_format(knowledge_base: Any, corpus: Path) -> None:
    report = await knowledge_base.index([corpus], "t1")
    assert len(report.added) == 5 and not report.skipped
    cases = {
        "How many hours a day do cats sleep?": ("cats.md", "Cats > Sleep"),
        "Which city did Mount Vesuvius bury?": ("volcanoes.rst", "Eruptions"),
        "Why does sourdough bread taste sour?": ("bread.html", None),
        "What is the largest planet?": ("planets.pdf", "page 2"),
        "How much caffeine is in black tea?": ("tea.txt", None),
    }
    for question, (name, location) in cases.items():
        top = (await knowledge_base.search(question, "t1", limit=3))[0]
        assert top.path is not None and top.path.endswith(name), question
        if location:
            assert location in (top.location or ""), question
        assert 0 < top.metadata.relevance <= 1 and top.metadata.provider == "local"


async def test_reindex_is_incremental(
    any_engine: Any, chroma: Any, embedder: Any, kb_settings: Any, corpus: Path
) -> None:
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(any_engine), chroma, embedder, kb_settings)
    await knowledge_base.index([corpus], "t1")
    again = await knowledge_base.index([corpus], "t1")
    assert len(again.unchanged) == 5 and not again.added and again.chunks == 0

    (corpus / "tea.txt").write_text("Oolong tea is partly oxidised, between green and black.")
    (corpus / "cats.md").unlink()
    third = await knowledge_base.index([corpus], "t1")
    assert [Path(p).name for p in third.updated] == ["tea.txt"]
    assert [Path(p).name for p in third.removed] == ["cats.md"]
    catalogued = await KnowledgeCatalogue(any_engine).passages("t1")
    assert await knowledge_base.stats("t1") == (4, len(catalogued))
    hits = await knowledge_base.search("How long do cats sleep?", "t1", limit=8)
    assert all(not (h.path or "").endswith("cats.md") for h in hits)
    tea = await knowledge_base.search("oolong oxidised", "t1", limit=1)
    assert "Oolong" in tea[0].content
    assert all("47 milligrams" not in h.content for h in
               await knowledge_base.search("caffeine in black tea", "t1", limit=8))


async def test_tenants_are_isolated(knowledge_base: Any, corpus: Path) -> None:
    await knowledge_base.index([corpus / "cats.md"], "alpha")
    assert await knowledge_base.search("cats sleep", "beta") == []
    assert (await knowledge_base.search("cats sleep", "alpha"))[0].title == "Cats"


async def test_missing_path_is_a_clear_error(knowledge_base: Any, tmp_path: Path) -> None:
    with pytest.raises(IndexingError, match=r"no such file or directory: .*nope"):
        await knowledge_base.index([tmp_path / "nope"], "t1")


async def test_bad_files_are_skipped_with_a_reason(
    sqlite_engine: Any, chroma: Any, embedder: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nOctopuses have three hearts and blue blood.")
    (folder / "binary.txt").write_bytes(b"\x00\xff\x00\xfe" * 1000)
    (folder / "huge.txt").write_text("word " * 300_000)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n garbage")
    (folder / "image.png").write_bytes(b"\x89PNG")
    (folder / "dangling.md").symlink_to(folder / "gone.md")
    settings = KnowledgeBaseSettings(max_file_mb=1)
    kb = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, settings)
    report = await kb.index([folder], "t1")
    skipped = {Path(p).name: reason for p, reason in report.skipped}
    assert [Path(p).name for p in report.added] == ["good.md"]
    assert "binary" in skipped["binary.txt"]
    assert "larger than 1" in skipped["huge.txt"]
    assert "PDF" in skipped["broken.pdf"]
    assert "image.png" not in skipped  # unsupported types inside a folder are ignored silently
    assert "unreadable" in skipped["dangling.md"]
    explicit = await kb.index([folder / "image.png"], "t1")
    assert "unsupported file type" in explicit.skipped[0][1]


class _FailingEmbedder:
    """The real embedder, stopped (as by a crash) after a number of calls."""

    def __init__(self, inner: Any, calls_before_failure: int) -> None:
        self._inner = inner
        self._left = calls_before_failure
        self.name = inner.name

    def embed(self, texts: Any) -> np.ndarray:
        if self._left == 0:
            raise KeyboardInterrupt("simulated interruption")
        self._left -= 1
        return self._inner.embed(texts)


async def test_interrupted_index_leaves_a_consistent_store(
    sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path, kb_settings: Any
) -> None:
    first = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, kb_settings)
    await first.index([corpus], "t1")
    for name in ("cats.md", "tea.txt"):
        path = corpus / name
        path.write_text(path.read_text() + "\n\nAn added closing line about updates.\n")
    catalogue = KnowledgeCatalogue(sqlite_engine)
    broken = KnowledgeBase(catalogue, chroma, _FailingEmbedder(embedder, 1), kb_settings)
    with pytest.raises(KeyboardInterrupt):
        await broken.index([corpus], "t1")
    # Search still answers from complete files only, and no orphan vectors leak through.
    fresh = KnowledgeBase(catalogue, chroma, embedder, kb_settings)
    catalogued = {passage.id for passage in await catalogue.passages("t1")}
    for hit in await fresh.search("closing line about updates", "t1", limit=10):
        assert hit.id in catalogued
    rerun = await fresh.index([corpus], "t1")
    # cats.md was finished before the interruption; only tea.txt is left to do.
    assert [Path(p).name for p in rerun.updated] == ["tea.txt"] and not rerun.added
    files, chunks = await fresh.stats("t1")
    assert files == 5
    assert await VectorCollection(chroma, "kb", "t1").count() == chunks


async def test_a_saved_bm25_index_is_reused_only_while_current(
    sqlite_engine: Any, chroma: Any, embedder: Any, kb_settings: Any, corpus: Path,
    tmp_path: Path
) -> None:
    import diskcache

    with diskcache.Cache(str(tmp_path / "index-cache")) as index_cache:
        first = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, kb_settings,
                              index_cache)
        await first.index([corpus], "t1")
        before = await first.search("Vesuvius Pompeii", "t1", limit=3, mode="bm25")
        generation, ids, _ = index_cache.get("bm25:t1")
        assert generation == await first.generation("t1") and len(ids) > 5

        second = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, kb_settings,
                               index_cache)
        again = await second.search("Vesuvius Pompeii", "t1", limit=3, mode="bm25")
        assert [s.id for s in again] == [s.id for s in before]

        (corpus / "tea.txt").write_text("Rooibos is a herbal infusion from South Africa.")
        await second.index([corpus], "t1")
        third = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, kb_settings,
                              index_cache)
        fresh = await third.search("rooibos herbal infusion", "t1", limit=1, mode="bm25")
        assert "Rooibos" in fresh[0].content


async def test_a_file_that_turns_unreadable_leaves_the_index(
    knowledge_base: Any, corpus: Path
) -> None:
    await knowledge_base.index([corpus], "t1")
    (corpus / "volcanoes.rst").write_bytes(b"\x00\x01corrupted\x00" * 100)
    report = await knowledge_base.index([corpus], "t1")
    assert [Path(p).name for p in report.removed] == ["volcanoes.rst"]
    assert "binary" in report.skipped[0][1]
    hits = await knowledge_base.search("Vesuvius Pompeii", "t1", limit=8)
    assert all(not (h.path or "").endswith("volcanoes.rst") for h in hits)


class _ReadingCatalogue(KnowledgeCatalogue):
    """Records which passages are read: all of a tenant's (a BM25 build), or some by id."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read_all: list[str] = []
        self.read_by_id: list[str] = []

    async def passages(self, tenant: str) -> list[Passage]:
        self.read_all.append(tenant)
        return await super().passages(tenant)

    async def passages_by_id(self, tenant: str, ids: Iterable[str]) -> dict[str, Passage]:
        found = await super().passages_by_id(tenant, ids)
        self.read_by_id.extend(found)
        return found


async def _assert_served_as_catalogued(hits: list[Any], catalogue: KnowledgeCatalogue,
                                       tenant: str) -> None:
    """Each hit carries its own chunk's text and its own file's path and title."""
    catalogued = {p.id: p for p in await catalogue.passages(tenant)}
    for hit in hits:
        passage = catalogued[hit.id]
        assert (hit.content, hit.path, hit.title, hit.document_id) == \
            (passage.text, passage.path, passage.title, passage.file_id)


async def test_a_process_with_a_current_cached_index_reads_only_its_hits_passages(
    any_engine: Any, chroma: Any, embedder: Any, corpus: Path, tmp_path: Path
) -> None:
    import diskcache

    kb_settings = KnowledgeBaseSettings(candidates=3)  # 10 chunks: fewer than all are hits
    with diskcache.Cache(str(tmp_path / "index-cache")) as index_cache:
        first = KnowledgeBase(KnowledgeCatalogue(any_engine), chroma, embedder, kb_settings,
                              index_cache)
        await first.index([corpus], "t1")
        before = await first.search("Which city did Mount Vesuvius bury?", "t1", limit=3)

        catalogue = _ReadingCatalogue(any_engine)
        fresh = KnowledgeBase(catalogue, chroma, embedder, kb_settings, index_cache)
        again = await fresh.search("Which city did Mount Vesuvius bury?", "t1", limit=3)
        assert [h.id for h in again] == [h.id for h in before]
        assert Path(again[0].path or "").name == "volcanoes.rst"
        assert catalogue.read_all == []
        assert {h.id for h in again} <= set(catalogue.read_by_id)
        assert len(set(catalogue.read_by_id)) < (await fresh.stats("t1")).chunks
        await _assert_served_as_catalogued(again, catalogue, "t1")


async def test_passages_served_by_id_are_the_reindexed_ones(
    any_engine: Any, chroma: Any, embedder: Any, kb_settings: Any, corpus: Path,
    tmp_path: Path
) -> None:
    import diskcache

    catalogue = KnowledgeCatalogue(any_engine)
    with diskcache.Cache(str(tmp_path / "index-cache")) as index_cache:
        kb = KnowledgeBase(catalogue, chroma, embedder, kb_settings, index_cache)
        await kb.index([corpus], "t1")
        assert "47 milligrams" in (await kb.search("caffeine in black tea", "t1"))[0].content
        (corpus / "tea.txt").write_text("# Green tea\n\nA cup of green tea has about 28 "
                                        "milligrams of caffeine.\n")
        await kb.index([corpus], "t1")
        await kb.search("caffeine in tea", "t1")  # the stale corpus answers; rebuilt behind
        rebuild = kb.corpora.rebuild_of("t1")
        if rebuild is not None:
            await rebuild
        for searcher in (kb, KnowledgeBase(catalogue, chroma, embedder, kb_settings,
                                           index_cache)):
            hits = await searcher.search("caffeine in tea", "t1", limit=8)
            assert "28 milligrams" in hits[0].content
            assert all("47 milligrams" not in h.content for h in hits)
            await _assert_served_as_catalogued(hits, catalogue, "t1")


async def test_a_tenant_never_gets_another_tenants_rows_of_the_same_file(
    any_engine: Any, chroma: Any, embedder: Any, kb_settings: Any, corpus: Path
) -> None:
    """Two tenants that index the same file hold chunks of the same ids. One tenant's rows
    go (its vectors left, as by an index run stopped in between): its loaded corpus still
    ranks them, and the other tenant's rows of those ids must not stand in for them."""
    from core.retrieval.kb.indexer import file_id_of

    catalogue = KnowledgeCatalogue(any_engine)
    kb = KnowledgeBase(catalogue, chroma, embedder, kb_settings)
    for tenant in ("alpha", "beta"):
        await kb.index([corpus], tenant)
    question = "How many hours a day do cats sleep?"
    alpha = await kb.search(question, "alpha")
    beta = await kb.search(question, "beta")
    assert Path(alpha[0].path or "").name == "cats.md" and alpha[0].id == beta[0].id

    path = alpha[0].path or ""
    await catalogue.forget_file("alpha", path, file_id_of(path), worker="")
    for mode in ("hybrid", "bm25", "dense"):
        assert all(Path(h.path or "").name != "cats.md"
                   for h in await kb.search(question, "alpha", mode=mode)), mode
    hits = await kb.search(question, "beta")
    assert Path(hits[0].path or "").name == "cats.md"
    await _assert_served_as_catalogued(hits, catalogue, "beta")


async def test_a_cached_index_over_other_ids_is_rebuilt(
    sqlite_engine: Any, chroma: Any, embedder: Any, kb_settings: Any, corpus: Path,
    tmp_path: Path
) -> None:
    """A cached index of the right generation but other ids (another store's, or one laid
    out in another order) would map its documents to the wrong passages."""
    import diskcache

    with diskcache.Cache(str(tmp_path / "index-cache")) as index_cache:
        first = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder,
                              kb_settings, index_cache)
        await first.index([corpus], "t1")
        before = await first.search("Vesuvius Pompeii", "t1", limit=3, mode="bm25")
        generation, ids, bm25 = index_cache.get("bm25:t1")
        index_cache.set("bm25:t1", (generation, ids[::-1], bm25))

        catalogue = _ReadingCatalogue(sqlite_engine)
        fresh = KnowledgeBase(catalogue, chroma, embedder, kb_settings, index_cache)
        again = await fresh.search("Vesuvius Pompeii", "t1", limit=3, mode="bm25")
        assert [h.id for h in again] == [h.id for h in before]
        assert catalogue.read_all == ["t1"] and index_cache.get("bm25:t1")[1] == ids


async def test_two_index_runs_over_the_same_new_files_both_finish_and_agree(
    any_engine: Any, chroma: Any, embedder: Any, kb_settings: Any, corpus: Path
) -> None:
    """Two runs at once (an upload and a chat file, two workers) over the same new files:
    neither fails, and the catalogue and the vectors hold each file once."""
    import asyncio

    catalogue = KnowledgeCatalogue(any_engine)
    runs = [KnowledgeBase(catalogue, chroma, embedder, kb_settings) for _ in range(2)]
    reports = await asyncio.gather(*(kb.index([corpus], "t1") for kb in runs))
    assert all(not report.skipped for report in reports)
    # each file is stored once; the run that waited for it finds it already there
    assert sum(len(r.added) for r in reports) == sum(len(r.unchanged) for r in reports) == 5
    passages = await catalogue.passages("t1")
    from core.retrieval.vectors import TenantCollections

    vectors = await TenantCollections(chroma, "kb")("t1").ids()
    assert sorted(p.id for p in passages) == sorted(vectors)
    assert tuple(await runs[0].stats("t1")) == (5, len(passages))
    top = (await runs[1].search("Which city did Mount Vesuvius bury?", "t1", limit=1))[0]
    assert Path(top.path or "").name == "volcanoes.rst"
