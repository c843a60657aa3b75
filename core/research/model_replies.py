"""What the model is asked to return: one schema a prompt (core/llm/prompts/), checked by
pydantic when the reply is parsed (core.llm.gateway.ModelGateway.json)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from core.models import QuestionType, TimeConstraint


class Understanding(BaseModel):
    question_type: QuestionType = QuestionType.FACTUAL
    entities: list[str] = Field(default_factory=list)
    time_constraint: TimeConstraint | None = None
    language: str = "en"
    refined_question: str = Field(min_length=3)
    scope: str = ""
    checklist: list[str] = Field(min_length=1)

    @field_validator("checklist")
    @classmethod
    def _at_most_seven(cls, items: list[str]) -> list[str]:
        return [item.strip() for item in items if item.strip()][:7]


class QuerySpec(BaseModel):
    text: str = Field(min_length=1)
    purpose: str = ""
    sources: list[str] = Field(default_factory=list)


class QueryPlan(BaseModel):
    queries: list[QuerySpec] = Field(min_length=1)


class PassageScore(BaseModel):
    passage: int
    relevance: float = 0.0
    facts: list[str] = Field(default_factory=list)
    checklist_items: list[int] = Field(default_factory=list)

    @field_validator("relevance")
    @classmethod
    def _unit(cls, value: float) -> float:
        return min(1.0, max(0.0, value))


class EvidenceScores(BaseModel):
    scores: list[PassageScore] = Field(min_length=1)  # an empty list is asked for again


class ItemStatus(BaseModel):
    item: int
    status: Literal["satisfied", "partial", "unsatisfied"]


class Reflection(BaseModel):
    items: list[ItemStatus] = Field(default_factory=list)
    sufficient: bool = False
    confidence: float = 0.0
    gaps: list[str] = Field(default_factory=list)
    new_queries: list[QuerySpec] = Field(default_factory=list)


class CompactFact(BaseModel):
    text: str
    source: int
    checklist_items: list[int] = Field(default_factory=list)


class CompactFacts(BaseModel):
    facts: list[CompactFact]


class SynthesisClaim(BaseModel):
    text: str
    sources: list[int] = Field(default_factory=list)
    quote: str = ""


class Synthesis(BaseModel):
    summary: str
    detail: str = ""
    claims: list[SynthesisClaim] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)


class ImprovePlan(BaseModel):
    needs_search: bool = False
    queries: list[QuerySpec] = Field(default_factory=list)


class Fact(BaseModel):
    text: str
    source_id: str
    checklist_items: list[int] = Field(default_factory=list)
