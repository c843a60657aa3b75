"""Adding documents through the HTTP API (a real client against the running server, every
response checked against its OpenAPI document): files uploaded and a web site crawled run as
jobs with progress on the job's event stream, are listed with who added them, and are cited
by the next answer; another tenant never sees them; whatever cannot be added is refused with
its status (413, 415, 422) and nothing is kept; with a queue, a worker adds them."""

from __future__ import annotations

import asyncio
import io
import json
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import docx
import httpx
import pytest

from bot.wiring import open_page_fetcher
from tests.support.api_harness import (
    OTHER_TENANT,
    TENANT,
    OpenApiSpec,
    RunningApi,
    api_settings,
    read_events,
    running_api,
    server_keys,
)
from tests.support.fake_web import FakeWeb

pytestmark = pytest.mark.integration

HTML = "text/html; charset=utf-8"
FACT = "The Zanzibar protocol rotates its signing keys every 41 days."
QUESTION = "How often does the Zanzibar protocol rotate its signing keys?"


def _docx(title: str, author: str, text: str) -> bytes:
    document = docx.Document()
    document.core_properties.title = title
    document.core_properties.author = author
    document.add_heading("Key rotation", level=1)
    document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _zip_bomb_docx() -> bytes:
    """A DOCX whose document part inflates a thousandfold."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"<w:document>" + b" " * 20_000_000)
    return out.getvalue()


def _page(title: str, body: str, links: tuple[str, ...] = ()) -> tuple[bytes, str]:
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return (f"<html><head><title>{title}</title></head><body><nav>{anchors}</nav><main>"
            f"<h1>{title}</h1><p>{body}</p></main></body></html>").encode(), HTML


@pytest.fixture
async def site() -> AsyncIterator[FakeWeb]:
    """A small site: robots.txt keeps /private/ out, a sitemap lists a page nothing links."""
    web = FakeWeb()
    web.pages.update({
        "/docs/index.html": _page("Handbook", "Welcome to the handbook of the lighthouse "
                                  "keepers' guild.", ("lamp.html", "/private/vault.html")),
        "/docs/lamp.html": _page("The lamp", "The lamp of the lighthouse is cleaned every "
                                 "Thursday at dawn by the junior keeper."),
        "/docs/boats.html": _page("Boats", "The guild's two rowing boats are kept in the "
                                  "north shed from October to March."),
        "/private/vault.html": _page("Vault", "The vault code is 4711."),
    })
    await web.start()
    web.pages["/sitemap.xml"] = (
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{web.base}/docs/boats.html</loc></url></urlset>".encode(),
        "application/xml")
    try:
        yield web
    finally:
        await web.stop()


@pytest.fixture
async def api(served_store: Path, site: FakeWeb) -> AsyncIterator[RunningApi]:
    settings = api_settings(served_store, sources={"trusted_pages": [site.base]},
                            knowledge_base={"max_file_mb": 1})
    async with running_api(settings) as running:
        yield running


async def _followed(client: httpx.AsyncClient, events_url: str) -> tuple[list[dict[str, Any]],
                                                                         dict[str, Any]]:
    """The job's progress events and its result, once it has ended."""
    progress: list[dict[str, Any]] = []
    async with client.stream("GET", events_url) as response:
        assert response.status_code == 200
        async for event in read_events(response):
            if event.get("event") == "progress":
                progress.append(json.loads(event["data"]))
            elif event.get("event") == "result":
                return progress, json.loads(event["data"])
    raise AssertionError("the stream closed without a result")


async def _ask(client: httpx.AsyncClient, question: str) -> dict[str, Any]:
    accepted = await client.post("/v1/research", json={"question": question})
    assert accepted.status_code == 202, accepted.text
    return (await _followed(client, accepted.json()["links"]["events"]))[1]


