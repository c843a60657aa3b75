from core.research.intake import detect_intent
from core.research.planning import plan_queries


def _plan(question: str, max_queries: int = 6) -> list[str]:
    return [q.text for q in plan_queries(question, detect_intent(question), ["local"],
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
