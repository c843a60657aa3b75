"""Rank stage: dedupe across queries and sources, score against the question, diversify,
then make sure the evidence can answer a multi-hop question: a passage for every name the
question is about, and the passages about what the best passages name (the director of the
film the question asks about, the city a founder was born in)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np

from core.models import Source
from core.retrieval.embedding import Embedder
from core.retrieval.fusion import maximal_marginal_relevance, reciprocal_rank_fusion
from core.text import opening_subject, phrase, title_subject


async def rank_sources(
    question: str,
    result_lists: Sequence[Sequence[Source]],
    embedder: Embedder,
    limit: int,
    per_document: int,
    min_relevance: float,
    trade_off: float = 0.75,
    prior: Callable[[Source], float] | None = None,
    names: Sequence[str] = (),
) -> list[Source]:
    """The best `limit` distinct passages: fused rank across lists and relevance to the
    question, times the source's `prior` (quality, recency), at most `per_document` from one
    document or web site, none below `min_relevance`. Beyond them: the best passage naming
    each of `names` that none of them names, and up to `BRIDGES` passages about things the
    top passages name."""
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
    chosen = [keep[k] for k in picked]
    order = [keep[k] for k in np.argsort(-score, kind="stable")]
    pool = [by_id[i] for i in ids]
    texts = [phrase(f"{s.title} {s.content or s.snippet}") for s in pool]
    chosen += _naming(names, chosen, order, texts)
    chosen += _bridges(question, chosen, order, texts, pool)
    ranked = []
    for n in chosen:
        source = by_id[ids[n]]
        metadata = source.metadata.model_copy(update={"relevance": round(float(relevance[n]), 4)})
        ranked.append(source.model_copy(update={"metadata": metadata}))
    return ranked


BRIDGES = 2


def _naming(names: Sequence[str], chosen: list[int], order: list[int],
            texts: list[str]) -> list[int]:
    """For each name no chosen passage mentions, the best passage that does."""
    added: list[int] = []
    for name in names:
        needle = phrase(name)
        if any(needle in texts[n] for n in chosen + added):
            continue
        found = next((n for n in order if n not in chosen and n not in added
                      and needle in texts[n]), None)
        if found is not None:
            added.append(found)
    return added


def _bridges(question: str, chosen: list[int], order: list[int], texts: list[str],
             sources: list[Source]) -> list[int]:
    """Passages about what the top passages name and the question does not: the second hop
    of "the nationality of the director of Ed Wood"."""
    asked = phrase(question)
    named = " ".join(texts[n] for n in chosen[:3])
    added: list[int] = []
    for n in order:
        if len(added) >= BRIDGES:
            break
        subject = phrase(title_subject(sources[n].title))
        if n in chosen or len(subject.strip()) < 4 or subject in asked:
            continue
        if subject in named:
            added.append(n)
    return added


def subjects_of(source: Source) -> set[str]:
    """What a passage is about, as phrases: its title's subject and its first words'."""
    text = source.content or source.snippet
    return {phrase(title_subject(source.title)), phrase(opening_subject(text))} - {"\0"}


def tied_to(source: Source, names: Sequence[str], found: Sequence[Source]) -> bool:
    """Whether a passage is tied to what a question names: it names one of them, or its
    subject is named by a passage among `found` that does (the second hop: the university
    named in the founder's passage, for "the university the founder of Amazon attended").
    A passage tied to neither answers some other question."""
    wanted = [phrase(n) for n in names]
    if any(n in phrase(f"{source.title} {source.content or source.snippet}") for n in wanted):
        return True
    subjects = subjects_of(source)
    for other in found:
        passage = phrase(f"{other.title} {other.content or other.snippet}")
        if any(n in passage for n in wanted) and any(s in passage for s in subjects):
            return True
    return False


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
