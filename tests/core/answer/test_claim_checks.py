"""Every sentence of a model's answer checked against its sources, budgets that hold for the
whole job, and model trouble told as such: the real pipeline, litellm and a scripted (or
flawed) OpenAI-compatible server on 127.0.0.1."""

import re
import time
from typing import Any

import pytest

from core.answer.sentences import parse
from core.answer.synthesis.extractive import NO_ANSWER
from core.config import TierBudget
from core.models import Confidence
from core.research.engine import MODEL_TROUBLE_ANSWER
from tests.support import scripted_analyst as scripted
from tests.support.fake_openai import Chat, HttpError
from tests.support.flawed_model import FlawedModel, survivors
from tests.support.scripted_analyst import Lab

pytestmark = pytest.mark.integration

SLEEP = "Domestic cats sleep between 12 and 16 hours a day"
LONGER = "Kittens and old cats sleep even longer"
ACTIVE = "Cats are most active at dawn and dusk, which makes them crepuscular animals"


def number_of(chat: Chat, words: str) -> int:
    """The number the synthesis prompt gives the source whose excerpt holds `words`."""
    for number, excerpt in re.findall(r"^\[(\d+)\] .*?<excerpt>\n(.*?)\n</excerpt>",
                                      chat.prompt, re.S | re.M):
        if words in excerpt:
            return int(number)
    raise AssertionError(f"no source holds {words!r}")


def writes(summary: str, detail: str = "", listed: tuple[str, ...] | None = None) -> Any:
    """A synthesis script: `{n}` in the texts is the sleep passage's number; `claims` lists
    the sentences of `listed` (default: every cited one), each quoting itself."""
    def reply(chat: Chat) -> dict[str, Any]:
        n = number_of(chat, SLEEP)
        text = {"summary": summary.format(n=n), "detail": detail.format(n=n)}
        sentences = [s for part in text.values() for s in re.findall(r"[^.\n]+\[[\d, ]+\]\.",
                                                                     part)]
        wanted = [s.strip() for s in sentences
                  if listed is None or any(words in s for words in listed)]
        return {**text, "gaps": [], "claims": [
            {"text": s, "sources": [int(k) for k in re.findall(r"\d+", s.split("[")[-1])],
             "quote": re.sub(r"\s*\[[\d, ]+\]\.$", "", s)} for s in wanted]}
    return reply


def judges(unsupported: tuple[str, ...], seen: list[str] | None = None) -> Any:
    """A verification script: claims holding any of `unsupported` are unsupported."""
    def reply(chat: Chat) -> dict[str, Any]:
        if seen is not None:
            seen.append(chat.prompt)
        claims = re.findall(r"^Claim (\d+): (.+)$", chat.prompt, re.M)
        return {"verdicts": [{"claim": int(n), "verdict": "unsupported"
                              if any(words in text for words in unsupported) else "supported"}
                             for n, text in claims]}
    return reply


def text_of(result: Any) -> str:
    return f"{result.answer.summary}\n\n{result.answer.detail}"


async def test_a_sentence_citing_only_an_unknown_source_is_removed(lab: Lab) -> None:
    lab.fake.script["synthesize"] = writes(
        f"{SLEEP} [{{n}}]. Cats sleep in cardboard boxes to stay warm [99]. "
        f"{LONGER} [{{n}}, 99].")
    result, job = await lab.ask()
    text = text_of(result)
    assert "cardboard boxes" not in text and "[99]" not in text
    assert f"{LONGER} [1]." in text  # its other citation still stands
    assert job.metrics["claims_dangling"] == 1 and job.metrics["invalid_citations"] == 2
    assert any("did not match a retrieved source" in item and "relied on them" in item
               for item in result.answer.limitations)


async def test_an_uncited_factual_sentence_is_removed(lab: Lab) -> None:
    lab.fake.script["synthesize"] = writes(
        f"{SLEEP} [{{n}}]. Cats purr when they are content. The sources do not say how "
        "long kittens sleep.")
    result, job = await lab.ask()
    assert "purr" not in text_of(result)
    assert "The sources do not say how long kittens sleep." in result.answer.summary
    assert job.metrics["claims_uncited"] == 1
    assert any("cited no source were removed" in item for item in result.answer.limitations)


