"""The answer page in a real browser: Debian's chromium, driven by Playwright (no browser is
downloaded). A running job's page shows its stages as they arrive, then the answer with its
sources; a citation lands on its source; feedback works, one rating per browser across
reloads, and the page offers no retry (its token cannot); a hostile source title is text.
Screenshots at desktop and phone widths are saved under test-artifacts/screenshots."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from core.store.database import open_database
from core.store.feedback import FeedbackStore, Rating
from tests.support import PROJECT
from tests.support.api_harness import TENANT, RunningApi, api_settings, running_api
from tests.support.fake_web import Article, FakeWeb, slow_wikipedia
from tests.support.services import skip_or_fail

pytestmark = pytest.mark.system

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
SCREENSHOTS = Path(os.environ.get("RESEARCHBOT_TEST_ARTIFACTS",
                                  PROJECT / "test-artifacts")
                   ) / "screenshots"
HOSTILE_TITLE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> Otters'
OTTERS = f"""# {HOSTILE_TITLE}

Sea otters hold hands while they sleep so that they do not drift apart on the water. A group
of resting otters is called a raft.

## Food

Sea otters eat sea urchins, crabs and clams, and use stones as tools to crack the shells.
"""
QUESTION = "Why do sea otters hold hands while they sleep?"
WIKIPEDIA = "/w/api.php"


@pytest.fixture
async def store(tmp_path: Path, served_store: Path, embedder: Any, kb_settings: Any) -> Path:
    """The indexed test corpus plus a document whose title is an HTML attack."""
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.retrieval.vectors import open_chroma
    from core.store.catalogue import KnowledgeCatalogue

    data = served_store
    docs = tmp_path / "otters"
    docs.mkdir()
    (docs / "otters.md").write_text(OTTERS, encoding="utf-8")
    engine = await open_database(api_settings(data).store_url)
    chroma = open_chroma(data / "chroma", None)
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder, kb_settings)
    await knowledge_base.index([docs], TENANT)
    chroma.close()
    await engine.dispose()
    return data


@pytest.fixture
async def slow_web() -> AsyncIterator[FakeWeb]:
    """Wikipedia, whose calls a test holds while it looks at a running job's page."""
    async with slow_wikipedia(article=Article(
            "Otter", "Sea otters sleep floating on their backs.",
            "https://en.wikipedia.org/wiki/Sea_otter")) as web:
        yield web


@pytest.fixture
async def api(store: Path, slow_web: FakeWeb) -> AsyncIterator[RunningApi]:
    # Wikipedia may be held past the usual 10 s: on a busy machine a browser can take that
    # long to show the running page, and the search must still be waiting when it does.
    settings = api_settings(store, pipeline={"local_only": False}, sources={
        "wikipedia_api": f"{slow_web.base}/w/api.php", "arxiv": False, "pubmed": False,
        "cache_ttl_hours": 0, "fetch_pages": 0, "timeout_s": 90})
    async with running_api(settings) as running:
        yield running


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    if not _have_chromium():
        skip_or_fail(f"no {CHROMIUM} (apt-get install chromium)")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        await launched.close()


def _have_chromium() -> bool:
    return os.access(CHROMIUM, os.X_OK)


async def _finished(api: RunningApi, job: dict[str, Any]) -> None:
    """Wait for the job's end by reading its event stream to the result."""
    async with api.client() as client, client.stream("GET", job["links"]["events"]) as stream:
        async for _ in stream.aiter_lines():
            pass


async def _ask(api: RunningApi, question: str = QUESTION) -> dict[str, Any]:
    async with api.client() as client:
        response = await client.post("/v1/research", json={"question": question})
    assert response.status_code == 202
    body: dict[str, Any] = response.json()
    return body


async def _shot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


