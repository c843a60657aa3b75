"""The LLM research loop through the real litellm against a scripted OpenAI-compatible server
on 127.0.0.1, on the real pipeline and knowledge base."""

import json
import re
import time
from typing import Any

import aiohttp
import pytest

from bot.wiring import build_jobs, build_research, local_sources
from core.config import LLMSettings, PipelineSettings, TierBudget
from core.errors import ConfigurationError
from core.llm.prompts import PromptLibrary
from core.models import (
    Confidence,
    ConversationTurn,
    Depth,
    ResearchRequest,
)
from core.sources.policy import SourcePolicy
from core.sources.wikipedia import WikipediaSource
from tests.support import scripted_analyst as scripted
from tests.support.fake_openai import Chat, HttpError
from tests.support.fake_web import Article, FakeWeb
from tests.support.job_client import JobClient
from tests.support.scripted_analyst import QUESTION, Lab, line_after

pytestmark = pytest.mark.integration


async def test_a_full_loop_ends_in_a_verified_cited_answer(lab: Lab) -> None:
    result, job = await lab.ask()
    assert "12 and 16 hours" in result.answer.summary and "[1]" in result.answer.summary
    assert result.answer.metadata["synthesizer"] == "llm:openai/strong"
    assert result.references and result.sources
    assert lab.fake.tasks() == ["understand", "plan", "evidence", "reflect", "synthesize",
                                "verify"]
    models = {chat.task: chat.model for chat in lab.fake.chats}
    assert models["plan"] == "fast" and models["synthesize"] == "strong"
    assert job.metrics["llm_calls"] == 6 and job.metrics["tokens"] > 0
    assert job.metrics["rounds"] == 1 and job.metrics["claims_checked"] >= 1
    assert job.trace.checklist_texts == [f"a direct answer to: {QUESTION}"]
    assert result.answer.confidence in (Confidence.MEDIUM, Confidence.HIGH)


async def test_the_loop_searches_again_until_the_checklist_is_covered(lab: Lab) -> None:
    rounds = iter([
        {"items": [{"item": 1, "status": "partial"}], "sufficient": False, "confidence": 0.3,
         "gaps": ["diet"], "new_queries": [{"text": "cats taurine meat", "sources": []}]},
        {"items": [{"item": 1, "status": "satisfied"}], "sufficient": True,
         "confidence": 0.9, "gaps": [], "new_queries": []},
    ])
    lab.fake.script["reflect"] = lambda chat: next(rounds)
    result, job = await lab.ask(quick=TierBudget(iterations=5, queries=5, sources=5,
                                                 seconds=60, tokens=100_000))
    assert job.metrics["rounds"] == 2 and job.metrics["cut_short"] is None
    assert [it.queries for it in job.trace.iterations][1] == ["cats taurine meat"]
    assert not any("cut short" in item for item in result.answer.limitations)


def _never_enough(chat: Chat) -> dict[str, Any]:
    n = sum(1 for c in chat.messages if "Searches run" in c["content"])
    return {"items": [{"item": 1, "status": "unsatisfied"}], "sufficient": False,
            "confidence": 0.1, "gaps": ["more"],
            "new_queries": [{"text": f"cats sleep variant {time.perf_counter_ns()} {n}"}]}


@pytest.mark.parametrize("budget, reason", [
    (TierBudget(iterations=2, queries=10, sources=5, seconds=60, tokens=100_000),
     "allows 2 search rounds"),
    (TierBudget(iterations=10, queries=2, sources=5, seconds=60, tokens=100_000),
     "allows 2 searches"),
    (TierBudget(iterations=10, queries=10, sources=5, seconds=60, tokens=3_000),
     "budget of 3,000 tokens"),
])
async def test_each_budget_ends_the_loop_and_the_answer_says_so(
    lab: Lab, budget: TierBudget, reason: str,
) -> None:
    lab.fake.script["reflect"] = _never_enough
    lab.fake.completion_tokens = 700
    result, job = await lab.ask(quick=budget)
    assert reason in job.metrics["cut_short"]
    assert any(reason in item for item in result.answer.limitations)
    assert result.answer.confidence != Confidence.HIGH
    assert "12 and 16 hours" in result.answer.summary  # what was gathered is still used


async def test_the_time_limit_ends_the_loop(lab: Lab) -> None:
    await lab.ask()  # the process's first model call (imports, connections) is not timed
    lab.fake.script["reflect"] = _never_enough
    lab.fake.latency_s = 0.2
    started = time.perf_counter()
    result, job = await lab.ask(quick=TierBudget(iterations=50, queries=50, sources=5,
                                                 seconds=1.5, tokens=1_000_000))
    assert "time limit of 1.5 s" in job.metrics["cut_short"]
    assert time.perf_counter() - started < 6  # the loop stopped; only the answer followed
    assert result.answer.summary


