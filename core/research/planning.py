"""Plan: the query variations to run and the sources each goes to."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, Field

from core.models import ContentType, QueryIntent, QuestionType, SearchControls
from core.sources.controls import worth_asking
from core.sources.protocol import Capabilities, SourceKind


class PlannedQuery(BaseModel):
    text: str
    purpose: str
    sources: list[str]


class ResearchPlan(BaseModel):
    queries: list[PlannedQuery] = Field(default_factory=list)


def plan_queries(
    question: str, intent: QueryIntent, sources: Mapping[str, Capabilities],
    max_queries: int = 4, controls: SearchControls | None = None,
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
                                        sources=route_sources(question, sources, intent,
                                                              controls)))
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


_CONCEPTUAL = re.compile(
    r"\b(concepts?|ideas?|theory|theories|meaning|intuition|principles?|definition|philosophy)"
    r" (of|behind)\b|\bwhat does .+ mean\b|\b(define|conceptually)\b|\bdifference between\b",
    re.I)


def conceptual(question: str, intent: QueryIntent | None) -> bool:
    """An explanation or a question about an idea: what a meaning-based search is for."""
    explains = intent is not None and intent.question_type == QuestionType.EXPLANATION
    return explains or bool(_CONCEPTUAL.search(question))


def route_sources(question: str, sources: Mapping[str, Capabilities],
                  intent: QueryIntent | None = None,
                  controls: SearchControls | None = None) -> list[str]:
    """Which sources a question's queries go to, in priority order, by what each source
    declares it is: the knowledge base first; for a question on a specialist's topic, that
    specialist, then reference works, then the web; otherwise the web, then reference works.
    A specialist is never searched off its topics, a meaning-based search only for
    explanation and conceptual questions. A request for news or academic content goes to the
    sources that serve it (when there are none, to the usual ones); a source whose one site
    the request's domains refuse is left out."""
    controls = controls or SearchControls()
    sources = {n: c for n, c in sources.items() if worth_asking(c, controls)}
    topics = question_topics(question)
    kind = controls.content_type
    serving = {n: c for n, c in sources.items() if kind in c.content}
    if kind is not ContentType.GENERAL and serving:
        local = [n for n, c in sources.items() if c.kind == SourceKind.LOCAL]
        return [*local, *_by_kind(serving, topics, every_specialist=True)]
    ideas = conceptual(question, intent)
    usual = {n: c for n, c in sources.items() if ideas or not c.semantic}
    return _by_kind(usual, topics) or list(sources)


def _by_kind(sources: Mapping[str, Capabilities], topics: frozenset[str],
             every_specialist: bool = False) -> list[str]:
    """The knowledge base, then specialists on the topics, reference works and the web (the
    web before reference works for a general question); each kind by preference.
    `every_specialist`: off-topic specialists too, when no specialist is on the topics."""
    on_topic = [n for n, c in sources.items() if c.kind == SourceKind.SPECIALIST
                and c.topics & topics]

    def of(kind: SourceKind) -> list[str]:
        named = [(c.preference, n) for n, c in sources.items() if c.kind == kind
                 and (kind != SourceKind.SPECIALIST or n in on_topic
                      or (every_specialist and not on_topic))]
        return [name for _, name in sorted(named, key=lambda item: item[0])]

    tail = [*of(SourceKind.SPECIALIST), *of(SourceKind.REFERENCE), *of(SourceKind.WEB)] \
        if topics or every_specialist else [*of(SourceKind.WEB), *of(SourceKind.REFERENCE)]
    return [*of(SourceKind.LOCAL), *tail]