async def test_a_sentence_left_out_of_claims_is_still_judged(lab: Lab) -> None:
    seen: list[str] = []
    lab.fake.script["synthesize"] = writes(
        f"{SLEEP} [{{n}}]. Cats dream of chasing mice every night [{{n}}].",
        listed=("Domestic",))
    lab.fake.script["verify"] = judges(("dream",), seen)
    result, job = await lab.ask()
    assert any("Cats dream of chasing mice every night" in prompt for prompt in seen)
    assert "dream" not in text_of(result) and "12 and 16 hours" in result.answer.summary
    assert job.metrics["claims_unsupported"] == 1 and job.metrics["claims_judged"] == 2


async def test_a_reply_without_verdicts_leaves_the_answer_unchecked_low_and_uncached(
    lab: Lab,
) -> None:
    lab.fake.script["synthesize"] = writes(
        f"{SLEEP} [{{n}}]. Cats doze for roughly half of every day [{{n}}].")
    lab.fake.script["verify"] = lambda chat: {"result": "all fine"}
    result, job = await lab.ask()
    assert len([c for c in lab.fake.chats if c.task == "verify"]) == 2  # asked once more
    assert job.metrics["verification"] == "not run"
    assert any("claims could not be checked against the sources" in item
               for item in result.answer.limitations)
    assert result.answer.confidence == Confidence.LOW
    assert result.max_cache_seconds == 0 and not job.metrics.get("cache_stored")
    # What the code can check alone, it still does: the verbatim sentence stays.
    assert "12 and 16 hours" in result.answer.summary and "doze" not in text_of(result)


async def test_a_verbatim_quote_outweighs_a_wrong_verdict(lab: Lab) -> None:
    lab.fake.script["synthesize"] = writes(
        f"{SLEEP} [{{n}}]. Domestic dogs sleep between 12 and 16 hours a day [{{n}}].")
    lab.fake.script["verify"] = judges(("sleep",))  # wrong about the first, right after
    result, job = await lab.ask()
    assert f"{SLEEP} [1]." in result.answer.summary
    assert "dogs" not in text_of(result)  # a quote of the source does not vouch for a swap
    assert job.metrics["verdict_disagreements"] == 1
    assert job.metrics["claims_kept_by_quote"] == 1 and job.metrics["claims_unsupported"] == 1


async def test_a_reworded_sentence_needs_the_sources_words_pointed_out(lab: Lab) -> None:
    lab.fake.script["synthesize"] = writes(
        "Domestic cats sleep 12 to 16 hours daily [{n}]. Domestic cats sleep longer in "
        "winter [{n}].", listed=())
    confirms: list[str] = []

    def confirm(chat: Chat) -> Any:
        confirms.append(chat.prompt)
        found = scripted.confirm(chat)
        for item in found["quotes"]:  # the source says nothing of winter
            item["quote"] = "" if item["claim"] == 2 else item["quote"]
        return found

    lab.fake.script["confirm"] = confirm
    result, job = await lab.ask()  # both judged supported
    assert len(confirms) == 1 and "Claim 2: Domestic cats sleep longer in winter" in confirms[0]
    assert "12 to 16 hours daily [1]" in result.answer.summary
    assert "winter" not in text_of(result)
    assert job.metrics["claims_confirmed"] == 1 and job.metrics["claims_unconfirmed"] == 1
    assert result.answer.citations[0].quote == f"{SLEEP}."  # the words found in the source


async def test_removing_one_bullet_keeps_the_rest_of_the_list_and_its_headings(
    lab: Lab,
) -> None:
    lab.fake.script["synthesize"] = writes(
        f"{SLEEP} [{{n}}].",
        f"## Sleep\n\n1. {SLEEP} [{{n}}].\n2. Cats sleep upside down when it rains [{{n}}].\n"
        f"3. {LONGER} [{{n}}].\n\n## Activity\n\nIn short:\n\n- {ACTIVE} [{{n}}].\n\n"
        "## Dreams\n\n- Cats dream in colour [{n}].")
    lab.fake.script["verify"] = judges(("upside down", "colour"))
    result, _job = await lab.ask()
    assert result.answer.detail == (
        f"## Sleep\n\n1. {SLEEP} [1].\n2. {LONGER} [1].\n\n"
        f"## Activity\n\nIn short:\n\n- {ACTIVE} [1].")