async def test_malformed_json_is_repaired_or_asked_again(lab: Lab) -> None:
    lab.fake.script["plan"] = [
        "Sure! Here is the plan: {\"queries\": [{\"text\": \"cats sleep hours\",}]",  # broken
        "```json\n" + json.dumps({"queries": [{"text": "cats sleep hours"}]}) + "\n```",
    ]
    lab.fake.script["understand"] = lambda chat: (  # a fence and trailing commas: repaired
        '```json\n{"refined_question": "' + QUESTION + '", "checklist": ["hours",],}\n```')
    result, job = await lab.ask()
    plans = [c for c in lab.fake.chats if c.task == "plan"]
    assert len(plans) == 2 and "could not be used" in plans[1].prompt  # the repair turn
    assert job.trace.iterations[0].queries == ["cats sleep hours"]
    assert len([c for c in lab.fake.chats if c.task == "understand"]) == 1  # fence + comma
    assert "12 and 16 hours" in result.answer.summary


async def test_twice_malformed_falls_back_and_says_so(lab: Lab) -> None:
    lab.fake.script["plan"] = ["no JSON at all"]
    result, job = await lab.ask()
    assert len([c for c in lab.fake.chats if c.task == "plan"]) == 2
    assert job.trace.iterations[0].queries[0] == QUESTION  # the heuristic plan
    assert any("planning searches" in item for item in result.answer.limitations)


async def test_a_429_is_retried_after_retry_after(lab: Lab) -> None:
    lab.fake.script["understand"] = [HttpError(429, retry_after=1), scripted.understand]
    started = time.perf_counter()
    result, job = await lab.ask()
    first, second = [c for c in lab.fake.chats if c.task == "understand"][:2]
    assert second.at - first.at >= 0.95
    assert job.metrics["llm_retries"] == 1 and job.metrics["llm_failed_calls"] == 0
    assert "12 and 16 hours" in result.answer.summary
    assert time.perf_counter() - started < 20


async def test_a_failing_model_switches_to_its_fallback(lab: Lab) -> None:
    scripts = dict(lab.fake.script)

    def by_model(chat: Chat) -> Any:
        if chat.model == "strong":
            return HttpError(500)
        handler = scripts[chat.task]
        return handler(chat) if callable(handler) else handler[0]

    for task in ("synthesize", "verify"):
        lab.fake.script[task] = by_model
    result, job = await lab.ask(strong_fallbacks=["openai/backup"], attempts=2)
    assert job.metrics["llm_calls_by_model"]["openai/backup"] == 2
    assert result.answer.metadata["synthesizer"] == "llm:openai/strong"
    assert "12 and 16 hours" in result.answer.summary


async def test_a_persistent_500_degrades_to_an_honest_answer(lab: Lab) -> None:
    for task in list(lab.fake.script):
        lab.fake.script[task] = [HttpError(500)]
    result, job = await lab.ask(attempts=2)
    assert job.metrics["llm_degraded"]
    assert result.answer.metadata["synthesizer"] == "extractive"
    assert "12 and 16 hours" in result.answer.summary and result.references
    assert result.answer.confidence in (Confidence.LOW, Confidence.INSUFFICIENT)
    assert any("language model failed" in item for item in result.answer.limitations)
    # Degraded: no more calls after the job gave up on the model.
    assert len(lab.fake.chats) <= 2 * 4


async def test_an_invented_citation_is_removed_and_counted(lab: Lab) -> None:
    def invent(chat: Chat) -> Any:
        return {"summary": "Domestic cats sleep between 12 and 16 hours a day [1]. Cats are "
                           "nocturnal hunters of the moon [9].",
                "detail": "", "gaps": [],
                "claims": [{"text": "Domestic cats sleep between 12 and 16 hours a day [1].",
                            "sources": [1],
                            "quote": "Domestic cats sleep between 12 and 16 hours a day"},
                           {"text": "Cats are nocturnal hunters of the moon [9].",
                            "sources": [9], "quote": "hunters of the moon"}]}

    lab.fake.script["synthesize"] = invent
    result, job = await lab.ask()
    assert "[9]" not in result.answer.summary
    assert "hunters of the moon" not in result.answer.summary  # its only citation was [9]
    assert [r.number for r in result.references] == [1]
    assert job.metrics["citations_removed"] == 1 and job.metrics["claims_dangling"] == 1
    assert any("did not match a retrieved source" in item for item in result.answer.limitations)


