import asyncio
from typing import Any

import pytest
from sqlalchemy import select

from core.answer.cache import SemanticAnswerCache, exact_hit
from core.config import CacheSettings
from core.models import Confidence, JobStatus, ResearchAnswer, ResearchResult
from core.research.intake import detect_intent
from core.store.answers import CachedAnswerStore
from core.store.database import cached_answers
from tests.support.clock import FakeClock

pytestmark = pytest.mark.integration


def _result(summary: str, confidence: Confidence = Confidence.MEDIUM) -> ResearchResult:
    return ResearchResult(
        job_id="j1", status=JobStatus.COMPLETED, question="q",
        answer=ResearchAnswer(summary=summary, confidence=confidence),
    )


@pytest.fixture
def cache(sqlite_engine: Any, chroma: Any, embedder: Any) -> SemanticAnswerCache:
    return SemanticAnswerCache(CachedAnswerStore(sqlite_engine), chroma, embedder,
                               CacheSettings())


async def _store(cache: SemanticAnswerCache, question: str, tenant: str = "t1",
                 summary: str = "Cats sleep 12 to 16 hours a day.", scope: str = "") -> bool:
    return await cache.store(question, tenant, detect_intent(question), _result(summary), scope)


async def test_exact_and_paraphrase_hits(cache: SemanticAnswerCache) -> None:
    assert await _store(cache, "How many hours a day do cats sleep?")
    exact = await cache.lookup("  how many HOURS a day do cats sleep ", "t1")
    assert exact is not None and exact.exact and exact.similarity == 1.0
    assert exact.result.answer.summary.startswith("Cats sleep")
    paraphrase = await cache.lookup("How many hours per day do cats sleep?", "t1")
    assert paraphrase is not None and not paraphrase.exact
    assert paraphrase.similarity >= 0.90


async def test_near_misses_and_other_tenants_miss(cache: SemanticAnswerCache) -> None:
    await _store(cache, "How many hours a day do cats sleep?")
    assert await cache.lookup("How many hours a day do dogs sleep?", "t1") is None
    assert await cache.lookup("What do cats eat?", "t1") is None
    assert await cache.lookup("How many hours a day do cats sleep?", "t2") is None


async def test_scope_and_ttl_rules(sqlite_engine: Any, chroma: Any, embedder: Any) -> None:
    answers = CachedAnswerStore(sqlite_engine)
    cache = SemanticAnswerCache(answers, chroma, embedder,
                                CacheSettings(current_event_ttl_hours=0))
    await _store(cache, "How many hours a day do cats sleep?", scope="kb1")
    assert await cache.lookup("How many hours a day do cats sleep?", "t1", "kb2") is None
    assert await cache.lookup("How many hours a day do cats sleep?", "t1", "kb1") is not None
    assert not await _store(cache, "What is the latest news about cats today?")
    insufficient = _result("The sources do not answer this.", Confidence.INSUFFICIENT)
    assert not await cache.store("Where do unicorns live?", "t1",
                                 detect_intent("Where do unicorns live?"), insufficient)
    expired = SemanticAnswerCache(answers, chroma, embedder, CacheSettings(ttl_hours=0.0000001))
    await _store(expired, "What is the boiling point of water?")
    assert await expired.lookup("What is the boiling point of water?", "t1") is None


@pytest.mark.parametrize(
    ("question", "cached", "same"),
    [
        # paraphrases: reordered, possessive, politeness, contractions, inflection
        ("How can I convert a string into an integer?", "How do I convert a string to an integer?",
         True),
        ("Who was Rome's first emperor?", "Who was the first emperor of Rome?", True),
        ("Can you tell me how long cats sleep?", "How long do cats sleep?", True),
        ("Which snakes aren't venomous?", "Which snakes are not venomous?", True),
        ("At sea level, what is water's boiling point?",
         "What is the boiling point of water at sea level?", True),
        ("In what year did Napoleon die?", "When did Napoleon die?", True),
        # near-misses: negation, every digit, a qualifier, roles, answer kind, comparatives
        ("Which snakes are not venomous?", "Which snakes are venomous?", False),
        ("How much does a 1 carat diamond cost?", "How much does a 2 carat diamond cost?", False),
        ("How much does a one carat diamond cost?", "How much does a 2 carat diamond cost?",
         False),
        ("How long do Asian elephants live?", "How long do elephants live?", False),
        ("Did Carthage conquer Rome?", "Did Rome conquer Carthage?", False),
        ("What is the exchange rate from dollars to euros?",
         "What is the exchange rate from euros to dollars?", False),
        ("Where was Mozart born?", "When was Mozart born?", False),
        ("What is the smallest planet?", "What is the largest planet?", False),
        ("How do I convert an integer to a string?", "How do I convert a string to an integer?",
         False),
        ("How do I serve an HTTP request in Python?", "How do I make an HTTP request in Python?",
         False),
        ("Should dogs eat grapes?", "Can dogs eat grapes?", False),
        ("What happened in Europe before 1914?", "What happened in Europe after 1914?", False),
    ],
)
def test_a_cached_question_must_ask_the_same_thing(
    embedder: Any, question: str, cached: str, same: bool
) -> None:
    from core.answer.question_match import same_question

    vectors = embedder.embed([question, cached])
    similarity = float(vectors[0] @ vectors[1])
    assert similarity >= 0.7  # close enough that the embedding alone would often say "same"
    assert same_question(question, cached, similarity, 0.7) is same