def test_markdown_answers_are_split_and_rebuilt() -> None:
    answer = parse("# Tea\n\nBlack tea is oxidised [1]. It is dark.[2] Is it strong?\n\n"
                   "| Tea | Caffeine |\n|---|---|\n| Black | 47 mg [1] |\n| Green | 28 mg [1] |\n"
                   "\n```\ncode [3]\n```\n\n- A cup has about 47 mg. of caffeine [1].\n"
                   "  It varies [1].\n\nKey points:\n\n- Invented [9].")
    found = [(s.text, s.markers, s.is_claim) for s in answer.sentences]
    assert found == [
        ("Black tea is oxidised [1].", [1], True), ("It is dark.[2]", [2], True),
        ("Is it strong?", [], False), ("| Black | 47 mg [1] |", [1], True),
        ("| Green | 28 mg [1] |", [1], True),
        ("A cup has about 47 mg. of caffeine [1].", [1], True),
        ("It varies [1].", [1], True), ("Key points:", [], False),
        ("Invented [9].", [9], True)]
    kept = {s.index: s.text for s in answer.sentences if s.index not in (4, 8)}
    assert answer.render(kept) == (
        "# Tea\n\nBlack tea is oxidised [1]. It is dark.[2] Is it strong?\n\n"
        "| Tea | Caffeine |\n|---|---|\n| Black | 47 mg [1] |\n\n```\ncode [3]\n```\n\n"
        "- A cup has about 47 mg. of caffeine [1]. It varies [1].")
    assert parse("## Only\n\n- Gone [1].").render({}) == ""


async def test_a_stall_in_writing_ends_at_the_tiers_time_limit(lab: Lab) -> None:
    await lab.ask()  # the process's first model call (imports, connections) is not timed
    lab.fake.delays["synthesize"] = 30
    started = time.perf_counter()
    result, job = await lab.ask(quick=TierBudget(iterations=2, queries=3, sources=5,
                                                 seconds=4, tokens=30_000))
    assert time.perf_counter() - started < 4 + 1.5
    assert "time limit of 4 s" in job.metrics["cut_short"]
    assert result.answer.metadata["synthesizer"] == "extractive"
    assert "12 and 16 hours" in result.answer.summary
    assert any("writing the answer" in item for item in result.answer.limitations)


async def test_a_stall_in_checking_ends_at_the_tiers_time_limit_unchecked(lab: Lab) -> None:
    await lab.ask()  # the process's first model call (imports, connections) is not timed
    lab.fake.delays["verify"] = 30
    lab.fake.script["synthesize"] = writes(f"{SLEEP} [{{n}}]. Cats nap a lot [{{n}}].")
    started = time.perf_counter()
    result, job = await lab.ask(quick=TierBudget(iterations=2, queries=3, sources=5,
                                                 seconds=4, tokens=30_000))
    assert time.perf_counter() - started < 4 + 1.5
    assert job.metrics["verification"] == "not run" and result.max_cache_seconds == 0
    assert result.answer.confidence == Confidence.LOW
    assert "12 and 16 hours" in result.answer.summary and "nap a lot" not in text_of(result)


async def test_the_token_budget_holds_for_the_whole_job(lab: Lab) -> None:
    def never_enough(chat: Chat) -> dict[str, Any]:
        return {"items": [{"item": 1, "status": "partial"}], "sufficient": False,
                "gaps": ["more"], "new_queries": [{"text": f"cats {time.perf_counter_ns()}"}]}

    lab.fake.script["reflect"] = never_enough
    lab.fake.completion_tokens = 900  # every reply as long as the cap allows
    result, job = await lab.ask(quick=TierBudget(iterations=10, queries=10, sources=5,
                                                 seconds=60, tokens=5_000))
    assert job.metrics["tokens"] <= 5_000
    assert all(chat.max_tokens is not None for chat in lab.fake.chats)
    assert "budget of 5,000 tokens" in job.metrics["cut_short"]
    assert any("budget of 5,000 tokens" in item for item in result.answer.limitations)
    assert "12 and 16 hours" in result.answer.summary


