"""The source registry, the composition root and `researchbot check` agree: every registered
source has a check row named after it, probed at its own API, and open_web opens exactly the
sources the settings switch on, each searching the fake APIs on 127.0.0.1."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import load_settings
from bot.doctor import check_sources
from bot.wiring import open_web
from core.sources.protocol import SearchQuery
from core.sources.registry import SOURCES
from tests.support.fake_web import Article, FakeWeb, point_sources_at

pytestmark = pytest.mark.integration

# no response cache, no pages read: each check and search reaches the fake
QUIET = {"SOURCES__CACHE_TTL_HOURS": "0", "SOURCES__FETCH_PAGES": "0"}


@pytest.fixture
async def web() -> AsyncIterator[FakeWeb]:
    server = FakeWeb()
    await server.start()
    server.articles = [Article(title="Cat sleep", text="Cats sleep sixteen hours a day.",
                               url=f"{server.base}/cats/1", pmid="38000001")]
    yield server
    await server.stop()


def test_every_source_module_is_registered_once() -> None:
    names = [spec.name for spec in SOURCES]
    assert names == ["wikipedia", "arxiv", "pubmed", "searxng", "tavily", "exa"]
    assert all(spec.setting.startswith(("sources.", "endpoints.")) for spec in SOURCES)


async def test_check_has_a_row_for_every_registered_source_probing_its_api(
        clean_env: Path, web: FakeWeb, monkeypatch: pytest.MonkeyPatch) -> None:
    point_sources_at(web, monkeypatch, **QUIET)
    rows = await check_sources(load_settings(), timeout_s=5)
    assert [(row.component, row.setting) for row in rows] == [
        (f"source {spec.name}", spec.setting) for spec in SOURCES]
    assert all(row.status == "ok" for row in rows), rows
    settings = load_settings()
    for spec in SOURCES:
        probe = spec.probe(settings.sources)
        assert probe.url.startswith(web.base)


@pytest.mark.parametrize("switched_off", [
    {"SOURCES__ARXIV": "false", "SOURCES__SEARXNG_URL": "", "SOURCES__TAVILY_API_KEY": "",
     "SOURCES__EXA_API_KEY": ""},
    {"SOURCES__WIKIPEDIA": "false", "SOURCES__PUBMED": "false"},
])
async def test_open_web_opens_exactly_the_sources_check_calls_enabled(
        clean_env: Path, web: FakeWeb, monkeypatch: pytest.MonkeyPatch, embedder: Any,
        switched_off: dict[str, str]) -> None:
    point_sources_at(web, monkeypatch, **QUIET, **switched_off)
    settings = load_settings()
    rows = {row.component: row for row in await check_sources(settings, timeout_s=5)}
    on = {spec.name for spec in SOURCES if rows[f"source {spec.name}"].status == "ok"}
    off = {spec.name for spec in SOURCES if rows[f"source {spec.name}"].status == "off"}
    assert on and off and on | off == {spec.name for spec in SOURCES}
    async with open_web(settings, embedder) as opened:
        assert set(opened.sources) == on
        for name, source in opened.sources.items():
            assert source.name == name
            found = await source.search(SearchQuery(text="cats sleep", tenant="t", limit=3))
            assert isinstance(found, list)


async def test_nothing_is_opened_or_probed_for_local_only_tenants(
        clean_env: Path, web: FakeWeb, monkeypatch: pytest.MonkeyPatch, embedder: Any) -> None:
    point_sources_at(web, monkeypatch, **QUIET, PIPELINE__LOCAL_ONLY="true")
    settings = load_settings()
    rows = await check_sources(settings, timeout_s=5)
    assert {row.status for row in rows} == {"off"} and len(rows) == len(SOURCES)
    async with open_web(settings, embedder) as opened:
        assert opened.sources == {} and opened.pages is None
    assert web.hit_paths() == []
