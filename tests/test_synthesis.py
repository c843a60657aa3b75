import re
from typing import Any

from core.intake import detect_intent
from core.models import Source, SourceMetadata
from core.synthesis.extractive import NO_ANSWER, ExtractiveSynthesizer
from core.verify import quote_supported


def _source(n: int, text: str) -> Source:
    return Source(id=f"s{n}", title=f"Doc {n}", path=f"/kb/{n}.md", content=text,
                  document_id=f"d{n}", metadata=SourceMetadata(relevance=0.6))


SOURCES = [
    _source(1, "Green tea is not oxidised, so its leaves stay green. Green tea has about 28 "
               "milligrams of caffeine per cup. >>> brew(tea) returns a cup of tea now."),
    _source(2, "Black tea is fully oxidised, which darkens the leaves. Black tea has about 47 "
               "milligrams of caffeine per cup. The shop opens at nine every morning."),
]


async def test_every_sentence_cites_a_source_that_contains_it(embedder: Any) -> None:
    question = "How much caffeine does green tea have compared to black tea?"
    draft = await ExtractiveSynthesizer(embedder, max_sentences=4).synthesize(
        question, detect_intent(question), SOURCES)
    text = f"{draft.summary} {draft.detail}"
    assert "28 milligrams" in text and "47 milligrams" in text
    assert "shop opens" not in text and ">>>" not in text
    statements = [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
    assert all(re.search(r"\[\d\][.!?]?$", s) for s in statements)
    by_id = {s.id: s for s in SOURCES}
    assert 1 <= len(draft.citations) <= 4
    assert all(quote_supported(c.quote, by_id[c.source_id]) for c in draft.citations)


async def test_irrelevant_sources_give_no_answer(embedder: Any) -> None:
    question = "Who painted the Mona Lisa?"
    draft = await ExtractiveSynthesizer(embedder).synthesize(
        question, detect_intent(question), SOURCES)
    assert draft.summary == NO_ANSWER and draft.citations == [] and draft.is_empty


async def test_no_sources_give_no_answer(embedder: Any) -> None:
    draft = await ExtractiveSynthesizer(embedder).synthesize(
        "Anything?", detect_intent("Anything?"), [])
    assert draft.summary == NO_ANSWER
