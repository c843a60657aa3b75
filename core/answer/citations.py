"""Citation verification: a pure function from a draft and the retrieved set to a checked
answer whose markers are renumbered [1..n] and whose reference list is built by code."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from core.answer.synthesis.base import Draft
from core.models import Citation, Reference, Source
from core.text import normalise, sentences, terms

_MARKER = re.compile(r"\s?\[(\d+(?:\s*,\s*\d+)*)\]")


class VerifiedAnswer(BaseModel):
    summary: str
    detail: str
    citations: list[Citation] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    unknown_markers_removed: int = 0
    unsupported_citations_removed: int = 0

    @property
    def cited_sources(self) -> list[str]:
        return [r.source_id for r in self.references]


def verify_citations(draft: Draft, sources: list[Source]) -> VerifiedAnswer:
    numbering: dict[int, int] = {}
    removed = 0

    def renumber(match: re.Match[str]) -> str:
        nonlocal removed
        kept = []
        for raw in match.group(1).split(","):
            k = int(raw)
            if 1 <= k <= len(sources):
                kept.append(numbering.setdefault(k, len(numbering) + 1))
            else:
                removed += 1
        if not kept:
            return ""
        return " [" + ", ".join(str(n) for n in sorted(set(kept))) + "]"

    summary = _MARKER.sub(renumber, draft.summary).strip()
    detail = _MARKER.sub(renumber, draft.detail).strip()
    by_id = {s.id: s for s in sources}
    position = {sources[k - 1].id: n for k, n in numbering.items()}
    citations: list[Citation] = []
    unsupported = 0
    for citation in draft.citations:
        source = by_id.get(citation.source_id)
        if source is None or citation.source_id not in position:
            removed += source is None
            continue
        if not quote_supported(citation.quote, source):
            unsupported += 1
            continue
        citations.append(citation)
    citations.sort(key=lambda c: position[c.source_id])
    references = [
        Reference(
            number=n,
            source_id=sources[k - 1].id,
            title=sources[k - 1].title,
            where=sources[k - 1].reference,
        )
        for k, n in sorted(numbering.items(), key=lambda item: item[1])
    ]
    return VerifiedAnswer(
        summary=summary,
        detail=detail,
        citations=citations,
        references=references,
        unknown_markers_removed=removed,
        unsupported_citations_removed=unsupported,
    )


def quote_supported(quote: str, source: Source) -> bool:
    """True when the quote's words appear, in order, in the source's text."""
    needle = normalise(quote)
    return bool(needle) and needle in normalise(f"{source.content} {source.snippet}")


# What a sentence may state that its quote must also state: its numbers and its negation.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|cannot|without)\b|n't\b", re.I)
MIN_QUOTE_WORDS = 4
# Words that attribute a statement without adding to it ("According to the sources, ...").
_ATTRIBUTION = frozenset(terms("according source sources reported reports notably says said "
                               "describes described"))
GROUNDED_SHARE = 0.5


def quotes_cover(sentence: str, quotes: list[str]) -> bool:
    """True when the quotes (each already found verbatim in a cited source) say everything
    the sentence says, as far as words can tell: every content word and number of the sentence
    is in them, and the sentence denies something only if they do. A quote that states a fact
    does not vouch for a sentence that changes a name or a number in it."""
    quotes = [q for q in quotes if len(normalise(q).split()) >= MIN_QUOTE_WORDS]
    if not quotes:
        return False
    joined = " ".join(quotes)
    wanted = set(terms(sentence)) - _ATTRIBUTION
    return bool(wanted) and wanted <= set(terms(joined)) \
        and _numbers(sentence) <= _numbers(joined) \
        and bool(_NEGATION.search(sentence)) == bool(_NEGATION.search(joined))


def grounded(sentence: str, texts: list[str]) -> bool:
    """True when the cited texts hold every number of the sentence and at least half of its
    content words: the floor under a model's 'supported' verdict, which a judge gets wrong
    more often for a sentence that shares little with its source."""
    wanted = set(terms(sentence))
    found = set(terms(" ".join(texts)))
    return _numbers(sentence) <= _numbers(" ".join(texts)) and (
        not wanted or len(wanted & found) >= GROUNDED_SHARE * len(wanted))


def best_quote(sentence: str, text: str) -> str:
    """The sentence of `text` sharing the most content words with `sentence`."""
    wanted = set(terms(sentence))
    return max(sentences(text) or [text], key=lambda s: len(wanted & set(terms(s))))


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}
