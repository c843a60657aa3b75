"""Answers saved as documents: each format holds the question, the answer with its citation
markers, the confidence, the limitations and every reference with its byline, link or file,
pages and quoted passages, read back with readers nobody here wrote (pypdf, python-docx, an
HTML parser); a hostile source title stays text in every format. `researchbot save` writes
one under results/; the API serves one to a key or the page's token, and the page links it."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import docx
import pytest
from pypdf import PdfReader

from core.answer.export import (
    FORMATS,
    export_answer,
    export_filename,
    system_font,
    to_markdown,
)
from core.models import (
    Citation,
    Confidence,
    JobStatus,
    Reference,
    ResearchAnswer,
    ResearchResult,
    Source,
)

pytestmark = pytest.mark.integration

HOSTILE = '<script>alert(1)</script> [click me](javascript:alert(1)) **Loud** # Heading'


def _result() -> ResearchResult:
    sources = [
        Source(id="s1", title="Attention Is All You Need", path="/papers/attention.pdf",
               location="page 3", snippet="The Transformer uses attention only."),
        Source(id="s2", title=HOSTILE, url="https://example.org/hostile",
               snippet="A page that tries to inject markup."),
        Source(id="s3", title="Łódź and 東京: a travel note", url="javascript:alert(2)",
               snippet="Trains run every ten minutes."),
    ]
    return ResearchResult(
        job_id="job123", status=JobStatus.COMPLETED,
        question="How does the Transformer model work, and what do the sources say?",
        answer=ResearchAnswer(
            summary="The Transformer relies on attention alone [1, p. 3]. A page claims "
                    "otherwise [2].",
            detail="Trains in Łódź run every ten minutes [3].",
            citations=[Citation(claim="attention", source_id="s1",
                                quote="The Transformer uses attention only."),
                       Citation(claim="claims", source_id="s2", quote="Dispense with "
                                "recurrence <b>entirely</b>.")],
            confidence=Confidence.MEDIUM,
            limitations=["Based on three sources only."]),
        sources=sources,
        references=[
            Reference(number=1, source_id="s1", title="Attention Is All You Need",
                      where="/papers/attention.pdf", authors="Vaswani, Shazeer", year="2017",
                      source_ids=["s1"], pages=[3, 5]),
            Reference(number=2, source_id="s2", title=HOSTILE, where="https://example.org/"),
            Reference(number=3, source_id="s3", title="Łódź and 東京: a travel note",
                      where="javascript:alert(2)"),
        ])


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [value or "" for name, value in attrs if name == "href"]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _text_of(kind: str, data: bytes) -> str:
    if kind == "pdf":
        return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    if kind == "docx":
        return "\n".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs)
    if kind == "html":
        parsed = _Html()
        parsed.feed(data.decode())
        return "".join(parsed.text)
    return data.decode()


@pytest.mark.parametrize("kind", FORMATS)
def test_each_format_holds_the_answer_and_its_references_as_text(kind: str) -> None:
    data = export_answer(_result(), kind)  # type: ignore[arg-type]
    text = " ".join(_text_of(kind, data).split())
    if kind == "md":  # what a Markdown reader shows: the escapes gone
        text = text.replace("\\", "")
    assert "How does the Transformer model work" in text
    assert "relies on attention alone [1, p. 3]" in text
    assert "Confidence: Medium" in text and "Based on three sources only." in text
    assert "Vaswani and Shazeer (2017). Attention Is All You Need" in text
    assert "pp. 3, 5" in text and "The Transformer uses attention only." in text
    assert "<script>alert(1)</script>" in text  # the hostile title, shown as what it is
    assert "Dispense with recurrence <b>entirely</b>." in text
    assert "https://example.org/hostile" in text
    # the PDF's font: DejaVu Sans where the system has it (no CJK), else Vera (Latin-1 and a
    # little more: no ź)
    assert ("Łódź" if kind != "pdf" or system_font("DejaVuSans.ttf") else "Łód") in text
    if kind != "pdf":
        assert "Łódź and 東京" in text


def test_markup_from_sources_never_becomes_markup() -> None:
    markdown = to_markdown(_result())
    assert "[click me](javascript" not in markdown and "<script>" not in markdown
    assert "\\[click me\\]\\(javascript:alert\\(1\\)\\)" in markdown
    page = _Html()
    page.feed(export_answer(_result(), "html").decode())
    assert "script" not in page.tags and "b" not in page.tags
    assert page.links == ["https://example.org/hostile"]  # javascript: is never a link
    document = docx.Document(io.BytesIO(export_answer(_result(), "docx")))
    assert document.core_properties.title.startswith("How does the Transformer")


def test_the_file_name_is_the_question_and_the_time() -> None:
    when = datetime(2026, 11, 26, 9, 30, 5, tzinfo=UTC)
    assert export_filename(_result(), "pdf", when) == \
        "how-does-the-transformer-model-work-and-what-do-the-sources_20261126-093005.pdf"
    hostile = _result().model_copy(update={"question": "../../etc/passwd\x00 ✨"})
    assert export_filename(hostile, "md", when) == "etc-passwd_20261126-093005.md"






async def test_the_api_serves_an_export_to_a_key_or_the_page_token(served_store: Path) -> None:
    from tests.support.api_harness import (
        OTHER_TENANT,
        TENANT,
        OpenApiSpec,
        api_settings,
        running_api,
        server_keys,
    )

    async with running_api(api_settings(served_store)) as api:
        async with server_keys(api) as keys:
            _, mine = await keys.create(TENANT)
            _, theirs = await keys.create(OTHER_TENANT)
        async with api.client(mine) as client:
            spec = OpenApiSpec((await client.get("/openapi.json")).json())
            job = (await client.post("/v1/research", json={
                "question": "What gives sourdough bread its sour taste?"})).json()
            for _ in range(300):
                ended = (await client.get(job["links"]["self"])).json()
                if ended["status"] == "completed":
                    break
                await _pause()
            for kind in FORMATS:
                response = await client.get(f"/v1/jobs/{job['job_id']}/export",
                                            params={"format": kind})
                spec.check("GET", "/v1/jobs/{job_id}/export", response)
                assert response.status_code == 200, response.text
                disposition = response.headers["content-disposition"]
                assert disposition.startswith('attachment; filename="what-gives-sourdough')
                assert disposition.endswith(f'.{kind}"')
                assert "acid" in _text_of(kind, response.content)
            bad = await client.get(f"/v1/jobs/{job['job_id']}/export",
                                   params={"format": "exe"})
            assert bad.status_code == 422
            page = await client.get(job["links"]["page"])
            token = job["links"]["page"].split("token=")[1]
            assert f"/export?format=pdf&amp;token={token}" in page.text
        async with api.client() as anonymous:  # the page's Download link: no key, the token
            by_token = await anonymous.get(f"/v1/jobs/{job['job_id']}/export",
                                           params={"format": "docx", "token": token})
            assert by_token.status_code == 200
            assert (await anonymous.get(f"/v1/jobs/{job['job_id']}/export",
                                        params={"token": "0" * 32})).status_code == 404
        async with api.client(theirs) as client:
            assert (await client.get(f"/v1/jobs/{job['job_id']}/export")).status_code == 404


async def _pause() -> None:
    import asyncio

    await asyncio.sleep(0.05)
