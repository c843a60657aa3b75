"""Plan: the query variations to run and the sources each goes to."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, Field

from core.models import QueryIntent, QuestionType
from core.sources.protocol import Capabilities, SourceKind


class PlannedQuery(BaseModel):
    text: str
    purpose: str
    sources: list[str]


class ResearchPlan(BaseModel):
    queries: list[PlannedQuery] = Field(default_factory=list)


def plan_queries(
    question: str, intent: QueryIntent, sources: Mapping[str, Capabilities],
    max_queries: int = 4,
) -> ResearchPlan:
    """The question itself, its key terms, and for comparisons each side on its own."""
    candidates: list[tuple[str, str]] = [(question, "the question as asked")]
    keywords = " ".join(intent.key_terms)
    if keywords and len(intent.key_terms) >= 2:
        candidates.append((" ".join(_surface_terms(question, intent)), "key terms"))
    if intent.question_type == QuestionType.COMPARISON:
        candidates.extend((side, f"one side of the comparison: {side}")
                          for side in comparison_sides(question, intent)[:3])
    seen: set[str] = set()
    queries = []
    for text, purpose in candidates:
        key = text.casefold().strip()
        if key and key not in seen:
            seen.add(key)
            queries.append(PlannedQuery(text=text, purpose=purpose,
                                        sources=route_sources(question, sources)))
    return ResearchPlan(queries=queries[:max_queries])


_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)\s*[?.!]*$", re.I)
_VERSUS = re.compile(r"^(?:.*?\b(?:is|are|compare|comparing)\s+)?(.+?)\s+(?:vs\.?|versus|"
                     r"or|compared to|better than|faster than)\s+(.+?)\s*[?.!]*$", re.I)


def comparison_sides(question: str, intent: QueryIntent) -> list[str]:
    """The things a comparison compares: named entities, else the phrases around
    "between X and Y" or "X vs Y"."""
    if len(intent.entities) >= 2:
        return intent.entities
    match = _BETWEEN.search(question) or _VERSUS.search(question)
    if not match:
        return intent.entities
    return [side.strip(" ,") for side in match.groups() if side.strip(" ,")]


def _surface_terms(question: str, intent: QueryIntent) -> list[str]:
    """The question's content words as written (unstemmed), for a keyword query."""
    from core.text import STOPWORDS

    words = [w.strip("?!.,;:\"'()") for w in question.split()]
    return [w for w in words if w and w.casefold() not in STOPWORDS] or intent.key_terms


_BIOMEDICAL = re.compile(
    r"\b(disease|diseases|drug|drugs|dose|dosage|clinical|patients?|symptoms?|treatments?|"
    r"therap(y|ies)|diagnos\w*|vaccines?|virus(es)?|viral|bacteria\w*|infections?|cancer|"
    r"tumou?rs?|diabetes|genes?|genetic|proteins?|enzymes?|medical|medicine|pharma\w*|"
    r"syndrome|disorders?|cardio\w*|neuro\w*|antibiotics?|immun\w*|epidemi\w*|trials?|"
    r"mortality|prognosis|surgery|pregnan\w*|covid|sars-cov-2|hiv|alzheimer\w*)\b", re.I)
_RESEARCH = re.compile(
    r"\b(papers?|preprints?|arxiv|state of the art|sota|benchmarks?|neural|transformers?|"
    r"algorithms?|theorem|proofs?|quantum|physics|astrophysics|machine learning|deep learning|"
    r"language models?|llms?|reinforcement learning|dataset|research on|literature)\b", re.I)


def question_topics(question: str) -> frozenset[str]:
    """The specialist topics a question is on: "biomedical" (PubMed's) or "research"
    (arXiv's); none for general questions."""
    if _BIOMEDICAL.search(question):
        return frozenset({"biomedical"})
    if _RESEARCH.search(question):
        return frozenset({"research"})
    return frozenset()


def route_sources(question: str, sources: Mapping[str, Capabilities]) -> list[str]:
    """Which sources a question's queries go to, in priority order, by what each source
    declares it is: the knowledge base first; for a question on a specialist's topic, that
    specialist, then reference works, then the web; otherwise the web, then reference works.
    A specialist is never searched off its topics."""
    topics = question_topics(question)

    def of(kind: SourceKind) -> list[str]:
        named = [(c.preference, n) for n, c in sources.items() if c.kind == kind
                 and (kind != SourceKind.SPECIALIST or c.topics & topics)]
        return [name for _, name in sorted(named, key=lambda item: item[0])]

    tail = [*of(SourceKind.SPECIALIST), *of(SourceKind.REFERENCE), *of(SourceKind.WEB)] \
        if topics else [*of(SourceKind.WEB), *of(SourceKind.REFERENCE)]
    return [*of(SourceKind.LOCAL), *tail] or list(sources)
