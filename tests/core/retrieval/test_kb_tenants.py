"""Many tenants in one knowledge base: independent rebuilds, stale-while-revalidate, bounded
memory. Builds are held with events, never timed; `PROMPTLY` only bounds a search that must
not wait for a held build (with one lock for every tenant it would wait forever)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from core.config import KnowledgeBaseSettings
from core.retrieval.kb.corpus import Corpus
from core.retrieval.kb.indexer import file_id_of
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.retrieval.vectors import VectorCollection
from core.store.catalogue import KnowledgeCatalogue, Passage
from tests.support.clock import FakeClock

pytestmark = pytest.mark.unit

PROMPTLY = 20.0

CATS = "# Cats\n\nDomestic cats sleep between 12 and 16 hours a day.\n"
TEA = "# Tea\n\nA cup of black tea has about 47 milligrams of caffeine.\n"
MOON = "# Moon\n\nThe gravity of the Moon raises the tides of the oceans.\n"


class _HeldCatalogue(KnowledgeCatalogue):
    """Records every read of a tenant's passages (each is a corpus build); a read for a tenant
    in `held` waits for the test, one for a tenant in `failing` fails."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.builds: list[str] = []
        self.held: dict[str, asyncio.Event] = {}
        self.entered: dict[str, asyncio.Event] = {}
        self.failing: set[str] = set()

    async def passages(self, tenant: str) -> list[Passage]:
        self.builds.append(tenant)
        if tenant in self.held:
            self.entered[tenant].set()
            await self.held[tenant].wait()
        if tenant in self.failing:
            raise OSError("the catalogue went away")
        return await super().passages(tenant)


class _HeldKnowledgeBase(KnowledgeBase):
    """A knowledge base over a `_HeldCatalogue`, with its records at hand."""

    def __init__(self, catalogue: _HeldCatalogue, *args: Any, **kwargs: Any) -> None:
        super().__init__(catalogue, *args, **kwargs)
        self.catalogue = catalogue
        self.builds = catalogue.builds
        self.entered = catalogue.entered
        self.failing = catalogue.failing

    def hold(self, tenant: str) -> asyncio.Event:
        self.catalogue.entered[tenant] = asyncio.Event()
        self.catalogue.held[tenant] = asyncio.Event()
        return self.catalogue.held[tenant]


def _knowledge_base(engine: Any, chroma: Any, embedder: Any, **kwargs: Any
                    ) -> _HeldKnowledgeBase:
    settings = KnowledgeBaseSettings(**{k: v for k, v in kwargs.items() if k != "clock"})
    clock = {"clock": kwargs["clock"]} if "clock" in kwargs else {}
    return _HeldKnowledgeBase(_HeldCatalogue(engine), chroma, embedder, settings, **clock)


@pytest.fixture
def kb(sqlite_engine: Any, chroma: Any, embedder: Any) -> _HeldKnowledgeBase:
    return _knowledge_base(sqlite_engine, chroma, embedder)


async def _index(kb: KnowledgeBase, folder: Path, tenant: str, files: dict[str, str]) -> Path:
    _write(folder, files)
    await kb.index([folder], tenant)
    return folder