async def test_an_unsupported_claim_is_removed(lab: Lab) -> None:
    def overclaim(chat: Chat) -> Any:
        return {"summary": "Domestic cats sleep between 12 and 16 hours a day [1].",
                "detail": "Cats sleep because they dream of mice [1].", "gaps": [],
                "claims": [{"text": "Domestic cats sleep between 12 and 16 hours a day [1].",
                            "sources": [1], "quote": "sleep between 12 and 16 hours a day"},
                           {"text": "Cats sleep because they dream of mice [1].",
                            "sources": [1], "quote": "dream of mice"}]}

    def judge(chat: Chat) -> Any:
        return {"verdicts": [{"claim": 1, "verdict": "supported"},
                             {"claim": 2, "verdict": "unsupported", "reason": "not stated"}]}

    lab.fake.script["synthesize"] = overclaim
    lab.fake.script["verify"] = judge
    result, job = await lab.ask()
    assert "dream of mice" not in result.answer.summary + result.answer.detail
    assert "12 and 16 hours" in result.answer.summary
    assert job.metrics["claims_unsupported"] == 1
    assert result.answer.confidence != Confidence.HIGH
    assert any("do not support were removed" in item for item in result.answer.limitations)


async def test_a_follow_up_is_rewritten_with_its_context(lab: Lab) -> None:
    def resolve(chat: Chat) -> Any:
        conversation = chat.prompt.split("<conversation>")[1].split("</conversation>")[0]
        assert QUESTION in conversation
        return {"refined_question": "What do cats need to eat?",
                "checklist": ["what cats need in their diet"], "question_type": "factual"}

    lab.fake.script["understand"] = resolve
    client = lab.client()
    turn = ConversationTurn(question=QUESTION, answer="Cats sleep 12 to 16 hours [1].")
    result = await client.run(ResearchRequest(question="What do they need to eat?",
                                              tenant="t1", history=[turn]))
    job = await lab.job(result.job_id)
    assert job.trace.refined_question == "What do cats need to eat?"
    assert line_after(next(c for c in lab.fake.chats if c.task == "plan").prompt,
                      "Question:") == "What do cats need to eat?"
    assert "taurine" in result.answer.summary + result.answer.detail
    assert result.question == "What do they need to eat?"


async def test_facts_past_the_budget_are_compacted(lab: Lab) -> None:
    def wordy(chat: Chat) -> Any:
        base = lab_evidence(chat)
        for score in base["scores"]:
            score["facts"] = [f"{fact} " + "Additional context about cats. " * 15
                              for fact in score["facts"]] * 3
        return base

    from tests.support.scripted_analyst import evidence as lab_evidence

    lab.fake.script["evidence"] = wordy
    result, job = await lab.ask(compact_facts_tokens=500)
    assert "compact" in lab.fake.tasks()
    assert job.metrics["fact_compactions"] >= 1
    assert result.answer.summary


def test_a_template_with_wrong_placeholders_stops_start_up() -> None:
    with pytest.raises(ConfigurationError, match="missing checklist"):
        PromptLibrary.load({"plan": "[user]\n${question} ${sources} ${max_queries} ${today}"})
    with pytest.raises(ConfigurationError, match="unknown colour"):
        PromptLibrary.load({"compact": "[user]\n${facts} ${colour}"})
    PromptLibrary.load()  # the shipped templates are valid


async def test_without_a_model_the_extractive_path_answers(lab: Lab, sqlite_engine: Any,
                                                           embedder: Any,
                                                           knowledge_base: Any) -> None:
    client = JobClient(build_jobs(build_research(
        local_sources(knowledge_base, PipelineSettings()), embedder, PipelineSettings()),
        sqlite_engine))
    result = await client.run(ResearchRequest(question=QUESTION, tenant="t1"))
    assert result.answer.metadata["synthesizer"] == "extractive"
    assert "12 and 16 hours" in result.answer.summary
    assert lab.fake.chats == []


async def test_improve_searches_again_only_when_the_feedback_needs_it(lab: Lab) -> None:
    first, _ = await lab.ask()
    client = lab.client()
    lab.fake.chats.clear()
    lab.fake.script["improve"] = lambda chat: {
        "needs_search": True, "queries": [{"text": "cats taurine meat diet"}]}
    improved = await client.improve("Also say what cats eat", "t1")
    assert lab.fake.tasks()[:3] == ["improve", "evidence", "synthesize"]
    job = await lab.job(improved.job_id)
    assert job.trace.searched_again and job.trace.improves == first.job_id
    assert job.trace.iterations[0].queries == ["cats taurine meat diet"]
    assert "Also say what cats eat" in next(
        c for c in lab.fake.chats if c.task == "synthesize").prompt
    assert not any("cut short" in item for item in improved.answer.limitations)


def test_a_tier_set_in_part_keeps_its_other_limits() -> None:
    settings = LLMSettings.model_validate({"fast_model": "openai/x",
                                           "quick": {"seconds": 30}})
    assert settings.quick == TierBudget(iterations=2, queries=3, sources=5, seconds=30,
                                        tokens=30_000)
    assert settings.strong_model is None and settings.enabled
    assert not LLMSettings().enabled


