import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import researchbot
from tests.support.corpus import CORPUS, index_corpus, write_documents

pytestmark = pytest.mark.system


def test_help_is_fast_and_imports_no_heavy_library(clean_env: Path) -> None:
    code = (
        "import sys\nfrom bot.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('litellm', 'chromadb', 'onnxruntime', 'sqlalchemy') "
        "if m in sys.modules]\nprint(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert "research" in out.stdout.lower() and out.stdout.strip().endswith("[]")


def test_index_ask_jobs_show(clean_env: Path) -> None:
    docs = write_documents(clean_env.parent / "docs")
    indexed = researchbot.run("index", str(docs))
    assert indexed.returncode == 0, indexed.stderr
    assert "4 added" in indexed.stdout

    asked = researchbot.run("ask", "What gives sourdough bread its sour taste?", "--json")
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    assert set(payload) >= {"job_id", "status", "answer", "citations", "sources", "metadata"}
    assert set(payload["answer"]) == {"summary", "detail", "confidence", "limitations"}
    assert "acid" in payload["answer"]["summary"] + payload["answer"]["detail"]
    assert payload["sources"][0]["path"].endswith("bread.html")
    assert payload["metadata"]["cached"] is False and payload["metadata"]["duration_ms"] > 0
    trace = payload["trace"]  # how it was researched
    assert trace["iterations_used"] >= 1 and trace["iterations_allowed"] == 2
    assert trace["stopped_by"] == "completed" and trace["limit_reached"] is False
    assert trace["checklist"][0]["status"] == "satisfied" and trace["checklist"][0]["evidence"]
    assert trace["rounds"][0]["searches"][0]["query"] == \
        "What gives sourdough bread its sour taste?"
    assert trace["totals"]["queries"]["local"] == \
        sum(len(r["searches"]) for r in trace["rounds"])
    assert {s["id"] for s in payload["sources"]} <= set(trace["found_by"])

    again = researchbot.run("ask", "What gives sourdough bread its sour taste?")
    assert again.returncode == 0 and "cached answer from" in again.stdout
    assert "🔍" in again.stderr or "🗂️" in again.stderr
    assert "**References:**" in again.stdout and "bread.html" in again.stdout

    listed = researchbot.run("jobs")
    assert payload["job_id"] in listed.stdout and "completed" in listed.stdout
    shown = researchbot.run("show", payload["job_id"])
    assert shown.returncode == 0 and "Confidence" in shown.stdout and "metrics:" in shown.stdout
    assert "created " in shown.stdout and " · completed 20" in shown.stdout
    assert "stages: intake: Question type:" in shown.stdout  # its stored events
    assert "search: Found" in shown.stdout
    assert "How this was researched" in shown.stdout
    assert "1 of 2 search rounds (quick depth): it found what it looked for" in shown.stdout
    assert "✓ satisfied What gives sourdough bread its sour taste?" in shown.stdout
    assert "Round 1: " in shown.stdout and "Totals: queries local " in shown.stdout
    assert "    the knowledge base: 'What gives sourdough bread its sour taste?' (" \
        in shown.stdout
    assert "Evidence found by:" in shown.stdout
    as_json = json.loads(researchbot.run("show", payload["job_id"], "--json").stdout)
    kinds = [event["kind"] for event in as_json["events"]]
    assert kinds[0] == "queued" and kinds[-1] == "completed"
    assert [event["seq"] for event in as_json["events"]] == list(range(1, len(kinds) + 1))
    assert as_json["trace"]["iterations_used"] == trace["iterations_used"]
    assert as_json["trace"]["stopped_by"] == "completed"
    search = next(e for e in as_json["events"] if e["stage"] == "search")
    assert search["detail"]["round"] == 1 and search["detail"]["rounds_allowed"] == 2
    assert search["detail"]["queries"][0]["label"] == "the knowledge base"


_HEAVY = ("chromadb", "onnxruntime", "tokenizers", "litellm", "aiohttp", "redis", "bm25s",
          "core.research.engine", "core.retrieval.kb.knowledge_base", "core.sources.registry")


def _run_noting_imports(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The CLI run as a process, and which of the heavy modules it loaded."""
    code = ("import json, sys\nfrom bot.cli import main\ncode = main(sys.argv[1:])\n"
            f"print(json.dumps([m for m in {_HEAVY!r} if m in sys.modules]), file=sys.stderr)\n"
            "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=120)
    return done, set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_each_command_loads_only_what_it_uses(clean_env: Path) -> None:
    """Reading jobs and keys, an index run with nothing new and an exact repeat of a
    question open neither the models, the vector store, the sources nor the research
    engine; a question that needs research does (so the check can tell)."""
    docs = write_documents(clean_env.parent / "docs")
    question = "What gives sourdough bread its sour taste?"
    first, loaded = _run_noting_imports("ask", question, "--json")
    assert first.returncode == 0, first.stderr
    assert {"chromadb", "onnxruntime", "core.research.engine"} <= loaded
    assert "aiohttp" not in loaded  # local sources only: no HTTP client
    indexed, loaded = _run_noting_imports("index", str(docs))
    assert "4 added" in indexed.stdout
    assert {"chromadb", "onnxruntime"} <= loaded  # new files are embedded and stored

    unchanged, loaded = _run_noting_imports("index", str(docs))
    assert "4 unchanged" in unchanged.stdout and loaded == {"core.retrieval.kb.knowledge_base"}
    fresh, loaded = _run_noting_imports("ask", question, "--json")
    assert json.loads(fresh.stdout)["metadata"]["cached"] is False  # the documents changed
    repeat, loaded = _run_noting_imports("ask", f"  {question.upper()} ", "--json")
    assert repeat.returncode == 0, repeat.stderr
    cached = json.loads(repeat.stdout)
    assert cached["metadata"]["cached"] is True and loaded == set()
    assert cached["answer"] == json.loads(fresh.stdout)["answer"]
    for command in (("jobs",), ("show", cached["job_id"]), ("keys", "list")):
        shown, loaded = _run_noting_imports(*command)
        assert shown.returncode == 0 and loaded == set(), (command, shown.stderr)
    assert cached["job_id"] in researchbot.run("jobs").stdout  # the repeat is a job like any other
    checked, loaded = _run_noting_imports("check")
    assert "core.research.engine" not in loaded, checked.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("ask", "   "), 2, "The question is empty"),
        (("ask", "x" * 2500), 2, "limit is 2,000"),
        (("index", "/no/such/folder"), 1, "no such file or directory: /no/such/folder"),
        (("show", "nope"), 1, "no job with id 'nope'"),
    ],
)
def test_errors_are_one_line_with_an_exit_code(clean_env: Path, args: tuple[str, ...],
                                                code: int, message: str) -> None:
    result = researchbot.run(*args)
    assert result.returncode == code
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_invalid_settings_name_the_key(clean_env: Path) -> None:
    result = researchbot.run("jobs", env={**os.environ, "RESEARCHBOT_CACHE__TTL_HOURS": "-1"})
    assert result.returncode == 1
    assert "cache.ttl_hours" in result.stderr
    (clean_env.parent / "config.toml").write_text("[advanced.pipeline]\nmax_sources = 'many'\n")
    result = researchbot.run("jobs")
    assert result.returncode == 1 and "advanced.pipeline.max_sources" in result.stderr
    (clean_env.parent / "config.toml").write_text("[pipeline]\nnot_a_setting = 1\n")
    result = researchbot.run("jobs")
    assert result.returncode == 1 and "pipeline.not_a_setting" in result.stderr


def test_an_empty_knowledge_base_answers_insufficient_with_a_hint(clean_env: Path) -> None:
    result = researchbot.run("ask", "How long do cats sleep?", "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["answer"]["confidence"] == "insufficient"
    assert "knowledge base of tenant 'local' is empty" in result.stderr


def test_an_unreachable_store_is_one_line(clean_env: Path) -> None:
    result = researchbot.run("jobs", env={
        **os.environ, "RESEARCHBOT_STORE__URL": "postgresql+asyncpg://nobody@127.0.0.1:1/none"})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "store.url" in result.stderr


def test_terminal_control_sequences_from_documents_are_removed() -> None:
    from adapters.terminal import render_answer_markdown
    from core.models import Confidence, JobStatus, ResearchAnswer, ResearchResult

    result = ResearchResult(
        job_id="j", status=JobStatus.COMPLETED, question="q\x1b[2J",
        answer=ResearchAnswer(summary="Red \x1b[31mtext\x1b[0m and a bell\x07 [1].",
                              confidence=Confidence.LOW))
    text = render_answer_markdown(result)
    assert "\x1b" not in text and "\x07" not in text
    assert "Red text and a bell [1]." in text


async def test_show_prints_the_jobs_feedback(clean_env: Path) -> None:
    from datetime import UTC, datetime

    from bot.config import Settings
    from core.models import Job, ResearchRequest
    from core.store.database import open_database
    from core.store.feedback import Feedback, FeedbackStore, Rating
    from core.store.jobs import JobStore

    settings = Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = await open_database(settings.store_url)
    try:
        job = await JobStore(engine).create(Job(tenant="T1", platform="slack",
                                                request=ResearchRequest(question="Why?")))
        feedback = FeedbackStore(engine)
        await feedback.add(Feedback(job_id=job.id, rater="slack:T1:U2", tenant="T1",
                                    channel="slack", rating=Rating.UP,
                                    at=datetime(2025, 3, 1, 9, 30, tzinfo=UTC)))
        await feedback.add(Feedback(job_id=job.id, rater="discord:7", tenant="T1",
                                    channel="discord", rating=Rating.DOWN,
                                    comment="missed\x1b[2J the \u202epoint",
                                    at=datetime(2025, 3, 1, 10, 0, tzinfo=UTC)))
    finally:
        await engine.dispose()
    shown = researchbot.run("show", job.id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = lines.index("feedback (2):")
    assert lines[start + 1] == "  👍 up · slack · slack:T1:U2 · 2025-03-01 09:30:00"
    assert lines[start + 2] == ("  👎 down · discord · discord:7 · 2025-03-01 10:00:00 · "
                                "missed the <U+202E>point")
    assert "\x1b" not in shown.stdout
    as_json = json.loads(researchbot.run("show", job.id, "--json").stdout)
    assert [(f["rater"], f["rating"], f["channel"]) for f in as_json["feedback"]] == [
        ("slack:T1:U2", "up", "slack"), ("discord:7", "down", "discord")]
    assert as_json["feedback"][1]["comment"] == "missed\x1b[2J the \u202epoint"


def test_documents_are_listed_and_removed_from_search_and_the_cache(clean_env: Path) -> None:
    """`documents list` shows what is indexed (without loading the model or the vector
    store); `documents remove` takes a document out of search at once, and an answer cached
    from it is not served again."""
    index_corpus(clean_env)
    listed, loaded = _run_noting_imports("documents", "list", "--json")
    assert listed.returncode == 0 and not {"chromadb", "onnxruntime"} & loaded, listed.stderr
    documents = {Path(d["path"]).name: d for d in json.loads(listed.stdout)}
    assert set(documents) == set(CORPUS)
    bread = documents["bread.html"]
    assert bread["title"] == "Baking sourdough bread" and bread["chunks"] >= 1
    assert (bread["origin"], bread["status"]) == ("path", "indexed")
    text = researchbot.run("documents", "list").stdout
    assert bread["document_id"] in text and "Baking sourdough bread" in text

    question = "What gives sourdough bread its sour taste?"
    answered = json.loads(researchbot.run("ask", question, "--json").stdout)
    assert answered["sources"][0]["path"].endswith("bread.html")
    removed = researchbot.run("documents", "remove", bread["document_id"])
    assert removed.returncode == 0 and "Removed" in removed.stdout, removed.stderr
    after = json.loads(researchbot.run("ask", question, "--json").stdout)
    assert after["metadata"]["cached"] is False
    assert not any(s["path"].endswith("bread.html") for s in after["sources"])
    left = json.loads(researchbot.run("documents", "list", "--json").stdout)
    assert "bread.html" not in {Path(d["path"]).name for d in left}
    again = researchbot.run("documents", "remove", bread["document_id"])
    assert again.returncode == 1 and "has no document" in again.stderr
    assert "Traceback" not in again.stderr
