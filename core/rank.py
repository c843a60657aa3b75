"""Rank stage: dedupe across queries and sources, score against the question, diversify."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np

from core.embedding import Embedder
from core.models import Source
from core.ranking import maximal_marginal_relevance, reciprocal_rank_fusion


async def rank_sources(
    question: str,
    result_lists: Sequence[Sequence[Source]],
    embedder: Embedder,
    limit: int,
    per_document: int,
    min_relevance: float,
    trade_off: float = 0.75,
    prior: Callable[[Source], float] | None = None,
) -> list[Source]:
    """The best `limit` distinct passages: fused rank across lists and relevance to the
    question, times the source's `prior` (quality, recency), at most `per_document` from one
    document or web site, none below `min_relevance`."""
    by_id: dict[str, Source] = {}
    for hits in result_lists:
        for source in hits:
            by_id.setdefault(source.id, source)
    if not by_id:
        return []
    fused = reciprocal_rank_fusion([[s.id for s in hits] for hits in result_lists])
    ids = list(by_id)
    vectors = await _vectors([by_id[i] for i in ids], embedder)
    question_vector = (await asyncio.to_thread(embedder.embed, [question]))[0]
    relevance = np.clip(vectors @ question_vector, 0.0, 1.0)
    keep = [n for n in range(len(ids)) if relevance[n] >= min_relevance]
    if not keep:
        return []
    top_fused = max(fused.values())
    score = np.asarray([(0.5 * fused[ids[n]] / top_fused + 0.5 * relevance[n])
                        * (prior(by_id[ids[n]]) if prior else 1.0) for n in keep])
    picked = maximal_marginal_relevance(
        score,
        vectors[keep],
        limit,
        trade_off,
        group_of=lambda k: _group(by_id[ids[keep[k]]]),
        per_group=per_document,
    )
    ranked = []
    for k in picked:
        n = keep[k]
        source = by_id[ids[n]]
        metadata = source.metadata.model_copy(update={"relevance": round(float(relevance[n]), 4)})
        ranked.append(source.model_copy(update={"metadata": metadata}))
    return ranked


def _group(source: Source) -> str:
    """Web pages group by site, so that one site cannot fill the answer; documents by file."""
    if source.url and source.metadata.domain:
        return f"site:{source.metadata.domain}"
    return source.document_id or source.id


async def _vectors(sources: list[Source], embedder: Embedder) -> np.ndarray:
    missing = [n for n, s in enumerate(sources) if s.embedding is None]
    fresh = (
        await asyncio.to_thread(
            embedder.embed, [f"{sources[n].title}\n{sources[n].content or sources[n].snippet}"
                             for n in missing]
        )
        if missing
        else None
    )
    rows = []
    for n, source in enumerate(sources):
        if source.embedding is not None:
            rows.append(np.asarray(source.embedding, dtype=np.float32))
        else:
            assert fresh is not None
            rows.append(fresh[missing.index(n)])
    return np.vstack(rows)
