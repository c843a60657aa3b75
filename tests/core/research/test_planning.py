import pytest

from core.research.intake import detect_intent
from core.research.planning import plan_queries, route_sources
from core.sources.local import LocalKnowledgeBaseSource
from core.sources.protocol import Capabilities, SourceKind
from core.sources.wikipedia import WikipediaSource

pytestmark = pytest.mark.unit

LOCAL = {"local": LocalKnowledgeBaseSource.capabilities}


def _plan(question: str, max_queries: int = 6) -> list[str]:
    return [q.text for q in plan_queries(question, detect_intent(question), LOCAL,
                                         max_queries).queries]


def test_the_question_and_its_key_terms_come_first() -> None:
    assert _plan("How do I parse a TOML file?") == ["How do I parse a TOML file?",
                                                    "parse TOML file"]


def test_a_comparison_searches_each_side() -> None:
    plan = _plan("What is the difference between green tea and black tea?")
    assert "green tea" in plan and "black tea" in plan
    assert _plan("asyncio.gather vs TaskGroup")[-2:] == ["asyncio.gather", "TaskGroup"]


def test_the_plan_respects_its_budget_and_has_no_duplicates() -> None:
    assert len(_plan("Is PostgreSQL faster than MySQL?", max_queries=2)) == 2
    assert _plan("cats") == ["cats"]


def test_sources_are_routed_by_what_they_declare_not_by_their_names() -> None:
    # Two sources this code has never heard of: a web search and a biomedical index.
    sources = {**LOCAL, "kagi": Capabilities(SourceKind.WEB, snippets=True),
               "medline": Capabilities(SourceKind.SPECIALIST, topics=frozenset({"biomedical"})),
               "wikipedia": WikipediaSource.capabilities}
    assert route_sources("How many hours a day do cats sleep?", sources) == [
        "local", "kagi", "wikipedia"]  # a specialist is never asked off its topic
    assert route_sources("Which vaccines prevent measles infections?", sources) == [
        "local", "medline", "wikipedia", "kagi"]
    assert route_sources("What is new in quantum error correction papers?", sources) == [
        "local", "wikipedia", "kagi"]  # a research question, and no research specialist