async def test_a_near_miss_is_not_served(cache: SemanticAnswerCache) -> None:
    await _store(cache, "How do I convert a string to an integer?", summary="Use int(s).")
    assert await cache.lookup("How do I convert an integer to a string?", "t1") is None
    assert await cache.lookup("How can I convert a string into an integer?", "t1") is not None


async def test_a_paraphrase_in_other_words_is_served_through_the_lookup(
    cache: SemanticAnswerCache,
) -> None:
    """Passive voice, politeness, "how many people live in": the neighbours Chroma returns
    and the shipped threshold let through what the guard accepts, and no near-miss."""
    await _store(cache, "Who founded the Red Cross?", summary="Henry Dunant.")
    await _store(cache, "What is the population of Peru?", summary="About 34 million.")
    await _store(cache, "How many people live in Chile?", summary="About 20 million.")
    founder = await cache.lookup("Could you tell me who the Red Cross was founded by?", "t1")
    assert founder is not None and founder.result.answer.summary == "Henry Dunant."
    peru = await cache.lookup("How many people live in Peru?", "t1")
    assert peru is not None and peru.result.answer.summary == "About 34 million."
    assert await cache.lookup("What did the Red Cross found?", "t1") is None
    assert await cache.lookup("How many people live in Lima?", "t1") is None
    assert await cache.lookup("What is the population density of Chile?", "t1") is None


async def test_under_load_no_question_is_served_another_ones_answer(
    cache: SemanticAnswerCache,
) -> None:
    projects = [f"billing-{n}" for n in range(1, 9)] + [f"atlas v{n}" for n in range(2, 8)]
    questions = [template.format(p) for p in projects
                 for template in ("How do I install {}?", "What license does {} use?")]
    stored = questions[::4]  # neighbours differ by one digit: billing-1 / billing-2
    for question in stored:
        await _store(cache, question, summary=f"answer to {question}")
    hits = await asyncio.gather(*(cache.lookup(q, "t1") for q in questions))
    served = {q: h.result.answer.summary for q, h in zip(questions, hits, strict=True) if h}
    assert served == {q: f"answer to {q}" for q in stored}


async def test_a_result_may_shorten_or_forbid_its_time_in_the_cache(
    sqlite_engine: Any, chroma: Any, embedder: Any,
) -> None:
    clock = FakeClock(start=1_800_000_000.0)
    cache = SemanticAnswerCache(CachedAnswerStore(sqlite_engine), chroma, embedder,
                                CacheSettings(), clock=clock)
    question = "How many hours a day do cats sleep?"
    unchecked = _result("Cats sleep.").model_copy(update={"max_cache_seconds": 0})
    assert not await cache.store(question, "t1", detect_intent(question), unchecked)
    assert await cache.lookup(question, "t1") is None
    brief = _result("Cats sleep.").model_copy(update={"max_cache_seconds": 2.0})
    assert await cache.store(question, "t1", detect_intent(question), brief)
    assert await cache.lookup(question, "t1") is not None
    clock.advance(2.1)
    assert await cache.lookup(question, "t1") is None


async def test_an_exact_repeat_is_answered_from_the_database_alone(
    any_engine: Any, chroma: Any, embedder: Any,
) -> None:
    """The exact half needs neither the embedder nor the vector store: `exact_hit` reads the
    job database (SQLite and PostgreSQL), honours scope, tenant and expiry, and a cache
    that stores again replaces the answer and drops the tenant's expired ones."""
    clock = FakeClock(start=1_800_000_000.0)
    answers = CachedAnswerStore(any_engine)
    cache = SemanticAnswerCache(answers, chroma, embedder, CacheSettings(ttl_hours=1),
                                clock=clock)
    question = "How many hours a day do cats sleep?"
    await _store(cache, question, scope="kb3", summary="Twelve to sixteen.")
    hit = await exact_hit(answers, "  how many HOURS a day do cats sleep ", "t1", "kb3", clock())
    assert hit is not None and hit.exact and hit.result.answer.summary == "Twelve to sixteen."
    assert hit.cached_at.timestamp() == clock()
    assert await exact_hit(answers, question, "t1", "kb4", clock()) is None
    assert await exact_hit(answers, question, "t2", "kb3", clock()) is None
    assert await exact_hit(answers, question, "t1", "kb3", clock() + 3601) is None

    await _store(cache, question, scope="kb3", summary="About fourteen.")
    again = await exact_hit(answers, question, "t1", "kb3", clock())
    assert again is not None and again.result.answer.summary == "About fourteen."
    clock.advance(7200)  # the first answers expired; storing another sweeps them
    await _store(cache, "What do cats eat?", scope="kb3")
    async with any_engine.connect() as connection:
        kept = (await connection.execute(select(cached_answers.c.question))).scalars().all()
    assert kept == ["What do cats eat?"]