async def test_uploaded_files_are_indexed_listed_and_cited_per_tenant(api: RunningApi) -> None:
    async with api.client() as client:
        spec = OpenApiSpec((await client.get("/openapi.json")).json())
    async with server_keys(api) as keys:
        created, mine = await keys.create(TENANT)
        _, theirs = await keys.create(OTHER_TENANT)

    files = [("file", ("rotation.docx", _docx("Key rotation policy", "Ada Byron", FACT),
                       "application/octet-stream")),
             ("file", ("../../etc/passwd.md", b"# Cafeteria\n\nThe Quokka cafeteria serves "
                       b"lunch from 12:15 on weekdays.\n", "text/markdown")),
             ("file", ("broken.pdf", b"%PDF-1.4 this is not really a PDF", "application/pdf")),
             ("file", ("bomb.docx", _zip_bomb_docx(), "application/octet-stream"))]
    async with api.client(mine) as client:
        accepted = await client.post("/v1/documents", files=files)
        spec.check("POST", "/v1/documents", accepted)
        assert accepted.status_code == 202, accepted.text
        body = accepted.json()
        assert [d["name"] for d in body["documents"]] == \
            ["rotation.docx", "passwd.md", "broken.pdf", "bomb.docx"]
        assert {d["status"] for d in body["documents"]} == {"queued"}
        assert accepted.headers["location"] == f"/v1/jobs/{body['job_id']}"

        progress, result = await _followed(client, body["links"]["events"])
        assert progress[0]["kind"] == "queued" and progress[-1]["kind"] == "completed"
        assert any(e["stage"] == "index" and "rotation.docx" in e["message"] for e in progress)
        assert result["kind"] == "documents" and result["status"] == "completed"
        fates = {d["name"]: d for d in result["documents"]}
        assert fates["rotation.docx"]["status"] == "added"
        assert fates["rotation.docx"]["title"] == "Key rotation policy"
        assert fates["passwd.md"]["status"] == "added"
        assert fates["broken.pdf"]["status"] == "skipped"
        assert "not a readable PDF" in fates["broken.pdf"]["reason"]
        assert fates["bomb.docx"]["status"] == "skipped"
        assert "zip bomb" in fates["bomb.docx"]["reason"]
        assert [d["document_id"] for d in body["documents"]] == \
            [d["document_id"] for d in result["documents"]]

        listed = (await client.get("/v1/documents", params={"limit": 200})).json()
        uploaded = {d["path"]: d for d in listed["documents"] if d["origin"] == "upload"}
        assert set(uploaded) == {"upload:rotation.docx", "upload:passwd.md"}
        rotation = uploaded["upload:rotation.docx"]
        assert (rotation["title"], rotation["authors"], rotation["added_by"]) == \
            ("Key rotation policy", "Ada Byron", f"key:{created.id}")
        one = await client.get(f"/v1/documents/{rotation['document_id']}")
        spec.check("GET", "/v1/documents/{document_id}", one)

        answered = await _ask(client, QUESTION)
        assert "41 days" in answered["answer"]["summary"]
        assert any(s.get("path") == "upload:rotation.docx" for s in answered["sources"])

        again = await client.post("/v1/documents", files=files[:1])
        _, repeated = await _followed(client, again.json()["links"]["events"])
        assert [d["status"] for d in repeated["documents"]] == ["unchanged"]

    async with api.client(theirs) as client:  # another tenant: not there, not even its title
        assert (await client.get(f"/v1/documents/{rotation['document_id']}")).status_code \
            == 404
        theirs_listed = (await client.get("/v1/documents", params={"limit": 200})).json()
        assert not any(d["origin"] == "upload" for d in theirs_listed["documents"])
        other = await _ask(client, QUESTION)
        assert not any(s.get("path") == "upload:rotation.docx" for s in other["sources"])
        assert (await client.get(f"/v1/jobs/{body['job_id']}")).status_code == 404


async def test_a_site_added_by_url_is_crawled_within_robots_and_cited(api: RunningApi,
                                                                       site: FakeWeb) -> None:
    async with api.client() as client:
        spec = OpenApiSpec((await client.get("/openapi.json")).json())
        start = f"{site.base}/docs/index.html"
        accepted = await client.post("/v1/documents", json={"url": start,
                                                              "crawl": {"max_pages": 10}})
        spec.check("POST", "/v1/documents", accepted)
        assert accepted.status_code == 202, accepted.text
        progress, result = await _followed(client, accepted.json()["links"]["events"])
        added = sorted(d["name"] for d in result["documents"] if d["status"] == "added")
        assert added == [f"{site.base}/docs/{name}" for name in
                         ("boats.html", "index.html", "lamp.html")]
        assert not any("vault" in d["name"] for d in result["documents"]
                       if d["status"] == "added")
        assert any(e["stage"] == "index" for e in progress)
        listed = (await client.get("/v1/documents", params={"limit": 200})).json()
        urls = {d["path"] for d in listed["documents"] if d["origin"] == "url"}
        assert f"{site.base}/docs/boats.html" in urls

        answered = await _ask(client, "When is the lamp of the lighthouse cleaned?")
        assert "Thursday" in answered["answer"]["summary"]
        assert any(f"{site.base}/docs/lamp.html" in (s.get("url"), s.get("path"))
                   for s in answered["sources"]), answered["sources"]

        # A page of the site removed stays removed when the site is read again, until it
        # is asked for by its own URL.
        lamp = next(d for d in listed["documents"] if d["path"].endswith("/lamp.html"))
        assert (await client.delete(f"/v1/documents/{lamp['document_id']}")).status_code == 200
        knowledge_base = api.app.state.services.documents
        async with open_page_fetcher(api.settings) as fetcher:
            refreshed = await knowledge_base.refresh_sites(fetcher)
        assert [len(done.report.unchanged) for done in refreshed] == [2]
        assert (await client.get(f"/v1/documents/{lamp['document_id']}")).status_code == 404
        again = await client.post("/v1/documents", json={"url": f"{site.base}/docs/lamp.html"})
        _, readded = await _followed(client, again.json()["links"]["events"])
        assert [d["status"] for d in readded["documents"]] == ["added"]

        for url, why in ((f"{site.base}/private/vault.html", "robots.txt"),
                         ("http://10.1.2.3/handbook.html", "refused"),
                         ("http://localhost:9/x", "refused"),
                         ("file:///etc/passwd", "http")):
            refused = await client.post("/v1/documents", json={"url": url})
            spec.check("POST", "/v1/documents", refused)
            assert refused.status_code == 422, (url, refused.text)
            assert why in refused.json()["error"]["message"], refused.json()


