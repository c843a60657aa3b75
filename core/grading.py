"""Confidence and limitations, graded from the evidence an answer actually cites."""

from __future__ import annotations

from datetime import UTC, datetime

from core.models import Confidence, QueryIntent, Source
from core.search import SourceFailure
from core.text import terms
from core.verify import VerifiedAnswer

OLD_AFTER_YEARS = 5


def grade(
    answer: VerifiedAnswer,
    sources: list[Source],
    intent: QueryIntent,
    failures: list[SourceFailure],
    searched: list[str],
    now: datetime | None = None,
) -> tuple[Confidence, list[str]]:
    limitations: list[str] = []
    for source_name in sorted({f.source for f in failures}):
        reasons = sorted({f.reason for f in failures if f.source == source_name})
        limitations.append(
            f"The {source_name} source failed ({'; '.join(reasons)[:200]}); "
            "results may be incomplete."
        )
    if searched == ["local"]:
        limitations.append("Only the local knowledge base was searched.")
    by_id = {s.id: s for s in sources}
    cited = [by_id[i] for i in answer.cited_sources if i in by_id]
    if not cited:
        return Confidence.INSUFFICIENT, limitations
    documents = {s.document_id or s.url or s.path or s.id for s in cited}
    best = max(s.metadata.relevance for s in cited)
    wanted = list(dict.fromkeys(intent.key_terms))
    found = set(terms(" ".join(f"{s.title} {s.location or ''} {s.content}" for s in cited)))
    missing = [t for t in wanted if t not in found]
    coverage = 1.0 - len(missing) / len(wanted) if wanted else 1.0

    if len(documents) == 1:
        limitations.append("Based on a single document; no other source corroborates it.")
    if missing:
        limitations.append(
            "The cited sources do not mention: " + ", ".join(missing[:8]) + "."
        )
    oldest = _oldest_year(cited)
    if oldest is not None and oldest <= (now or datetime.now(UTC)).year - OLD_AFTER_YEARS:
        limitations.append(f"Some sources date from {oldest}; newer information may exist.")
    removed = answer.unknown_markers_removed + answer.unsupported_citations_removed
    if removed:
        limitations.append(
            f"{removed} citation(s) that did not match a retrieved source were removed."
        )

    if len(documents) >= 2 and coverage >= 0.8 and best >= 0.55 and not failures:
        confidence = Confidence.HIGH
    elif coverage >= 0.6 and best >= 0.45:
        confidence = Confidence.MEDIUM
    else:
        confidence = Confidence.LOW
    return confidence, limitations


def _oldest_year(sources: list[Source]) -> int | None:
    years = [s.metadata.published_at.year for s in sources if s.metadata.published_at]
    return min(years) if years else None
