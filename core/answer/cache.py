"""Semantic answer cache: past answers per tenant, found by exact normalised question first,
then by nearest embedding at or above a similarity threshold that also asks the same thing
(core.answer.question_match), within an intent-based TTL."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from core.answer.question_match import same_question
from core.config import CacheSettings
from core.models import Confidence, QueryIntent, QuestionType, ResearchResult
from core.retrieval.embedding import Embedder
from core.retrieval.vectors import VectorCollection
from core.text import normalise

_NEIGHBOURS = 4


class CacheHit(BaseModel):
    result: ResearchResult
    cached_at: datetime
    question: str
    similarity: float
    exact: bool


class SemanticAnswerCache:
    def __init__(self, chroma: Any, embedder: Embedder, settings: CacheSettings,
                 clock: Callable[[], float] = time.time) -> None:
        """`clock`: seconds since the epoch (tests move it instead of waiting)."""
        self._chroma = chroma
        self._embedder = embedder
        self._settings = settings
        self._clock = clock
        self._collections: dict[str, VectorCollection] = {}

    @property
    def outage_ttl_seconds(self) -> float:
        """How long an answer researched during a source outage may be reused."""
        return self._settings.outage_ttl_minutes * 60.0

    def ttl_seconds(self, intent: QueryIntent) -> float:
        current = intent.question_type == QuestionType.CURRENT_EVENT or (
            intent.time_constraint is not None and intent.time_constraint.recent
        )
        hours = self._settings.current_event_ttl_hours if current else self._settings.ttl_hours
        return hours * 3600.0

    async def lookup(self, question: str, tenant: str, scope: str = "") -> CacheHit | None:
        """The freshest matching answer for this tenant, or None. `scope` (e.g. the knowledge
        base's generation) must match too, so answers from changed evidence are not served."""
        collection = self._collection(tenant)
        now = self._clock()
        exact = await collection.get([_key(question, scope)])
        for metadata, document in zip(exact["metadatas"], exact["documents"], strict=True):
            if metadata and metadata["expires_at"] > now:
                return _hit(metadata, document, 1.0, exact=True)
        vector = (await asyncio.to_thread(self._embedder.embed, [question]))[0]
        # Filtering inside the ANN query makes Chroma scan the metadata (~0.5 s at 100k
        # entries); the few nearest neighbours are checked here instead. A stale neighbour
        # hiding a fresh one only costs a miss.
        for hit in await collection.query(vector, _NEIGHBOURS):
            if (
                hit.metadata.get("expires_at", 0) > now
                and hit.metadata.get("scope") == scope
                and hit.document
                and same_question(
                    question,
                    str(hit.metadata.get("question", "")),
                    hit.similarity,
                    self._settings.similarity_threshold,
                )
            ):
                return _hit(hit.metadata, hit.document, hit.similarity, exact=False)
        return None

    async def store(
        self, question: str, tenant: str, intent: QueryIntent, result: ResearchResult,
        scope: str = "",
    ) -> bool:
        """Cache a finished answer for the intent's lifetime, or the shorter one the result
        asks for; Insufficient answers and zero lifetimes are not cached."""
        ttl = self.ttl_seconds(intent)
        if result.max_cache_seconds is not None:
            ttl = min(ttl, result.max_cache_seconds)
        if ttl <= 0 or result.answer.confidence == Confidence.INSUFFICIENT:
            return False
        vector = await asyncio.to_thread(self._embedder.embed, [question])
        now = self._clock()
        metadata = {
            "question": question[:2000],
            "created_at": now,
            "expires_at": now + ttl,
            "scope": scope,
        }
        await self._collection(tenant).upsert(
            [_key(question, scope)], vector, [metadata], [result.model_dump_json()]
        )
        return True

    def _collection(self, tenant: str) -> VectorCollection:
        if tenant not in self._collections:
            self._collections[tenant] = VectorCollection(self._chroma, "cache", tenant)
        return self._collections[tenant]


def _key(question: str, scope: str) -> str:
    return hashlib.sha256(f"{scope}\x1f{normalise(question)}".encode()).hexdigest()


def _hit(metadata: dict[str, Any], document: str, similarity: float, exact: bool) -> CacheHit:
    return CacheHit(
        result=ResearchResult.model_validate_json(document),
        cached_at=datetime.fromtimestamp(float(metadata["created_at"]), UTC),
        question=str(metadata.get("question", "")),
        similarity=round(similarity, 4),
        exact=exact,
    )
