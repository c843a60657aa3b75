"""The one protocol every search source implements."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel

from core.models import QueryIntent, Source


class SearchQuery(BaseModel):
    text: str
    tenant: str
    limit: int = 8
    intent: QueryIntent = QueryIntent()


class SourceKind(enum.StrEnum):
    LOCAL = "local"  # the tenant's own documents: searched first, always
    WEB = "web"  # a web search engine
    REFERENCE = "reference"  # an encyclopedia: general facts, and a backstop for specialists
    SPECIALIST = "specialist"  # searched only for questions on its topics


@dataclass(frozen=True)
class Capabilities:
    """What a source is and can do, declared by the source itself: planning routes queries
    by it, the page reader reads the pages of snippet hits, grading names what was searched.
    `topics` are the question topics (core.research.planning.question_topics) a specialist
    answers; `preference` orders sources of one kind (lower first); `key_setting` names the
    setting that switches it on when it needs a key."""

    kind: SourceKind
    topics: frozenset[str] = frozenset()
    snippets: bool = False  # hits are search snippets: the page behind them says more
    preference: int = 0
    key_setting: str | None = None


class SearchSource(Protocol):
    """A place to search. Raises SourceError on an outage; returns [] only for "nothing found"."""

    name: str
    label: str  # how progress messages name it, e.g. "the knowledge base"
    capabilities: Capabilities

    async def search(self, query: SearchQuery) -> list[Source]: ...
