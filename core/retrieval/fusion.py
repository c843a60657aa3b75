"""Fusion and diversity: reciprocal-rank fusion over ranked lists, then MMR."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T", bound=Hashable)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[T]], k: int = 60) -> dict[T, float]:
    """Score each item by the sum of 1 / (k + rank) over the lists it appears in."""
    scores: dict[T, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
    return scores


def maximal_marginal_relevance(
    relevance: np.ndarray,
    vectors: np.ndarray,
    limit: int,
    trade_off: float,
    group_of: Callable[[int], str] | None = None,
    per_group: int | None = None,
) -> list[int]:
    """Indices picked greedily by trade_off * relevance - (1 - trade_off) * max similarity
    to what is already picked; at most `per_group` from any group (document)."""
    count = len(relevance)
    if count == 0 or limit <= 0:
        return []
    spread = float(relevance.max() - relevance.min()) or 1.0
    relevance = (relevance - relevance.min()) / spread
    similarity = vectors @ vectors.T if len(vectors) else np.zeros((count, count))
    chosen: list[int] = []
    taken: dict[str, int] = {}
    redundancy = np.zeros(count)
    available = np.ones(count, dtype=bool)
    while len(chosen) < min(limit, count) and available.any():
        scores = trade_off * relevance - (1 - trade_off) * redundancy
        scores[~available] = -np.inf
        best = int(np.argmax(scores))
        available[best] = False
        if group_of is not None and per_group is not None:
            group = group_of(best)
            if taken.get(group, 0) >= per_group:
                continue
            taken[group] = taken.get(group, 0) + 1
        chosen.append(best)
        redundancy = np.maximum(redundancy, similarity[best])
    return chosen
