"""What a job's research did, as typed data: stored with the job (`jobs.state`), shown by
`researchbot show --json`, and read back by `improve`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.models import QueryIntent
from core.research.search import SourceFailure


class Round(BaseModel):
    """One search round as the job's trace keeps it."""

    queries: list[str]
    failures: list[SourceFailure] = Field(default_factory=list)
    new_passages: int = 0
    useful: int = 0
    pages_unread: list[str] = Field(default_factory=list)
    reflection: dict[str, Any] | None = None


class Trace(BaseModel):
    """What a job's research did, stored with the job (`jobs.state`) and read back by
    `improve`: how the question was read, what was searched, what the answer was written
    from."""

    intent: QueryIntent | None = None
    standalone_question: str | None = None
    depth: str | None = None
    refined_question: str | None = None
    checklist: list[str] = Field(default_factory=list)
    plan: list[str] = Field(default_factory=list)
    iterations: list[Round] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    improves: str | None = None
    feedback: str | None = None
    searched_again: bool | None = None

    def failures(self) -> list[SourceFailure]:
        return [failure for round_ in self.iterations for failure in round_.failures]

    def last_reflection(self) -> dict[str, Any] | None:
        for round_ in reversed(self.iterations):
            if round_.reflection:
                return round_.reflection
        return None
