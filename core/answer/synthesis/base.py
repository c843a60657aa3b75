"""The synthesizer interface.

A synthesizer writes from the ranked sources only. It cites with markers `[k]`, where k is the
1-based position of a source in the list it was given; code checks and renumbers them later.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from core.models import Citation, QueryIntent, Source


class Draft(BaseModel):
    summary: str
    detail: str = ""
    citations: list[Citation] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.citations


class Synthesizer(Protocol):
    name: str

    async def synthesize(
        self, question: str, intent: QueryIntent, sources: list[Source]
    ) -> Draft: ...
