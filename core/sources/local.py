"""The tenant's local document knowledge base as a search source."""

from __future__ import annotations

from core.models import Source
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.sources.protocol import Capabilities, SearchQuery, SourceKind


class LocalKnowledgeBaseSource:
    name = "local"
    label = "the knowledge base"
    capabilities = Capabilities(SourceKind.LOCAL)

    def __init__(self, knowledge_base: KnowledgeBase, per_document: int) -> None:
        self._knowledge_base = knowledge_base
        self._per_document = per_document

    async def search(self, query: SearchQuery) -> list[Source]:
        return await self._knowledge_base.search(
            query.text, query.tenant, limit=query.limit, per_document=self._per_document
        )