def _write(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


def _names(hits: list[Any]) -> set[str]:
    return {Path(h.path).name for h in hits}


def _running_rebuild(kb: KnowledgeBase, tenant: str) -> asyncio.Task[Corpus]:
    rebuild = kb.corpora.rebuild_of(tenant)
    assert rebuild is not None, "no rebuild running"
    return rebuild


async def test_a_rebuild_never_holds_up_another_tenants_search(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    await _index(kb, tmp_path / "a", "a", {"cats.md": CATS})
    await _index(kb, tmp_path / "b", "b", {"tea.md": TEA})
    release = kb.hold("a")
    first_of_a = asyncio.create_task(kb.search("How long do cats sleep?", "a"))
    await kb.entered["a"].wait()
    tea = await asyncio.wait_for(kb.search("caffeine in black tea", "b"), PROMPTLY)
    assert _names(tea) == {"tea.md"} and not first_of_a.done()
    release.set()
    assert _names(await first_of_a) == {"cats.md"}


async def test_concurrent_first_searches_share_one_build(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    await _index(kb, tmp_path / "a", "a", {"cats.md": CATS})
    release = kb.hold("a")
    searches = [asyncio.create_task(kb.search("cats sleep", "a")) for _ in range(10)]
    await kb.entered["a"].wait()
    release.set()
    assert all(_names(hits) == {"cats.md"} for hits in await asyncio.gather(*searches))
    assert kb.builds == ["a"]


async def test_a_changed_tenant_answers_from_its_loaded_corpus_until_the_rebuild_lands(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    folder = await _index(kb, tmp_path / "a", "a", {"cats.md": CATS})
    assert _names(await kb.search("cats sleep", "a")) == {"cats.md"}
    before = await kb.generation("a")
    release = kb.hold("a")
    await _index(kb, folder, "a", {"moon.md": MOON})

    searches = [kb.search("Moon gravity tides", "a") for _ in range(5)]
    stale = await asyncio.wait_for(asyncio.gather(*searches), PROMPTLY)
    assert all("moon.md" not in _names(hits) for hits in stale)
    # The answer cache keys on what searches answer from, so nothing found in the old
    # corpus is stored under the new generation.
    assert await kb.generation("a") == before
    await kb.entered["a"].wait()
    assert kb.builds == ["a", "a"]  # five searches, one rebuild

    rebuild = _running_rebuild(kb, "a")
    release.set()
    await rebuild
    fresh = await kb.search("Moon gravity tides", "a", limit=1)
    assert _names(fresh) == {"moon.md"} and await kb.generation("a") > before
    assert kb.builds == ["a", "a"]


async def test_the_search_after_an_index_run_finds_what_it_added(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    """A rebuild that lands within a second is waited for: the question asked right after
    `researchbot index` finds the new file, not only the one after it."""
    folder = await _index(kb, tmp_path / "a", "a", {"cats.md": CATS})
    assert _names(await kb.search("cats sleep", "a")) == {"cats.md"}
    await _index(kb, folder, "a", {"moon.md": MOON})
    assert "moon.md" in _names(await kb.search("Moon gravity tides", "a", limit=1))


async def test_a_removed_file_never_comes_back_from_a_stale_corpus(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    folder = await _index(kb, tmp_path / "a", "a", {"cats.md": CATS, "tea.md": TEA})
    assert "tea.md" in _names(await kb.search("caffeine in black tea", "a"))
    release = kb.hold("a")
    (folder / "tea.md").unlink()
    await kb.index([folder], "a")
    hits = await asyncio.wait_for(kb.search("caffeine in black tea", "a"), PROMPTLY)
    assert "tea.md" not in _names(hits)
    release.set()
    await _running_rebuild(kb, "a")


async def test_rows_deleted_before_their_vectors_are_not_returned(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    """An index run stopped between deleting a file's catalogue rows and its vectors: the
    stale corpus and the vector store both still have the passage; only the catalogue
    knows it is gone."""
    folder = await _index(kb, tmp_path / "a", "a", {"cats.md": CATS, "tea.md": TEA})
    assert "cats.md" in _names(await kb.search("cats sleep", "a"))
    release = kb.hold("a")
    path = str(folder.resolve() / "cats.md")
    await kb.catalogue.forget_file("a", path, file_id_of(path), worker="")
    assert await VectorCollection(kb.vectors, "kb", "a").count() == 2
    hits = await asyncio.wait_for(kb.search("cats sleep", "a"), PROMPTLY)
    assert "cats.md" not in _names(hits)
    release.set()
    await _running_rebuild(kb, "a")


async def test_a_failed_rebuild_keeps_the_loaded_corpus_and_is_tried_again(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    folder = await _index(kb, tmp_path / "a", "a", {"cats.md": CATS})
    await kb.search("cats sleep", "a")
    await _index(kb, folder, "a", {"moon.md": MOON})
    kb.failing.add("a")
    release = kb.hold("a")
    stale = await asyncio.wait_for(kb.search("cats sleep", "a"), PROMPTLY)
    assert _names(stale) == {"cats.md"}
    failed = _running_rebuild(kb, "a")
    release.set()
    with pytest.raises(OSError):
        await failed
    kb.failing.clear()
    release = kb.hold("a")
    stale = await asyncio.wait_for(kb.search("cats sleep", "a"), PROMPTLY)
    assert _names(stale) == {"cats.md"}
    retried = _running_rebuild(kb, "a")
    release.set()
    await retried
    assert _names(await kb.search("Moon gravity tides", "a", limit=1)) == {"moon.md"}


async def test_a_search_given_up_on_does_not_cancel_the_shared_build(
    kb: _HeldKnowledgeBase, tmp_path: Path
) -> None:
    await _index(kb, tmp_path / "a", "a", {"cats.md": CATS})
    release = kb.hold("a")
    given_up = asyncio.create_task(kb.search("cats sleep", "a"))
    await kb.entered["a"].wait()
    given_up.cancel()
    waiting = asyncio.create_task(kb.search("cats sleep", "a"))
    release.set()
    assert _names(await waiting) == {"cats.md"} and kb.builds == ["a"]
    assert given_up.cancelled()


async def test_at_most_max_loaded_tenants_stay_loaded(
    sqlite_engine: Any, chroma: Any, embedder: Any, tmp_path: Path
) -> None:
    kb = _knowledge_base(sqlite_engine, chroma, embedder, max_loaded_tenants=2)
    for tenant in "abc":
        await _index(kb, tmp_path / tenant, tenant, {"cats.md": CATS})
        await kb.search("cats sleep", tenant)
    assert kb.corpora.loaded_tenants() == ["b", "c"]
    await kb.search("cats sleep", "b")
    assert kb.builds == ["a", "b", "c"]  # b was still loaded
    await kb.search("cats sleep", "a")  # a was evicted: built again, c (least recent) goes
    assert kb.builds == ["a", "b", "c", "a"] and kb.corpora.loaded_tenants() == ["b", "a"]


async def test_a_tenant_idle_too_long_is_dropped(
    sqlite_engine: Any, chroma: Any, embedder: Any, tmp_path: Path
) -> None:
    clock = FakeClock(start=0.0)
    kb = _knowledge_base(sqlite_engine, chroma, embedder, tenant_idle_seconds=60,
                         clock=clock)
    for tenant in "ab":
        await _index(kb, tmp_path / tenant, tenant, {"cats.md": CATS})
    await kb.search("cats sleep", "a")
    clock.advance(30)
    await kb.search("cats sleep", "b")
    clock.advance(31)
    await kb.search("cats sleep", "b")
    assert kb.corpora.loaded_tenants() == ["b"]
    await kb.search("cats sleep", "a")
    assert kb.builds == ["a", "b", "a"]