async def test_tokens_and_cost_are_booked_from_litellm(lab: Lab) -> None:
    _result, job = await lab.ask(fast_model="openai/gpt-4o-mini",
                                 strong_model="openai/gpt-4o-mini")
    prompt = sum(sum(len(m["content"]) for m in c.messages) // 4 for c in lab.fake.chats)
    assert job.metrics["prompt_tokens"] == prompt
    assert job.metrics["cost_usd"] > 0  # priced from litellm's bundled price table
    assert job.metrics["llm_calls_by_model"] == {"openai/gpt-4o-mini": 6}


EMPTY_SEARCHES = ["salamander regrowth phenomenon", "amphibian appendage restoration",
                  "caudate tissue renewal"]


def _reformulate(chat: Chat) -> dict[str, Any]:
    """What the reflect prompt asks of a model: each search it reports with few results
    searched again in other words; one repeat too, which the loop must not run again."""
    reported = re.findall(r"^- '(.+)': (\d+) results( \(few\))?$", chat.prompt, re.M)
    few = [text for text, count, flagged in reported if int(count) < 3 and flagged]
    assert few, chat.prompt
    wider = {"salamander regrowth phenomenon": "axolotl regeneration",
             "amphibian appendage restoration": "axolotl limbs"}
    return {"items": [{"item": 1, "status": "unsatisfied"}], "sufficient": False,
            "confidence": 0.1, "gaps": ["nothing found"],
            "new_queries": [{"text": wider[text], "sources": ["wikipedia"]}
                            for text in few if text in wider]
            + [{"text": few[0].upper(), "sources": ["wikipedia"]}]}


async def test_three_empty_searches_are_reformulated_and_the_new_ones_find_the_answer(
    lab: Lab,
) -> None:
    """The loop design's extended test: three searches that return nothing are reported to
    the reflection as such, the reformulated searches it proposes run in the next round (a
    repeat of one that ran does not), and they find what answers."""
    web = FakeWeb()
    web.articles.append(Article(
        "Axolotl", "The axolotl can regrow lost limbs, its spinal cord and parts of its heart.",
        "https://en.wikipedia.org/wiki/Axolotl"))
    await web.start()
    plans = iter([{"queries": [{"text": text, "sources": ["wikipedia"]}
                               for text in EMPTY_SEARCHES]}])
    lab.fake.script["plan"] = lambda chat: next(plans)
    reflections = iter([_reformulate, lambda chat: {
        "items": [{"item": 1, "status": "satisfied"}], "sufficient": True, "confidence": 0.9,
        "gaps": [], "new_queries": []}])
    lab.fake.script["reflect"] = lambda chat: next(reflections)(chat)
    question = "Which body parts can an axolotl regrow?"
    try:
        async with aiohttp.ClientSession() as session:
            wikipedia = WikipediaSource(session, SourcePolicy("wikipedia", timeout_s=5,
                                                              attempts=1, rate_per_s=100),
                                        web.base + "/w/api.php")
            research = build_research({"wikipedia": wikipedia}, lab.embedder,
                                      PipelineSettings(), lab.settings(quick=TierBudget(
                                          iterations=3, queries=8, sources=5, seconds=60,
                                          tokens=100_000)))
            result = await JobClient(build_jobs(research, lab.engine, progress_interval_s=0.0)
                                     ).run(ResearchRequest(question=question, tenant="t1",
                                                           depth=Depth.QUICK,
                                                           bypass_cache=True))
    finally:
        await web.stop()
    job = await lab.job(result.job_id)
    assert len(job.trace.iterations) >= 2, (job.trace, lab.fake.tasks(), web.hits)
    first, second = job.trace.iterations[:2]
    assert first.queries == EMPTY_SEARCHES and first.new_passages == 0
    reflected = next(chat for chat in lab.fake.chats if chat.task == "reflect")
    for text in EMPTY_SEARCHES:
        assert f"- {text!r}: 0 results (few)" in reflected.prompt
    assert "Reformulate searches that returned" in reflected.prompt
    assert second.queries == ["axolotl regeneration", "axolotl limbs"]  # the repeat dropped
    searched = [hit["srsearch"] for path, hit in web.hits if "srsearch" in hit]
    assert searched[:3] == EMPTY_SEARCHES and set(searched[3:]) == set(second.queries)
    assert second.new_passages >= 1
    assert "regrow lost limbs" in result.answer.summary + result.answer.detail
    assert [s.url for s in result.sources] == ["https://en.wikipedia.org/wiki/Axolotl"]
    assert result.answer.confidence != Confidence.INSUFFICIENT
