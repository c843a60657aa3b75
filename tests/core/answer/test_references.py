"""One reference a document: passages of one document cited in an answer become one
reference listing their pages (or sections), with authors and year where known; markers
name the page (`[1, p. 3]`); the answer's text, its references and every front end agree,
and revising the answer maps its markers back to passages."""

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from adapters.discord.render import render_answer as discord_answer
from adapters.http.page import _body
from adapters.slack.render import render_sources as slack_sources
from adapters.terminal import render_answer_markdown
from core.answer.export import reference_rows
from core.answer.references import by_document, document_numbers
from core.models import (
    Confidence,
    JobStatus,
    Reference,
    ResearchAnswer,
    ResearchRequest,
    ResearchResult,
    Source,
    SourceMetadata,
)
from core.research.model_steps import _renumbered
from tests.support.corpus import write_pdf
from tests.support.job_client import JobClient

pytestmark = pytest.mark.unit

PAPER = SourceMetadata(author="Ashish Vaswani, Noam Shazeer, Niki Parmar",
                       published_at=datetime(2017, 6, 12, tzinfo=UTC))


def _sources() -> list[Source]:
    return [
        Source(id="a1", title="Attention Is All You Need", path="/papers/attention.pdf",
               location="page 3", document_id="d1", metadata=PAPER),
        Source(id="a2", title="Attention Is All You Need", path="/papers/attention.pdf",
               location="page 5, Model > Encoder", document_id="d1", metadata=PAPER),
        Source(id="c1", title="Cats", path="/docs/cats.md", location="Cats > Sleep",
               document_id="d2"),
        Source(id="a3", title="Attention Is All You Need", path="/papers/attention.pdf",
               location="page 3", document_id="d1", metadata=PAPER),
    ]


def _passage_references(sources: list[Source]) -> list[Reference]:
    return [Reference(number=n, source_id=s.id, title=s.title, where=s.reference)
            for n, s in enumerate(sources, 1)]


def test_passages_of_one_document_become_one_reference_with_its_pages() -> None:
    sources = _sources()
    summary, detail, references = by_document(
        "Attention replaces recurrence [1]. Cats sleep long [3]. Both hold [1, 2, 3].",
        "Details [4] and [2].", _passage_references(sources), sources)
    assert summary == ("Attention replaces recurrence [1, p. 3]. Cats sleep long [2]. "
                       "Both hold [1, pp. 3, 5; 2].")
    assert detail == "Details [1, p. 3] and [1, p. 5]."
    assert [(r.number, r.label, r.where, r.source_ids, r.pages) for r in references] == [
        (1, "Ashish Vaswani et al. (2017). Attention Is All You Need",
         "/papers/attention.pdf, pp. 3, 5", ["a1", "a2", "a3"], [3, 5]),
        (2, "Cats", "/docs/cats.md (Cats > Sleep)", ["c1"], []),
    ]
    assert document_numbers("1, pp. 3, 5; 2") == [1, 2]
    assert document_numbers("1, 2") == [1, 2] == document_numbers("1; 2")


def test_bylines() -> None:
    def label(authors: str | None, year: str | None) -> str:
        return Reference(number=1, source_id="s", title="T", where="", authors=authors,
                         year=year).label

    assert label(None, None) == "T"
    assert label("Ada Lovelace", None) == "Ada Lovelace. T"
    assert label("Ada Lovelace and Alan Turing", "1950") == "Ada Lovelace and Alan Turing (1950). T"
    assert label("A; B; C", "2001") == "A et al. (2001). T"
    assert label(None, "2020") == "2020. T"


def _result(summary: str, references: list[Reference], sources: list[Source]) -> ResearchResult:
    return ResearchResult(job_id="j1", status=JobStatus.COMPLETED, question="Why attention?",
                          answer=ResearchAnswer(summary=summary, confidence=Confidence.HIGH),
                          sources=sources, references=references)


def test_every_front_end_counts_documents_and_shows_pages() -> None:
    sources = _sources()
    summary, _, references = by_document("Attention [1]. Encoder [2]. Cats [3].", "",
                                         _passage_references(sources[:3]), sources[:3])
    result = _result(summary, references, sources[:3])
    embeds = discord_answer(result)
    footer = embeds[0][-1]["footer"]["text"]
    assert footer.startswith("2 sources")
    terminal = render_answer_markdown(result)
    assert "1. Ashish Vaswani et al. (2017). Attention Is All You Need — " \
           "/papers/attention.pdf, pp. 3, 5" in terminal
    assert "Attention [1, p. 3]. Encoder [1, p. 5]. Cats [2]." in terminal
    body = str(_body(result)[0])
    assert '<a class="cite" href="#source-1" aria-label="source 1">[1, p. 3]</a>' in body
    assert '<a class="cite" href="#source-2" aria-label="source 2">[2]</a>' in body
    loose = str(_body(_result("A model's own [1; 2].", references, sources[:3]))[0])
    assert loose.count('class="cite"') == 2  # linked, not broken
    both = str(_body(_result("Both [1, pp. 3, 5; 2].", references, sources[:3]))[0])
    assert both == ('Both [<a class="cite" href="#source-1" aria-label="source 1">1, pp. 3, 5'
                    '</a>; <a class="cite" href="#source-2" aria-label="source 2">2</a>].')
    slack = json.dumps(slack_sources(result))
    assert "Ashish Vaswani et al. (2017). Attention Is All You Need" in slack
    assert "Sources (2)" in slack
    rows = reference_rows(result)  # the page's and the exports' rows
    assert [(row.number, row.pages) for row in rows] == [(1, "pp. 3, 5"),
                                                            (2, "Cats > Sleep")]


def test_revising_maps_document_markers_back_to_passages() -> None:
    sources = _sources()
    summary, _, references = by_document("Attention [1]. Encoder [2]. Cats [3].", "",
                                         _passage_references(sources[:3]), sources[:3])
    earlier = _result(summary, references, sources[:3])
    chosen = [sources[2], sources[1], sources[0]]  # the passages as numbered now
    assert _renumbered(earlier, chosen) == "Attention [2, 3]. Encoder [2, 3]. Cats [1]."


async def test_a_pdf_cited_on_two_pages_is_one_reference(
    tmp_path: Path, sqlite_engine: Any, chroma: Any, embedder: Any,
) -> None:
    from bot.wiring import build_jobs, build_research, local_sources
    from core.config import KnowledgeBaseSettings, PipelineSettings
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.store.catalogue import KnowledgeCatalogue

    folder = tmp_path / "papers"
    folder.mkdir()
    write_pdf(folder / "planets.pdf", [
        "The Sun is a star at the centre of the solar system. The Sun is about 4.6 billion "
        "years old.",
        "Jupiter is the largest planet in the solar system. Jupiter has a Great Red Spot, a "
        "storm larger than the Earth."], title="Planets of the solar system")
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder,
                                   KnowledgeBaseSettings(chunk_tokens=60, overlap_tokens=0))
    await knowledge_base.index([folder], "t1")
    research = build_research(local_sources(knowledge_base, PipelineSettings()), embedder,
                              PipelineSettings())
    client = JobClient(build_jobs(research, sqlite_engine, progress_interval_s=0.0))
    result = await client.run(ResearchRequest(
        question="How old is the Sun, and which planet is the largest in the solar system?",
        tenant="t1"))
    text = f"{result.answer.summary} {result.answer.detail}"
    assert [(r.title, r.pages) for r in result.references] == \
        [("Planets of the solar system", [1, 2])], (text, result.references)
    assert "p. 1" in text and "p. 2" in text
    await client.jobs.close()
