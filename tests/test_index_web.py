"""`researchbot index URL`: a page, or a site crawled under its path (links and the sitemap,
robots.txt obeyed), indexed under its URL and cited by it; indexed again, unchanged pages are
skipped, changed ones replaced and vanished ones removed; a private address is refused unless
trusted (sources.trusted_pages), in one line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fake_web import FakeWeb

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
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_a_site_is_crawled_indexed_cited_and_refreshed(clean_env: Path,
                                                              site: FakeWeb) -> None:
    start = f"{site.base}/docs/index.html"
    code, out, err = await _cli("index", start, "--crawl", "20", trusted=site.base)
    assert code == 0, err
    assert "4 added" in out, out + err
    code, out, _ = await _cli("documents", "list", "--json")
    paths = sorted(d["path"] for d in json.loads(out))
    assert paths == [f"{site.base}/docs/{name}.html" for name in ("a", "b", "c", "index")]
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