async def test_a_running_job_page_shows_progress_then_the_answer(
        api: RunningApi, browser: Any, slow_web: FakeWeb) -> None:
    slow_web.hold(WIKIPEDIA)  # Wikipedia answers once the test has looked
    job = await _ask(api)
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    await page.goto(api.url + job["links"]["page"])
    assert await page.locator("body").get_attribute("data-running") == "yes"
    # stages arrive over the event stream while the search is held back
    await page.locator("#stages li[data-stage='search']").wait_for(timeout=30_000)
    assert await page.locator("#answer").count() == 0
    assert await page.locator("#actions").is_hidden()  # no rating while it runs
    assert await page.locator("#status").inner_text() == "Researching"
    searching = await page.locator("#stages li[data-stage='search'] .message").inner_text()
    assert searching.startswith("Round 1/2: searching the knowledge base: '")
    assert f"Wikipedia: '{QUESTION}'" in searching  # each source with the query it is sent
    await _shot(page, "answer-page-running-desktop.png")
    slow_web.release(WIKIPEDIA)  # the search may finish now

    await page.locator("#answer").wait_for(timeout=30_000)  # the page reloads with it
    assert await page.locator("#question").inner_text() == QUESTION
    confidence = page.locator("#confidence")
    assert (await confidence.inner_text()).strip() in (
        "High confidence", "Medium confidence", "Low confidence")
    assert "confidence-" in (await confidence.get_attribute("class") or "")
    answer = await page.locator("#answer").inner_text()
    assert "hold hands" in answer
    assert await page.locator("#progress").is_hidden()
    assert await page.locator("#actions").is_visible()

    # the hostile title is shown as text and ran nothing
    sources = await page.locator("#sources").inner_text()
    assert "<script>window.pwned = 1</script>" in sources
    assert await page.evaluate("window.pwned") is None
    assert await page.locator("#sources script, #sources img").count() == 0
    await _shot(page, "answer-page-desktop.png")

    # a citation lands on its numbered source
    cite = page.locator("a.cite").first
    target = (await cite.get_attribute("href")) or ""
    assert target.startswith("#source-")
    await page.locator(target).evaluate("e => window.scrollTo(0, 0)")
    await cite.click()
    assert await page.evaluate("location.hash") == target
    box = await page.locator(target).bounding_box()
    viewport = await page.evaluate("[window.innerHeight, window.scrollY]")
    assert box is not None and 0 <= box["y"] < viewport[0]
    assert await page.locator(f"{target}:target").count() == 1

    # feedback, stored with the job
    await page.locator("#comment").fill("clear and cited")
    await page.locator("button.rate[data-rating='up']").click()
    await page.locator("#notice", has_text="Thanks").wait_for(timeout=10_000)
    engine = await open_database(api.settings.store_url)
    stored = await FeedbackStore(engine).for_job(job["job_id"])
    await engine.dispose()
    assert [(f.channel, f.rating, f.comment) for f in stored] == \
        [("web", Rating.UP, "clear and cited")]
    assert errors == []
    await context.close()


async def test_a_browser_rates_once_however_often_it_reloads_and_cannot_retry(
        api: RunningApi, browser: Any) -> None:
    job = await _ask(api)
    await _finished(api, job)
    readers = []
    for _ in range(2):  # two browsers: two raters
        context = await browser.new_context()
        page = await context.new_page()
        for rating in ("up", "down", "up"):  # a reload between ratings keeps the browser's id
            await page.goto(api.url + job["links"]["page"])
            await page.locator("#answer").wait_for()
            assert await page.locator("#retry").count() == 0  # the token cannot retry
            await page.locator(f"button.rate[data-rating='{rating}']").click()
            await page.locator("#notice", has_text="Thanks").wait_for(timeout=10_000)
            await page.locator("#notice").evaluate("e => e.textContent = ''")
        readers += [c["value"] for c in await context.cookies() if c["name"] == "rb_reader"]
        await context.close()
    engine = await open_database(api.settings.store_url)
    stored = await FeedbackStore(engine).for_job(job["job_id"])
    await engine.dispose()
    assert len(set(readers)) == 2
    assert sorted(f.rater for f in stored) == sorted(f"web:{r}" for r in readers)
    assert [f.rating for f in stored] == [Rating.UP, Rating.UP]


async def test_the_page_reads_on_a_phone(api: RunningApi, browser: Any) -> None:
    job = await _ask(api)
    await _finished(api, job)
    context = await browser.new_context(viewport={"width": 390, "height": 844},
                                        device_scale_factor=2, is_mobile=True, has_touch=True)
    page = await context.new_page()
    await page.goto(api.url + job["links"]["page"])
    await page.locator("#answer").wait_for()
    overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0  # no sideways scrolling
    size = await page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('#answer p')).fontSize)")
    assert size >= 16
    await _shot(page, "answer-page-phone.png")
    await context.close()


async def test_a_wrong_token_shows_a_plain_not_found_page(api: RunningApi, browser: Any) -> None:
    job = await _ask(api)
    context = await browser.new_context()
    page = await context.new_page()
    response = await page.goto(api.url + f"/jobs/{job['job_id']}?token=0123")
    assert response is not None and response.status == 404
    assert "No such answer" in await page.locator("h1").inner_text()
    await context.close()


async def test_how_this_was_researched_unfolds_under_the_answer(
        api: RunningApi, browser: Any) -> None:
    job = await _ask(api)
    await _finished(api, job)
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    await page.goto(api.url + job["links"]["page"])
    await page.locator("#answer").wait_for()
    trace = page.locator("details#trace")
    assert await trace.get_attribute("open") is None  # folded until asked for
    assert await page.locator("#trace .rounds").is_hidden()
    await page.locator("#trace summary").click()
    assert await page.locator("#trace .rounds").is_visible()
    shown = await trace.inner_text()
    assert "How this was researched" in shown
    assert "of 2 search rounds" in shown
    assert "found what it looked for" in shown
    assert await page.locator("#stopped").get_attribute("data-stopped") == "completed"
    assert await page.locator("#trace .checklist li.satisfied").count() == 1
    assert f"the knowledge base: “{QUESTION}” — " in shown
    assert f"Wikipedia: “{QUESTION}” — " in shown  # this fake Wikipedia is too slow: failed
    assert "Queries: the knowledge base 2, Wikipedia 2 · " in shown
    await _shot(page, "answer-page-trace-desktop.png")
    await context.close()
