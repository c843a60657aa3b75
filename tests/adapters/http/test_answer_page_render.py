"""The answer page as data: whatever a question, a model or a source says is text on the
page; only citation markers of listed sources become links, and only http(s) links are
followed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters.http import page
from core.models import (
    Citation,
    Confidence,
    Job,
    JobEvent,
    JobStatus,
    Reference,
    ResearchAnswer,
    ResearchRequest,
    ResearchResult,
    Source,
)

pytestmark = pytest.mark.unit

HOSTILE = '<img src=x onerror=alert(1)>"\'&'


def _job(status: JobStatus, result: ResearchResult | None = None) -> Job:
    return Job(id="j1", request=ResearchRequest(question=f"Why {HOSTILE}?"), status=status,
               result=result)


def _result() -> ResearchResult:
    sources = [
        Source(id="s1", title=HOSTILE, url="javascript:alert(1)", snippet="snip"),
        Source(id="s2", title="Plain", url="https://example.org/a?b=1&c=2", location="p. 4"),
        Source(id="s3", title="A file", path="/docs/guide.pdf", location="page 12"),
    ]
    return ResearchResult(
        job_id="j1", status=JobStatus.COMPLETED, question=f"Why {HOSTILE}?",
        answer=ResearchAnswer(summary=f"First {HOSTILE} [1]. Second [2] and [7].",
                              detail="Third [3].",
                              citations=[Citation(claim="c", source_id="s3",
                                                  quote=f"quoted {HOSTILE}")],
                              confidence=Confidence.LOW, limitations=[f"limit {HOSTILE}"]),
        sources=sources,
        references=[Reference(number=n, source_id=f"s{n}", title=s.title, where=s.reference)
                    for n, s in enumerate(sources, 1)])


def test_untrusted_text_is_escaped_and_only_listed_markers_link() -> None:
    result = _result()
    html = page.render(_job(JobStatus.COMPLETED, result), [], "tok", result)
    assert "<img" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 4  # question, body, title, limit
    assert 'href="#source-1"' in html and 'href="#source-3"' in html
    assert 'href="#source-7"' not in html and "[7]" in html
    assert 'href="javascript:' not in html  # shown as text, never a link
    assert 'href="https://example.org/a?b=1&amp;c=2"' in html
    assert "/docs/guide.pdf · page 12" in html
    assert "quoted &lt;img" in html
    assert "confidence-low" in html and "Low confidence" in html


def test_a_failed_job_says_why_without_an_answer() -> None:
    events = [JobEvent(job_id="j1", seq=1, at=datetime.now(UTC), kind="queued"),
              JobEvent(job_id="j1", seq=2, at=datetime.now(UTC), kind="failed",
                       message="Sorry, the research failed before it finished.")]
    html = page.render(_job(JobStatus.FAILED), events, "tok", None)
    assert 'id="answer"' not in html
    assert "Sorry, the research failed before it finished." in html
    assert 'id="retry"' not in html and 'class="rate"' not in html  # a page token rates only


def test_the_context_a_question_was_asked_with_is_shown_as_text() -> None:
    job = Job(id="j1", status=JobStatus.PENDING,
              request=ResearchRequest(question="Why?", context=f"for me {HOSTILE}"))
    html = page.render(job, [], "tok", None)
    assert 'id="context">Asked with: for me &lt;img src=x onerror=alert(1)&gt;' in html
    assert 'id="context"' not in page.render(_job(JobStatus.PENDING), [], "tok", None)
