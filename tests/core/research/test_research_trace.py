"""The research trace kept with each job, and the progress events that say which round of
how many is searching what: through the real research core and job service (with the
scripted model server on 127.0.0.1, and without a model), read back from the job store;
the progress renderers as data against each platform's limits."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from adapters.discord.render import MAX_DESCRIPTION
from adapters.discord.render import render_progress as discord_progress
from adapters.slack.render import MAX_SECTION
from adapters.slack.render import render_progress as slack_progress
from adapters.terminal import render_progress as terminal_progress
from adapters.terminal import render_trace
from bot.wiring import build_jobs, build_research
from core.config import PipelineSettings, TierBudget
from core.models import (
    ChecklistCount,
    ChecklistStatus,
    Confidence,
    Depth,
    LabelledQuery,
    ProgressDetail,
    ProgressEvent,
    ResearchRequest,
    Stage,
    StoppedBy,
    Trace,
)
from core.sources.local import LocalKnowledgeBaseSource
from core.store.database import open_database, sqlite_url
from core.store.events import JobEvents
from core.store.jobs import JobStore
from tests.support.fake_openai import Chat
from tests.support.job_client import JobClient
from tests.support.scripted_analyst import QUESTION, Lab

pytestmark = pytest.mark.integration

KB = "the knowledge base"  # how progress names the local source
HOSTILE = [LabelledQuery(label="Wikipedia", query="@everyone <!channel> otters **sleep**"),
           LabelledQuery(label="arXiv", query="otter <@U123> raft")]


def _never_enough(chat: Chat) -> dict[str, Any]:
    """A reflection that always wants one more search, a new one each round."""
    return {"items": [{"item": 1, "status": "unsatisfied"}], "sufficient": False,
            "confidence": 0.1, "gaps": ["more"],
            "new_queries": [{"text": f"cats sleep variant {time.perf_counter_ns()}"}]}


async def test_a_three_round_job_keeps_each_rounds_searches_facts_and_why_it_stopped(
        lab: Lab) -> None:
    lab.fake.script["reflect"] = _never_enough
    events: list[ProgressEvent] = []
    client = lab.client(quick=TierBudget(iterations=3, queries=10, sources=5, seconds=60,
                                         tokens=1_000_000))
    result = await client.run(ResearchRequest(question=QUESTION, tenant="t1",
                                              depth=Depth.QUICK, bypass_cache=True),
                              events.append)
    job = await lab.job(result.job_id)
    trace = job.trace
    assert (trace.iterations_used, trace.iterations_allowed) == (3, 3)
    assert trace.stopped_by == StoppedBy.ITERATION_LIMIT and trace.stopped_by.limit
    # each round's own query, sent to the knowledge base, with what it found
    searched = [[(s.source, s.query) for s in r.searches] for r in trace.iterations]
    assert searched == [[("local", r.queries[0])] for r in trace.iterations]
    assert len({r.queries[0] for r in trace.iterations}) == 3
    assert all(s.results > 0 for r in trace.iterations for s in r.searches)
    # totals summed over the rounds (a 3-round job used to report {'local': 1})
    assert trace.totals.queries == {"local": 3}
    assert job.metrics["queries_per_source"] == {"local": 3}
    assert trace.totals.results["local"] == \
        sum(s.results for r in trace.iterations for s in r.searches)
    assert trace.totals.passages_weighed == sum(r.new_passages for r in trace.iterations) > 0
    # the facts the model took, kept after the job ended
    assert trace.facts and {f.source_id for f in trace.facts} <= set(trace.found_by)
    assert any("12 and 16 hours" in f.text for f in trace.facts)
    # the search behind each passage of evidence
    assert trace.evidence and set(trace.evidence) <= set(trace.found_by)
    for origin in trace.found_by.values():
        assert origin.source == "local" and origin.label == KB
        assert origin.query in trace.iterations[origin.round - 1].queries
    # the checklist: the model never said it was covered; the facts that serve it listed
    (item,) = trace.checklist
    assert item.text == f"a direct answer to: {QUESTION}"
    assert item.status == ChecklistStatus.OPEN and item.evidence
    assert [r.checklist for r in trace.iterations] == [ChecklistCount(total=1)] * 3
    # what the API and `ask --json` show
    public = result.to_public_json(trace)["trace"]
    assert (public["iterations_used"], public["iterations_allowed"]) == (3, 3)
    assert public["stopped_by"] == "iteration_limit" and public["limit_reached"] is True
    assert public["checklist"][0]["status"] == "open" and public["checklist"][0]["evidence"]
    assert [len(r["searches"]) for r in public["rounds"]] == [1, 1, 1]
    assert public["totals"]["queries"] == {"local": 3} and public["facts"]
    assert public["found_by"][trace.evidence[0]]["query"]
    # progress, as stored and read back: the round of the tier's three, the query sent
    searches = [e for e in events if e.stage == Stage.SEARCH and e.kind == "started"]
    assert [(e.detail.round, e.detail.rounds_allowed) for e in searches] == \
        [(1, 3), (2, 3), (3, 3)]
    assert [[(q.label, q.query) for q in e.detail.queries] for e in searches] == \
        [[(KB, r.queries[0])] for r in trace.iterations]
    assert searches[1].message == f"Round 2/3: searching {KB}: '{trace.iterations[1].queries[0]}'"
    processing = [e for e in events if e.stage == Stage.RANK and e.kind == "started"]
    assert [e.message for e in processing] == \
        [f"Processing {r.results} results" for r in trace.iterations]
    assert [e.detail.results for e in processing] == [r.results for r in trace.iterations]
    weighed = [e for e in events if e.stage == Stage.RANK and e.kind == "finished"]
    assert all(e.detail.checklist == ChecklistCount(total=1) for e in weighed)
    assert all(e.message.endswith("Checklist 0/1 satisfied") for e in weighed)


async def test_a_covered_checklist_completes_with_its_evidence(lab: Lab) -> None:
    result, job = await lab.ask()
    trace = job.trace
    assert trace.stopped_by == StoppedBy.COMPLETED and not trace.stopped_by.limit
    assert (trace.iterations_used, trace.iterations_allowed) == (1, 2)
    (item,) = trace.checklist
    assert item.status == ChecklistStatus.SATISFIED
    assert item.evidence and set(item.evidence) <= set(trace.found_by)
    assert trace.iterations[0].checklist == ChecklistCount(satisfied=1, total=1)
    public = result.to_public_json(trace)["trace"]
    assert public["stopped_by"] == "completed" and public["limit_reached"] is False


async def test_the_time_limit_is_its_own_stop(lab: Lab) -> None:
    await lab.ask()  # the process's first model call (imports, connections) is not timed
    lab.fake.script["reflect"] = _never_enough
    lab.fake.latency_s = 0.2
    result, job = await lab.ask(quick=TierBudget(iterations=50, queries=50, sources=5,
                                                 seconds=1.5, tokens=1_000_000))
    assert job.trace.stopped_by == StoppedBy.TIME_LIMIT
    assert 1 <= job.trace.iterations_used < 50 and job.trace.iterations_allowed == 50
    assert result.to_public_json(job.trace)["trace"]["limit_reached"] is True
    assert "How this was researched" in render_trace(job.trace)
    assert "stopped at the tier's time limit [limit reached]" in render_trace(job.trace)


async def test_without_a_model_the_grade_settles_the_checklist(
        sqlite_engine: Any, chroma: Any, embedder: Any, knowledge_base: Any,
        corpus: Path) -> None:
    await knowledge_base.index([corpus], "t1")
    research = build_research({"local": LocalKnowledgeBaseSource(knowledge_base, 3)},
                              embedder, PipelineSettings())
    client = JobClient(build_jobs(research, sqlite_engine, progress_interval_s=0.0))
    events: list[ProgressEvent] = []
    result = await client.run(ResearchRequest(question=QUESTION, tenant="t1"), events.append)
    trace = (await JobStore(sqlite_engine).get(result.job_id)).trace
    assert result.answer.confidence in (Confidence.HIGH, Confidence.MEDIUM)
    assert trace.iterations_allowed == 2 and trace.stopped_by == StoppedBy.COMPLETED
    assert (await JobStore(sqlite_engine).get(result.job_id)).metrics["stopped_by"] == \
        "completed"
    (item,) = trace.checklist
    assert item.status == ChecklistStatus.SATISFIED
    assert set(item.evidence) == {s.id for s in result.sources}
    assert set(trace.evidence) <= set(trace.found_by)
    assert sum(trace.totals.queries.values()) == \
        sum(len(r.searches) for r in trace.iterations) >= 1
    first = next(e for e in events if e.stage == Stage.SEARCH and e.kind == "started")
    assert first.message.startswith(f"Round 1/2: searching {KB}: '{QUESTION}'")
    assert first.detail.queries[0] == LabelledQuery(label=KB, query=QUESTION)


async def test_traces_and_events_stored_before_they_had_details_still_load(
        tmp_path: Path) -> None:
    old = Trace.model_validate({"checklist": ["why", "when"],
                                "iterations": [{"queries": ["why"], "useful": 1}]})
    assert old.checklist_texts == ["why", "when"]
    assert old.checklist[0].status == ChecklistStatus.OPEN
    assert old.iterations_used == 1 and old.stopped_by is None
    assert "no research ran" in render_trace(old)

    # a store made before job_events had a `detail` column, with an event in it
    path = tmp_path / "old.sqlite3"
    url = sqlite_url(str(path))
    engine = await open_database(url)
    async with engine.begin() as connection:
        await connection.execute(text("ALTER TABLE job_events DROP COLUMN detail"))
        await connection.execute(text(
            "INSERT INTO job_events (job_id, seq, at, kind, stage, progress, message, counts) "
            "VALUES ('j1', 1, '2026-01-01 00:00:00', 'started', 'search', 0.1, "
            "'Searching', '{}')"))
        await connection.exec_driver_sql("PRAGMA user_version = 0")
    await engine.dispose()
    engine = await open_database(url)  # brings the store up to date
    try:
        events = JobEvents(engine)
        (stored,) = await events.after("j1")
        assert stored.detail == ProgressDetail() and stored.message == "Searching"
        shown = stored.progress_event()
        assert shown is not None and terminal_progress(shown) == "🔍 Searching..."
        detail = ProgressDetail(round=1, rounds_allowed=2, results=3,
                                queries=[LabelledQuery(label="Wikipedia", query="otters")])
        await events.progress(ProgressEvent(job_id="j1", stage=Stage.RANK, kind="started",
                                            progress=0.5, message="Processing 3 results",
                                            detail=detail))
        assert (await events.after("j1", 1))[0].detail == detail
    finally:
        await engine.dispose()


async def test_event_details_survive_either_store(any_engine: Any) -> None:
    events = JobEvents(any_engine)
    detail = ProgressDetail(round=2, rounds_allowed=3, checklist=ChecklistCount(
        satisfied=1, partial=1, total=3), queries=HOSTILE)
    await events.progress(
        ProgressEvent(job_id="j2", stage=Stage.SEARCH, kind="started", progress=0.2,
                      message="Round 2/3: searching", detail=detail),
        ProgressEvent(job_id="j2", stage=Stage.SEARCH, kind="finished", progress=0.5,
                      message="Found 3 passages in 1 documents"))
    await events.append("j2", "completed", message="Confidence: high")
    stored = await events.after("j2")
    assert [e.detail for e in stored] == [detail, ProgressDetail(), ProgressDetail()]
    shown = stored[0].progress_event()
    assert shown is not None and shown.detail == detail


def _event(stage: Stage, kind: str, message: str, **detail: Any) -> ProgressEvent:
    return ProgressEvent(job_id="j", stage=stage, kind=kind,  # type: ignore[arg-type]
                         progress=0.5, message=message, detail=ProgressDetail(**detail))


def test_each_front_end_shows_the_round_the_queries_and_the_checklist() -> None:
    searching = _event(Stage.SEARCH, "started", "Round 2/3: searching …", round=2,
                       rounds_allowed=3, queries=HOSTILE)
    assert terminal_progress(searching) == (
        "🔍 Round 2/3: searching Wikipedia: '@everyone <!channel> otters **sleep**' · "
        "arXiv: 'otter <@U123> raft'...")
    slack = slack_progress(searching)
    assert "Round 2/3: searching Wikipedia: '@everyone &lt;!channel&gt; otters" in slack
    assert "arXiv: 'otter &lt;@U123&gt; raft'" in slack and "<!channel>" not in slack
    discord = discord_progress(searching)["description"]
    assert discord.startswith("⏳ Round 2/3: searching Wikipedia: '@\u200beveryone")
    assert "\\*\\*sleep\\*\\*" in discord and "arXiv: 'otter" in discord

    processing = _event(Stage.RANK, "started", "Processing 12 results", round=2,
                        rounds_allowed=3, results=12)
    assert terminal_progress(processing) == "📊 Round 2/3: processing 12 results..."
    assert "Round 2/3: processing 12 results" in slack_progress(processing)
    assert "Round 2/3: processing 12 results" in discord_progress(processing)["description"]

    weighed = _event(Stage.RANK, "finished", "4 of 12 passages hold evidence · Checklist 3/5 "
                     "satisfied", round=2, rounds_allowed=3,
                     checklist=ChecklistCount(satisfied=3, total=5))
    assert terminal_progress(weighed) == \
        "   4 of 12 passages hold evidence · Checklist 3/5 satisfied"
    for shown in (slack_progress(weighed), discord_progress(weighed)["description"]):
        # a chat status line shows one event at a time: it says which round too
        assert "Round 2/3: 4 of 12 passages hold evidence · Checklist 3/5 satisfied" in shown


def test_progress_with_many_long_queries_stays_within_each_platforms_limits() -> None:
    queries = [LabelledQuery(label=f"source {n % 6}", query="<!here> " + "x" * 900)
               for n in range(60)]
    event = _event(Stage.SEARCH, "started", "Round 1/5: searching", round=1,
                   rounds_allowed=5, queries=queries)
    slack = slack_progress(event)
    assert len(slack) <= MAX_SECTION and "<!here>" not in slack and "and 7 more" in slack
    discord = discord_progress(event)["description"]
    assert len(discord) <= MAX_DESCRIPTION and "…" in discord
    line = terminal_progress(event)
    assert line.count("'") <= 6 * 3 * 2 and len(line) < 1500  # three queries a source, cut