async def test_a_408_is_retried(lab: Lab) -> None:
    lab.fake.script["understand"] = [HttpError(408), scripted.understand]
    result, job = await lab.ask()
    assert len([c for c in lab.fake.chats if c.task == "understand"]) == 2
    assert job.metrics["llm_retries"] == 1 and job.metrics["llm_failed_calls"] == 0
    assert not any("language model failed" in item for item in result.answer.limitations)


@pytest.mark.parametrize("trouble", ["evidence without scores", "scores for no passage",
                                     "429 storm"])
async def test_model_trouble_never_reads_as_the_sources_not_answering(
    lab: Lab, trouble: str,
) -> None:
    if trouble == "429 storm":
        for task in list(lab.fake.script):
            lab.fake.script[task] = [HttpError(429, retry_after=0.1)]
    elif trouble == "scores for no passage":
        lab.fake.script["evidence"] = lambda chat: {"scores": [{"passage": 99,
                                                                "relevance": 1.0}]}
    else:
        lab.fake.script["evidence"] = lambda chat: {"passages": "all relevant"}
    result, _job = await lab.ask()
    assert result.answer.summary not in (NO_ANSWER, MODEL_TROUBLE_ANSWER)
    assert "12 and 16 hours" in result.answer.summary
    assert any("language model failed" in item for item in result.answer.limitations)
    assert result.answer.confidence == Confidence.LOW
    assert result.max_cache_seconds is not None and result.max_cache_seconds <= 300


async def test_improve_grades_its_revision_from_its_evidence_and_drops_a_failing_sentence(
    lab: Lab,
) -> None:
    first, _ = await lab.ask()
    lab.fake.script["synthesize"] = writes(
        f"{SLEEP} [{{n}}]. {LONGER} [{{n}}]. Kittens sleep 22 hours a day [{{n}}].")
    lab.fake.script["verify"] = judges(("22 hours",))
    improved = await lab.client().improve("Say how long kittens sleep", "t1")
    assert "22 hours" not in text_of(improved)
    assert f"{LONGER} [1]." in improved.answer.summary
    assert improved.answer.confidence in (Confidence.MEDIUM, Confidence.HIGH)
    assert improved.answer.metadata["checklist_coverage"] == 1.0
    prompt = next(c for c in reversed(lab.fake.chats) if c.task == "synthesize").prompt
    previous = prompt.split("Previous answer:")[1]
    assert f"[{number_of(lab.fake.chats[-2], SLEEP)}]" in previous  # cited as numbered now
    assert first.answer.confidence in (Confidence.MEDIUM, Confidence.HIGH)


async def test_a_flawed_model_gets_no_fabrication_past_an_honest_judge(lab: Lab) -> None:
    model = FlawedModel(1.0, verifier_error=0.0, seed=0, missing_verdicts_rate=0.0)
    model.install(lab.fake)
    fabricated = kept = invented_citations = 0
    for question in ("How many hours a day do domestic cats sleep?",
                     "How much caffeine is in a cup of black tea and green tea?",
                     "When did Mount Vesuvius erupt and what did it bury?"):
        model.written.clear()
        result, _job = await lab.ask(question)
        final = survivors(model, text_of(result))
        fabricated += sum(w.invented for w in model.written)
        kept += sum(w.invented for w in final)
        assert all(w in final for w in model.written if not w.invented and not w.fault), \
            "a true, cited sentence was removed"
        numbers = {r.number for r in result.references}
        invented_citations += sum(int(n) not in numbers
                                  for n in re.findall(r"\[(\d+)\]", text_of(result)))
    assert fabricated >= 2 and kept == 0 and invented_citations == 0
