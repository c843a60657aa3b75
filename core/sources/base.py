"""The one protocol every search source implements."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from core.models import QueryIntent, Source


class SearchQuery(BaseModel):
    text: str
    tenant: str
    limit: int = 8
    intent: QueryIntent = QueryIntent()


class SearchSource(Protocol):
    """A place to search. Raises SourceError on an outage; returns [] only for "nothing found"."""

    name: str
    label: str  # how progress messages name it, e.g. "the knowledge base"

    async def search(self, query: SearchQuery) -> list[Source]: ...