async def test_what_cannot_be_added_is_refused_with_its_status_and_nothing_is_kept(
        api: RunningApi) -> None:
    async with api.client() as client:
        spec = OpenApiSpec((await client.get("/openapi.json")).json())
        before = (await client.get("/v1/documents", params={"limit": 200})).json()
        jobs_before = len((await client.get("/v1/jobs")).json()["jobs"])
        cases = [
            ({"files": [("file", ("big.txt", b"a " * 600_000, "text/plain"))]}, 413,
             "larger than the 1 MB"),
            ({"files": [("file", ("ok.md", b"# fine", "text/markdown")),
                        ("file", ("tool.exe", b"MZ\x90\x00", "application/octet-stream"))]},
             415, "cannot be read"),
            ({"files": [("file", ("empty.md", b"", "text/markdown"))]}, 400, "empty"),
            ({"files": [("other", ("a.md", b"# a", "text/markdown"))]}, 400, "field `file`"),
            ({"content": b"plain words", "headers": {"content-type": "text/plain"}}, 415,
             "multipart/form-data"),
            ({"json": {"url": "https://example.org/", "crawl": {"max_pages": 0}}}, 422,
             "max_pages"),
            ({"json": {"link": "https://example.org/"}}, 422, "url"),
            ({"content": b"a" * (22 * 2**20), "headers": {"content-type":
                                                           "multipart/form-data; boundary=x"}},
             413, "request body is larger"),
        ]
        for request, status, said in cases:
            response = await client.post("/v1/documents", **request)
            spec.check("POST", "/v1/documents", response)
            assert response.status_code == status, (request.get("json"), response.text)
            assert said in response.json()["error"]["message"], response.json()
        after = (await client.get("/v1/documents", params={"limit": 200})).json()
        assert after == before
        assert len((await client.get("/v1/jobs")).json()["jobs"]) == jobs_before
    async with server_keys(api) as keys:
        await keys.create(TENANT)
    async with api.client() as client:  # once a key exists, a key is needed
        response = await client.post("/v1/documents", json={"url": "https://example.org/"})
        assert response.status_code == 401


async def test_with_a_queue_a_worker_adds_the_files(served_store: Path, redis: Any) -> None:
    """The server only keeps the files and queues the job; a worker (in this process, as
    `researchbot worker` runs it) reads them from the job database and indexes them."""
    from bot.wiring import open_research
    from core.jobs.queue_worker import run_worker
    from tests.support.services import REDIS_URL

    settings = api_settings(served_store, redis={"url": REDIS_URL}, advanced={
        "queue": {"heartbeat_seconds": 10, "sweep_seconds": 1}})
    async with running_api(settings) as api, api.client() as client:
        accepted = await client.post("/v1/documents", files=[
            ("file", ("rotation.docx", _docx("Key rotation policy", "Ada Byron", FACT),
                      "application/octet-stream"))])
        assert accepted.status_code == 202, accepted.text
        async with open_research(settings) as research:
            stop = asyncio.Event()
            assert research.jobs.queue is not None
            worker = asyncio.create_task(run_worker(research.jobs, research.jobs.queue, stop,
                                                    "w1"))
            try:
                _, result = await asyncio.wait_for(
                    _followed(client, accepted.json()["links"]["events"]), 60)
            finally:
                stop.set()
                await worker
        assert result["status"] == "completed", result
        assert [d["status"] for d in result["documents"]] == ["added"]
        document = await client.get(f"/v1/documents/{result['documents'][0]['document_id']}")
        assert document.json()["title"] == "Key rotation policy"
