"""`researchbot index URL`: a page, or a site crawled under its path (links and the sitemap,
robots.txt obeyed), indexed under its URL and cited by it; indexed again, unchanged pages are
skipped, changed ones replaced and vanished ones removed; a private address is refused unless
trusted (sources.trusted_pages), in one line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support import researchbot
from tests.support.fake_web import FakeWeb

pytestmark = pytest.mark.system

HTML = "text/html; charset=utf-8"


def _page(title: str, body: str, links: tuple[str, ...] = ()) -> tuple[bytes, str]:
    anchors = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
    return (f"<html><head><title>{title}</title></head><body><nav><ul>{anchors}</ul></nav>"
            f"<main><article><h1>{title}</h1><p>{body}</p></article></main></body></html>"
            ).encode(), HTML


@pytest.fixture
async def site() -> AsyncIterator[FakeWeb]:
    web = FakeWeb()
    web.pages.update({
        "/docs/index.html": _page("Handbook", "Welcome to the team handbook. It explains "
                                  "how the office and the on-call rota work.",
                                  ("a.html", "/docs/b.html#top", "/private/secret.html",
                                   "/other/x.html", "https://elsewhere.example/")),
        "/docs/a.html": _page("Office hours", "The office opens at seven in the morning "
                              "and closes at eight in the evening on weekdays."),
        "/docs/b.html": _page("On-call rota", "The on-call engineer changes every Tuesday "
                              "at noon, and hands over with a written summary."),
        "/docs/c.html": _page("Parking", "Visitors park on level two of the garage behind "
                              "the building, with a ticket from reception."),
        "/private/secret.html": _page("Secret", "The vault code is 4711."),
        "/other/x.html": _page("Elsewhere", "A page outside the handbook's folder."),
    })
    web.pages["/sitemap.xml"] = (
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>BASE/docs/c.html</loc></url><url><loc>BASE/other/x.html</loc></url>"
        b"</urlset>", "application/xml")
    await web.start()
    body, kind = web.pages["/sitemap.xml"]
    web.pages["/sitemap.xml"] = (body.replace(b"BASE", web.base.encode()), kind)
    try:
        yield web
    finally:
        await web.stop()


async def _cli(*args: str, trusted: str = "") -> tuple[int, str, str]:
    env = {**os.environ, "RESEARCHBOT_SOURCES__TRUSTED_PAGES": json.dumps(
        [trusted] if trusted else [])}
    done = await researchbot.run_async(*args, env=env, timeout=180)
    return done.returncode, done.stdout, done.stderr


async def test_a_site_is_crawled_indexed_cited_and_refreshed(clean_env: Path,
                                                              site: FakeWeb) -> None:
    start = f"{site.base}/docs/index.html"
    code, out, err = await _cli("index", start, "--crawl", "20", trusted=site.base)
    assert code == 0, err
    assert "4 added" in out, out + err
    code, out, _ = await _cli("documents", "list", "--json")
    listed = json.loads(out)
    assert sorted(d["path"] for d in listed) == \
        [f"{site.base}/docs/{name}.html" for name in ("a", "b", "c", "index")]
    assert {d["origin"] for d in listed} == {"url"}
    assert "/private/secret.html" not in site.hit_paths()  # robots.txt said no

    code, out, err = await _cli("ask", "When does the on-call engineer change?", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["sources"][0]["path"] == f"{site.base}/docs/b.html"
    assert "Tuesday" in answer["answer"]["summary"] + answer["answer"]["detail"]

    site.pages["/docs/a.html"] = _page("Office hours", "The office now opens at nine in "
                                       "the morning and closes at six in the evening.")
    del site.pages["/docs/b.html"]
    code, out, err = await _cli("index", start, "--crawl", "20", trusted=site.base)
    assert code == 0, err
    assert "1 updated, 2 unchanged, 1 removed" in out, out + err
    code, out, _ = await _cli("documents", "list", "--json")
    assert f"{site.base}/docs/b.html" not in {d["path"] for d in json.loads(out)}


async def test_one_page_alone_and_refusals_in_one_line(clean_env: Path, site: FakeWeb) -> None:
    code, out, err = await _cli("index", f"{site.base}/docs/a.html", trusted=site.base)
    assert code == 0 and "1 added" in out, out + err
    code, out, err = await _cli("index", f"{site.base}/docs/index.html")  # not trusted
    assert code == 1 and "refused" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = await _cli("index", f"{site.base}/private/secret.html",
                                trusted=site.base)
    assert code == 1 and "robots.txt" in err
    code, out, err = await _cli("index", f"{site.base}/docs/nothing.html", trusted=site.base)
    assert code == 1 and "HTTP 404" in err


async def test_refresh_reads_the_site_again_and_forgets_a_removed_one(clean_env: Path,
                                                                    site: FakeWeb) -> None:
    start = f"{site.base}/docs/index.html"
    code, out, err = await _cli("index", start, "--crawl", "20", trusted=site.base)
    assert code == 0 and "4 added" in out, out + err
    site.pages["/docs/index.html"] = _page("Handbook", "Welcome to the team handbook. It "
                                           "explains the office and the lunch menu.",
                                           ("a.html", "lunch.html"))
    site.pages["/docs/lunch.html"] = _page("Lunch", "Soup is served every Friday at noon.")
    site.pages["/docs/a.html"] = _page("Office hours", "The office opens at nine now.")
    del site.pages["/docs/c.html"]
    code, out, err = await _cli("refresh", trusted=site.base)
    assert code == 0, err
    # b.html is no longer linked, but still there: kept; c.html (from the sitemap) is gone
    assert f"{start} (local): 1 added, 2 updated, 0 unchanged, 1 removed" in out, out + err
    code, out, _ = await _cli("documents", "list", "--json")
    listed = {d["path"]: d for d in json.loads(out)}
    assert set(listed) == {f"{site.base}/docs/{name}.html"
                           for name in ("index", "a", "b", "lunch")}
    code, out, err = await _cli("documents", "remove", listed[start]["document_id"])
    assert code == 0, err
    code, out, err = await _cli("refresh", trusted=site.base)
    assert code == 0 and "No web pages or sites to refresh" in out, out + err


async def test_long_running_processes_refresh_due_sites_once_each(
    tmp_path: Path, sqlite_engine: Any, chroma: Any, embedder: Any, site: FakeWeb,
) -> None:
    """Two processes (two knowledge bases over one store) find a site due: one reads it.
    The periodic refresh of serve, the bots and workers picks up a changed page."""
    from bot.config import Settings
    from bot.wiring import open_page_fetcher, refresh_sites_periodically
    from core.config import KnowledgeBaseSettings
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.store.catalogue import KnowledgeCatalogue
    from core.store.database import kb_sites
    from core.web.crawl import crawl

    settings = Settings(data_dir=tmp_path, sources={"trusted_pages": [site.base]},
                        knowledge_base={"refresh_hours": 1 / 3600})
    bases = [KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder,
                           KnowledgeBaseSettings()) for _ in range(2)]
    start = f"{site.base}/docs/a.html"
    async with open_page_fetcher(settings) as fetcher:
        read = await crawl(fetcher, start)
        assert (await bases[0].index_pages(read.pages, read.failed, "t1")).added == [start]
        await bases[0].add_site("t1", start, 1, 0)

        async def make_due() -> None:
            async with sqlite_engine.begin() as connection:
                await connection.execute(kb_sites.update().values(
                    refreshed_at=datetime(2020, 1, 1, tzinfo=UTC)))

        await make_due()
        runs = await asyncio.gather(*(base.refresh_sites(fetcher, timedelta(hours=1))
                                      for base in bases))
        assert sorted(len(done) for done in runs) == [0, 1]

    site.pages["/docs/a.html"] = _page("Office hours", "The office opens at nine thirty "
                                       "on weekdays since the spring.")
    await make_due()
    refreshing = asyncio.create_task(refresh_sites_periodically(settings, bases[1], 0.1))
    try:
        async with asyncio.timeout(30):
            while True:
                hits = await bases[0].search("When does the office open?", "t1", limit=1)
                if hits and "nine thirty" in hits[0].snippet:
                    break
                await asyncio.sleep(0.2)
    finally:
        refreshing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await refreshing
