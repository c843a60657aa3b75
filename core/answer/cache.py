"""Semantic answer cache: past answers per tenant, found by exact normalised question first,
then by nearest embedding at or above a similarity threshold that also asks the same thing
(core.answer.question_match), within an intent-based TTL.

The exact half lives in the job database (core.store.answers), so `exact_hit` answers a
repeated question without the embedder or the vector store; the semantic half is a Chroma
collection of the questions' embeddings."""

from __future__ import annotations

import asyncio
import hashlib
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from core.config import CacheSettings
from core.models import Clock, Confidence, QueryIntent, QuestionType, ResearchResult
from core.store.answers import CachedAnswer, CachedAnswerStore
from core.text import normalise

if TYPE_CHECKING:  # loaded with the vector store: an exact hit needs neither
    from core.retrieval.embedding import Embedder
    from core.retrieval.vectors import VectorCollection

_NEIGHBOURS = 4
# Cosine similarity at or above which a past question may count as the same (it must also ask
# the same thing word for word: core.answer.question_match). Calibrated, not a setting: the
# guard keeps near-misses out (they score up to 0.99) and paraphrases score from about 0.83;
# a change must re-run the cache safety benchmark (bench/quality.py) before it ships.
SIMILARITY_THRESHOLD = 0.80


class CacheHit(BaseModel):
    result: ResearchResult
    cached_at: datetime
    question: str
    similarity: float
    exact: bool


async def exact_hit(answers: CachedAnswerStore, question: str, tenant: str, scope: str,
                    now: float) -> CacheHit | None:
    """The tenant's unexpired answer to this very question (after normalisation) in `scope`."""
    kept = await answers.get(tenant, _key(question, scope), now)
    if kept is None:
        return None
    return CacheHit(result=ResearchResult.model_validate_json(kept.result_json),
                    cached_at=datetime.fromtimestamp(kept.created_at, UTC),
                    question=kept.question, similarity=1.0, exact=True)


class SemanticAnswerCache:
    def __init__(self, answers: CachedAnswerStore, chroma: Any, embedder: Embedder,
                 settings: CacheSettings, clock: Clock = time.time) -> None:
        """`answers`: the exact half's rows; `chroma`, the semantic half's collections.
        `clock`: seconds since the epoch (tests move it instead of waiting)."""
        self._answers = answers
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

    async def exact(self, question: str, tenant: str, scope: str = "") -> CacheHit | None:
        """The freshest answer to this very question (no embedding, no vector store)."""
        return await exact_hit(self._answers, question, tenant, scope, self._clock())

    async def lookup(self, question: str, tenant: str, scope: str = "") -> CacheHit | None:
        """The freshest matching answer for this tenant, or None. `scope` (e.g. the knowledge
        base's generation) must match too, so answers from changed evidence are not served."""
        now = self._clock()
        exact = await exact_hit(self._answers, question, tenant, scope, now)
        if exact is not None:
            return exact
        from core.answer.question_match import same_question

        collection = self._collection(tenant)
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
                    SIMILARITY_THRESHOLD,
                )
            ):
                return _hit(hit.metadata, hit.document, hit.similarity)
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
        document = result.model_dump_json()
        key = _key(question, scope)
        await self._collection(tenant).upsert([key], vector, [metadata], [document])
        await self._answers.put(tenant, key, CachedAnswer(question[:2000], document, now,
                                                          now + ttl))
        return True

    def _collection(self, tenant: str) -> VectorCollection:
        from core.retrieval.vectors import VectorCollection

        if tenant not in self._collections:
            self._collections[tenant] = VectorCollection(self._chroma, "cache", tenant)
        return self._collections[tenant]


def _key(question: str, scope: str) -> str:
    return hashlib.sha256(f"{scope}\x1f{normalise(question)}".encode()).hexdigest()


def _hit(metadata: dict[str, Any], document: str, similarity: float) -> CacheHit:
    return CacheHit(
        result=ResearchResult.model_validate_json(document),
        cached_at=datetime.fromtimestamp(float(metadata["created_at"]), UTC),
        question=str(metadata.get("question", "")),
        similarity=round(similarity, 4),
        exact=False,
    )
