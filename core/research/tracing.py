"""The trace of a research run as it goes: each round's searches, what they found summed
over the rounds, and the progress lines that say which round of how many it is, what each
source is sent, and how much of the checklist the evidence covers."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from core.models import (
    ChecklistCount,
    EvidenceOrigin,
    LabelledQuery,
    ProgressDetail,
    ResearchTotals,
    Round,
)
from core.research.planning import ResearchPlan
from core.research.search import SearchOutcome
from core.sources.protocol import SearchSource

QUERY_CHARS = 60  # of a query, in a progress line (the event's detail has it whole)
QUERIES_SHOWN = 3  # a source's queries named in a progress line; the rest are counted


def searched(plan: ResearchPlan, outcome: SearchOutcome) -> Round:
    """A round as the trace keeps it: its queries, each to each source, and what came back."""
    return Round(queries=[q.text for q in plan.queries], searches=outcome.searches,
                 results=outcome.passages, failures=outcome.failures)


def add_up(totals: ResearchTotals, outcome: SearchOutcome) -> None:
    """A round's searches and results added to the run's totals, source by source."""
    for search in outcome.searches:
        totals.queries[search.source] = totals.queries.get(search.source, 0) + 1
        totals.results[search.source] = totals.results.get(search.source, 0) + search.results


def origins(found_by: dict[str, EvidenceOrigin], outcome: SearchOutcome, round_: int) -> None:
    """The search that first found each passage, kept across rounds."""
    for source_id, search in outcome.found_by.items():
        found_by.setdefault(source_id, EvidenceOrigin(source=search.source, label=search.label,
                                                      query=search.query, round=round_))


def searching(round_: int, allowed: int, plan: ResearchPlan,
              sources: Mapping[str, SearchSource]) -> tuple[str, ProgressDetail]:
    """The search stage's opening line, "Round 2/3: searching Wikipedia: 'query' · arXiv:
    'query'", and its detail."""
    queries = [LabelledQuery(label=sources[name].label, query=planned.text)
               for planned in plan.queries for name in planned.sources if name in sources]
    detail = ProgressDetail(round=round_, rounds_allowed=allowed, queries=queries)
    return f"Round {round_}/{allowed}: searching {queries_line(queries)}", detail


def queries_line(queries: list[LabelledQuery],
                 quote: Callable[[str], str] = lambda text: text) -> str:
    """Each source with the queries it is sent: "Wikipedia: 'a', 'b' · arXiv: 'a'"; each
    query cut short and then passed through `quote` (a platform's escaping)."""
    by_label: dict[str, list[str]] = {}
    for labelled in queries:
        by_label.setdefault(labelled.label, []).append(labelled.query)
    parts = []
    for label, texts in by_label.items():
        shown = ", ".join(f"'{quote(_cut(text))}'" for text in texts[:QUERIES_SHOWN])
        more = len(texts) - QUERIES_SHOWN
        parts.append(f"{quote(label)}: {shown}" + (f" and {more} more" if more > 0 else ""))
    return " · ".join(parts)


def checklist_line(count: ChecklistCount) -> str:
    """ "Checklist 3/5 satisfied", with the points only partly covered when there are."""
    partly = f", {count.partial} partly" if count.partial else ""
    return f"Checklist {count.satisfied}/{count.total} satisfied{partly}"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUERY_CHARS else text[:QUERY_CHARS - 1].rstrip() + "…"

