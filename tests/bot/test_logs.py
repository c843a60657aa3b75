"""Structured logs (bot/logs.py): a real job logged as JSON, a line a stage naming the job,
its tenant and the stage; no question text unless allowed; no secret, wherever it hides."""

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import LogSettings
from bot.logs import configure_logging
from bot.wiring import build_jobs, build_research, local_sources
from core.config import KnowledgeBaseSettings, PipelineSettings
from core.jobs.service import JobService
from core.models import JobStatus, ResearchRequest
from core.redact import REDACTOR
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.store.catalogue import KnowledgeCatalogue
from tests.support.chat_harness import BrokenSynthesizer

pytestmark = pytest.mark.unit

QUESTION = "How many hours a day do cats sleep?"
SECRET = "zq-configured-secret-8812"


@pytest.fixture
def logs() -> Iterator[Any]:
    """`start(**settings)`: configure logging into a buffer; the root logger restored after."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    buffer = io.StringIO()

    def start(**settings: Any) -> io.StringIO:
        configure_logging(LogSettings(**settings), buffer)
        return buffer

    yield start
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def _lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


async def _service(engine: Any, chroma: Any, embedder: Any, corpus: Path,
                   synthesizer: Any = None) -> JobService:
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    await knowledge_base.index([corpus], "t1")
    research = build_research(local_sources(knowledge_base, PipelineSettings()),
                              embedder, PipelineSettings(), synthesizer=synthesizer)
    return build_jobs(research, engine, progress_interval_s=0.0)


async def test_a_job_logs_a_json_line_a_stage_without_the_question(
    logs: Any, sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(sqlite_engine, chroma, embedder, corpus)
    buffer = logs(format="json")
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    assert (await service.wait(job_id)).status == JobStatus.COMPLETED
    await service.close()
    lines = _lines(buffer)  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    stages = [line for line in lines if "duration_ms" in line]
    assert [line["stage"] for line in stages] == ["intake", "plan", "search", "rank",
                                                  "synthesize", "verify", "grade", "deliver"]
    assert all(line["job_id"] == job_id and line["tenant"] == "t1" and line["level"] == "INFO"
               for line in stages)
    assert QUESTION not in buffer.getvalue()
    assert "cats sleep" not in buffer.getvalue().lower()


async def test_the_question_is_logged_only_when_allowed(
    logs: Any, sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(sqlite_engine, chroma, embedder, corpus)
    buffer = logs(format="json", include_questions=True)
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    await service.wait(job_id)
    await service.close()
    started = [line for line in _lines(buffer) if line.get("question")]
    assert [(line["question"], line["job_id"]) for line in started] == [(QUESTION, job_id)]


async def test_a_failed_job_logs_its_error_with_job_tenant_and_stage(
    logs: Any, sqlite_engine: Any, chroma: Any, embedder: Any, corpus: Path,
) -> None:
    service = await _service(sqlite_engine, chroma, embedder, corpus,
                             synthesizer=BrokenSynthesizer())
    buffer = logs(format="json")
    job_id = await service.submit(ResearchRequest(question=QUESTION, tenant="t1"))
    assert (await service.wait(job_id)).status == JobStatus.FAILED
    await service.close()
    errors = [line for line in _lines(buffer) if line["level"] == "ERROR"]
    assert len(errors) == 1
    assert (errors[0]["job_id"], errors[0]["tenant"], errors[0]["stage"]) == \
        (job_id, "t1", "synthesize")
    assert "ConnectionResetError" in errors[0]["message"]


def test_no_secret_reaches_a_json_line(logs: Any) -> None:
    REDACTOR.add(SECRET)
    buffer = logs(format="json")
    log = logging.getLogger("tests.secrets")
    log.warning("calling with %s", SECRET, extra={
        "api": SECRET, "nested": {"url": f"redis://user:{SECRET}@host:6379/0"},
        "header": "Authorization: Bearer abcdefghijklmnop1234", "items": [SECRET, 3]})
    try:
        raise RuntimeError(f"refused key {SECRET}")
    except RuntimeError:
        log.exception("it failed", extra={"key": "sk-abcdefghijklmnopqrstuv"})
    text = buffer.getvalue()
    lines = _lines(buffer)
    assert len(lines) == 2
    assert SECRET not in text and "abcdefghijklmnop1234" not in text
    assert "sk-abcdefghijklmnopqrstuv" not in text
    assert lines[0]["message"] == "calling with [redacted]"
    assert lines[0]["api"] == "[redacted]" and lines[0]["items"] == ["[redacted]", 3]
    assert lines[0]["nested"]["url"] == "redis://user:[redacted]@host:6379/0"
    assert "RuntimeError: refused key [redacted]" in lines[1]["exc_info"]


def test_text_lines_stay_readable_and_redacted(logs: Any) -> None:
    REDACTOR.add(SECRET)
    buffer = logs(format="text", level="WARNING")
    log = logging.getLogger("tests.text")
    log.info("not shown")
    log.warning("token %s", SECRET, extra={"question": QUESTION})
    line = buffer.getvalue().strip()
    assert line.endswith("WARNING tests.text: token [redacted]")
    assert "not shown" not in line and QUESTION not in line
