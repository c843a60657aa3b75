"""An answer made of the retrieved sentences that best answer the question; no model needed."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

import numpy as np

from core.embedding import Embedder
from core.models import Citation, QueryIntent, QuestionType, Source
from core.ranking import maximal_marginal_relevance
from core.synthesis.base import Draft
from core.text import sentences, terms

NO_ANSWER = "The indexed sources do not answer this question."


@dataclass
class _Candidate:
    source_index: int
    position: int
    text: str
    semantic: float = 0.0
    lexical: float = 0.0

    @property
    def score(self) -> float:
        return 0.65 * self.semantic + 0.35 * self.lexical


class ExtractiveSynthesizer:
    name = "extractive"

    def __init__(
        self, embedder: Embedder, max_sentences: int = 6, min_sentence_score: float = 0.32
    ) -> None:
        self._embedder = embedder
        self._max_sentences = max_sentences
        self._min_score = min_sentence_score

    async def synthesize(self, question: str, intent: QueryIntent, sources: list[Source]) -> Draft:
        candidates = _candidates(sources)
        if not candidates:
            return Draft(summary=NO_ANSWER)
        vectors = await asyncio.to_thread(
            self._embedder.embed, [question] + [c.text for c in candidates]
        )
        question_terms = set(intent.key_terms or terms(question))
        for candidate, vector in zip(candidates, vectors[1:], strict=True):
            candidate.semantic = float(max(0.0, vector @ vectors[0]))
            found = set(terms(candidate.text))
            candidate.lexical = len(question_terms & found) / len(question_terms) if (
                question_terms) else 0.0
        keep = [n for n, c in enumerate(candidates) if c.score >= self._min_score]
        if not keep:
            return Draft(summary=NO_ANSWER)
        picked = [keep[k] for k in maximal_marginal_relevance(
            np.asarray([candidates[n].score for n in keep]),
            vectors[1:][keep],
            self._max_sentences,
            trade_off=0.85,
        )]
        picked = _cover_entities(picked, candidates, keep, intent)
        picked = [n for n in picked if not _redundant(n, picked, vectors[1:])]
        chosen = [candidates[n] for n in picked]
        lead = max(chosen, key=lambda c: c.score)
        rest = sorted((c for c in chosen if c is not lead),
                      key=lambda c: (c.source_index, c.position))
        return Draft(
            summary=_cite(lead),
            detail=" ".join(_cite(c) for c in rest),
            citations=[
                Citation(claim=c.text, source_id=sources[c.source_index].id, quote=c.text)
                for c in [lead, *rest]
            ],
        )


def _candidates(sources: list[Source]) -> list[_Candidate]:
    found: list[_Candidate] = []
    seen: set[str] = set()
    for index, source in enumerate(sources):
        for position, sentence in enumerate(sentences(source.content or source.snippet)):
            key = " ".join(terms(sentence))
            if _usable(sentence) and key not in seen:
                seen.add(key)
                found.append(_Candidate(index, position, sentence))
    return found


def _usable(sentence: str) -> bool:
    if not 25 <= len(sentence) <= 600 or ">>>" in sentence:
        return False  # interactive-session code flattened into prose reads as noise
    letters = sum(c.isalpha() for c in sentence)
    return letters / len(sentence) > 0.55 and len(sentence.split()) >= 5


def _cover_entities(
    picked: list[int], candidates: list[_Candidate], keep: list[int], intent: QueryIntent
) -> list[int]:
    """For a comparison, make sure each side is represented by its best sentence."""
    if intent.question_type != QuestionType.COMPARISON:
        return picked
    result = list(picked)
    for entity in intent.entities:
        needle = entity.casefold()
        if any(needle in candidates[n].text.casefold() for n in result):
            continue
        matches = [n for n in keep if needle in candidates[n].text.casefold()]
        if matches:
            result.append(max(matches, key=lambda n: candidates[n].score))
    return result


def _redundant(n: int, picked: list[int], vectors: np.ndarray) -> bool:
    """A sentence almost identical to a better-placed one adds nothing."""
    earlier = picked[: picked.index(n)]
    return any(float(vectors[n] @ vectors[m]) > 0.95 for m in earlier)


def _cite(candidate: _Candidate) -> str:
    text = re.sub(r"\s+", " ", candidate.text).strip()
    marker = f"[{candidate.source_index + 1}]"
    if text[-1:] in ".!?":
        return f"{text[:-1]} {marker}{text[-1]}"
    return f"{text} {marker}"
