import re
from typing import Any

import pytest

from core.answer.citations import quote_supported
from core.answer.synthesis.extractive import NO_ANSWER, ExtractiveSynthesizer
from core.models import Source, SourceMetadata
from core.research.intake import detect_intent

pytestmark = pytest.mark.unit


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


def test_abbreviations_and_initials_stay_inside_their_sentence() -> None:
    from core.text import sentences

    text = ("The study was led by economist Steven D. Levitt of the U.S. Federal Reserve. "
            "J. R. R. Tolkien wrote it c. 1937 in St. Louis. Dr. Smith Jr. agreed (b. 1950). "
            "It sold 5.2 million copies!")
    assert sentences(text) == [
        "The study was led by economist Steven D. Levitt of the U.S. Federal Reserve.",
        "J. R. R. Tolkien wrote it c. 1937 in St. Louis.",
        "Dr. Smith Jr. agreed (b. 1950).",
        "It sold 5.2 million copies!",
    ]


def test_a_word_cut_off_at_its_full_stop_joins_the_sentence_it_opens() -> None:
    from core.text import sentences

    # "Wm." is no abbreviation the splitter knows: a one-word sentence is never one
    assert sentences("Wm.  Bodley & Sons was a rope maker founded in 1861. It closed in 1902.") == [
        "Wm. Bodley & Sons was a rope maker founded in 1861.", "It closed in 1902."]



def test_an_empty_pair_of_quotes_does_not_hold_the_sentences_after_it_together() -> None:
    from core.answer.sentences import split
    from core.text import sentences

    # a title lost from the text leaves '""'; pysbd paired its marks with later quotes and
    # returned the whole paragraph as one sentence
    text = ('"Who Keeps the Lamps?" is the third episode of the radio serial "". It was first '
            'aired on May 2, 1958. It was written by Ada Quist. Its title is taken from the '
            'last line of the folk song "Who Keeps the Light? ."')
    expected = ['"Who Keeps the Lamps?" is the third episode of the radio serial "".',
                "It was first aired on May 2, 1958.", "It was written by Ada Quist.",
                'Its title is taken from the last line of the folk song "Who Keeps the Light? ."']
    assert sentences(text) == expected
    assert list(split(text)) == expected

PLAYERS = [
    _source(1, "Lindsay Davenport is an American former tennis player. She won the 1999 "
               "Wimbledon title. Davenport retired in 2008."),
    _source(2, "Mary Pierce is a French former tennis player. She also won the 2000 French "
               "Open singles title."),
]


async def test_a_pronoun_sentence_never_stands_alone(embedder: Any) -> None:
    question = "In what year did Lindsay Davenport win the Wimbledon title?"
    draft = await ExtractiveSynthesizer(embedder).synthesize(
        question, detect_intent(question), PLAYERS)
    text = f"{draft.summary} {draft.detail}"
    assert "1999" in draft.summary  # the sentence that answers comes first
    for match in re.finditer(r"She (also )?won", text):
        before = text[:match.start()].rstrip()
        assert before.endswith(("tennis player.", "player.")), text  # its antecedent leads in
    assert all(c.quote.startswith(("Lindsay", "Mary", "Davenport")) for c in draft.citations)


async def test_the_lead_names_what_the_question_asks_for(embedder: Any) -> None:
    sources = [_source(1, "The Louvre is the world's most visited art museum, in Paris. The "
                          "museum opened on 10 August 1793 in the Louvre Palace. It holds the "
                          "Mona Lisa and thousands of other works of art.")]
    question = "When did the Louvre open?"
    draft = await ExtractiveSynthesizer(embedder).synthesize(
        question, detect_intent(question), sources)
    assert "1793" in draft.summary
    assert draft.summary.startswith("The Louvre is")  # "The museum opened" keeps its subject


async def test_the_lead_comes_from_a_passage_tied_to_what_the_question_names(
        embedder: Any) -> None:
    """A close match about some other river does not lead an answer about Albuquerque's."""
    question = "How long is the river that flows through Albuquerque?"
    sources = [
        Source(id="s1", title="Rhone", path="/kb/1.md", document_id="d1",
               metadata=SourceMetadata(relevance=0.7),
               content="The Rhone is a long river that flows through Lyon; it is 813 "
                       "kilometres long."),
        Source(id="s2", title="Albuquerque", path="/kb/2.md", document_id="d2",
               metadata=SourceMetadata(relevance=0.6),
               content="Albuquerque is the largest city in New Mexico. The Rio Grande flows "
                       "through the city."),
        Source(id="s3", title="Rio Grande", path="/kb/3.md", document_id="d3",
               metadata=SourceMetadata(relevance=0.6),
               content="The Rio Grande is a river in North America, about 3,051 kilometres "
                       "long from Colorado to the Gulf of Mexico."),
    ]
    draft = await ExtractiveSynthesizer(embedder).synthesize(
        question, detect_intent(question), sources)
    assert "Rhone" not in draft.summary
    assert "Rio Grande" in draft.summary


def test_british_and_american_spellings_match_as_terms() -> None:
    from core.text import terms

    assert terms("an orange-flavoured drink in the theatre centre") == terms(
        "an orange-flavored drink in the theater center")
    assert terms("colours honour metres centred") == terms("colors honor meters centered")
    assert terms("hour tour four literal") == ["hour", "tour", "four", "literal"]
