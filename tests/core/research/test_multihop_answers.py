"""Answers to real multi-hop questions without a model: the second hop searched and led
with, yes/no and either-or questions answered first, only passages that earn their place
cited, limitations that name things. Every example is made up here (not from the shared
evaluation set)."""

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.answer.citations import verify_citations
from core.answer.grading import grade, mentions
from core.answer.synthesis.extractive import BROAD, OTHERWISE, UNSETTLED, ExtractiveSynthesizer
from core.answer.verdict import closed, either_or
from core.countries import countries_in
from core.models import Confidence, ResearchRequest, Source, SourceMetadata
from core.research.intake import detect_intent
from core.retrieval.rank import bridge_queries
from core.text import phrase
from tests.core.research.test_pipeline import _client
from tests.support.job_client import JobClient

pytestmark = pytest.mark.unit


def _page(n: int, title: str, text: str, relevance: float = 0.6) -> Source:
    return Source(id=f"s{n}", title=title, path=f"/kb/{n}.md", content=text,
                  document_id=f"d{n}", metadata=SourceMetadata(relevance=relevance))


PAINTER = _page(1, "Anna Lindqvist", "Anna Lindqvist (born 14 March 1950) is a Swedish painter "
                "and printmaker known for her winter landscapes.")
SCULPTOR = _page(2, "Pierre Dufresne", "Pierre Dufresne (2 June 1901 – 8 May 1960) was a French "
                 "sculptor and painter who worked in bronze.")
POTTER = _page(3, "Mirela Vasquez", "Mirela Vasquez (born 1962) is a Swedish potter who trained "
               "in Kyoto.")
PEAKS = [_page(4, "Korvatind", "Korvatind is a mountain in the Lyngen Alps. Its summit rises to "
               "1,834 m above sea level."),
         _page(5, "Storhorn", "Storhorn is a mountain in northern Norway with an elevation of "
               "1,412 m.")]


async def _answer(embedder: Any, question: str, sources: list[Source]) -> Any:
    return await ExtractiveSynthesizer(embedder).synthesize(
        question, detect_intent(question), sources)


async def _summary(embedder: Any, first: int, question: str, *pages: tuple[str, str]) -> str:
    """The summary answering `question` from (title, text) pages numbered from `first`."""
    sources = [_page(first + n, title, text) for n, (title, text) in enumerate(pages)]
    return str((await _answer(embedder, question, sources)).summary)


def _decided(question: str, *pages: tuple[str, str]) -> str | None:
    """The verdict's answer to `question` over (title, text) pages, or None."""
    from core.answer.verdict import decide

    sources = [_page(600 + n, title, text) for n, (title, text) in enumerate(pages)]
    verdict = decide(question, detect_intent(question), sources)
    return verdict.answer if verdict else None


# ---- yes or no, first ----------------------------------------------------------------------

async def test_a_shared_description_is_answered_yes_with_both_passages(embedder: Any) -> None:
    question = "Are Anna Lindqvist and Pierre Dufresne both painters?"
    draft = await _answer(embedder, question, [PAINTER, SCULPTOR])
    assert draft.summary.startswith("Yes: Anna Lindqvist")
    assert {c.source_id for c in draft.citations} == {"s1", "s2"}


async def test_a_description_one_lacks_is_answered_no(embedder: Any) -> None:
    question = "Are Anna Lindqvist and Pierre Dufresne both printmakers?"
    draft = await _answer(embedder, question, [PAINTER, SCULPTOR])
    assert draft.summary.startswith("No: ")
    assert "bronze" in draft.summary  # the passage that lacks it is quoted as the reason


async def test_nationalities_are_compared_from_each_passage(embedder: Any) -> None:
    same = "Were Anna Lindqvist and Mirela Vasquez of the same nationality?"
    other = "Were Anna Lindqvist and Pierre Dufresne of the same nationality?"
    assert (await _answer(embedder, same, [PAINTER, POTTER])).summary.startswith("Yes: ")
    assert (await _answer(embedder, other, [PAINTER, SCULPTOR])).summary.startswith("No: ")
    asked = "Are Anna Lindqvist and Mirela Vasquez both from Sweden?"
    assert (await _answer(embedder, asked, [PAINTER, POTTER])).summary.startswith("Yes: ")


async def test_without_a_passage_about_each_the_answer_says_it_is_not_settled(
        embedder: Any) -> None:
    question = "Are Anna Lindqvist and Tomas Berglund both painters?"
    draft = await _answer(embedder, question, [PAINTER, SCULPTOR])
    assert not draft.summary.startswith(("Yes", "No"))
    assert UNSETTLED in draft.notes


async def test_a_question_about_one_thing_is_answered_from_its_passage(embedder: Any) -> None:
    draft = await _answer(embedder, "Is Anna Lindqvist a Swedish painter?", [SCULPTOR, PAINTER])
    assert draft.summary.startswith("Yes: Anna Lindqvist")
    assert [c.source_id for c in draft.citations] == ["s1"]
    draft = await _answer(embedder, "Was Pierre Dufresne a sculptor who worked in bronze?",
                          [PAINTER, SCULPTOR])
    assert draft.summary.startswith("Yes: Pierre Dufresne")


async def test_a_country_the_passage_contradicts_is_answered_no(embedder: Any) -> None:
    draft = await _answer(embedder, "Is Anna Lindqvist a French painter?", [PAINTER])
    assert draft.summary.startswith("No: ") and "Swedish" in draft.summary
    taught = _page(11, "Anna Lindqvist", "Anna Lindqvist (born 14 March 1950) is a Swedish "
                   "painter. She studied under a French painter in Lyon.")
    draft = await _answer(embedder, "Is Anna Lindqvist a French painter?", [taught])
    assert draft.summary.startswith("No: ")  # her nationality is the opening's, not a teacher's
    draft = await _answer(embedder, "Was Mirela Vasquez born in Japan?", [POTTER])
    # a Swedish potter may have been born anywhere: a nationality settles no birthplace
    assert not draft.summary.startswith(("Yes", "No"))
    assert UNSETTLED in draft.notes


async def test_what_the_passage_does_not_say_of_one_thing_is_not_settled(
        embedder: Any) -> None:
    for question in ("Is Anna Lindqvist a famous sculptor?",  # "famous" is not said
                     "Isn't Anna Lindqvist a Swedish painter?",  # negated: not weighed
                     "Is Tomas Berglund a Swedish painter?"):  # no passage about him
        draft = await _answer(embedder, question, [PAINTER, SCULPTOR])
        assert not draft.summary.startswith(("Yes", "No")), question
        assert UNSETTLED in draft.notes


async def test_one_thing_weighed_against_another_is_answered_yes_or_no(embedder: Any) -> None:
    cases = [("Was Pierre Dufresne born before Anna Lindqvist?", [PAINTER, SCULPTOR], "Yes"),
             ("Is Anna Lindqvist older than Pierre Dufresne?", [PAINTER, SCULPTOR], "No"),
             ("Was Mirela Vasquez born after Anna Lindqvist?", [PAINTER, POTTER], "Yes"),
             ("Is Anna Lindqvist from the same country as Mirela Vasquez?", [PAINTER, POTTER],
              "Yes"),
             ("Is Anna Lindqvist from the same country as Pierre Dufresne?",
              [PAINTER, SCULPTOR], "No")]
    for question, sources, answer in cases:
        draft = await _answer(embedder, question, sources)
        assert draft.summary.startswith(f"{answer}: "), question
        assert {c.source_id for c in draft.citations} == {s.id for s in sources}, question


async def test_places_are_in_the_same_state_when_their_openings_say_so(embedder: Any) -> None:
    towns = [LAKEPORT,
             _page(13, "Millbrook", "Millbrook is a city in Stark County, Ohio. It was founded "
                   "in 1811 by settlers from Washington, D.C."),
             _page(14, "Cedar Falls Township", "Cedar Falls Township is a township in Dane "
                   "County, Wisconsin.")]
    same = await _answer(embedder, "Are Lakeport and Millbrook located in the same state?",
                         towns)
    assert same.summary.startswith("Yes: ")
    other = await _answer(embedder, "Is Lakeport in the same state as Cedar Falls Township?",
                          towns)
    assert other.summary.startswith("No: ") and "Wisconsin" in other.summary


LAKEPORT = _page(12, "Lakeport, Ohio", "Lakeport is a village in Erie County, Ohio, United "
                 "States, on the shore of Lake Erie.")
STORY = _page(9, "The Lamp in the Hall", "\"The Lamp in the Hall\" is a short story by Ines "
              "Borg. It was first published in 1921 in a literary magazine.")
ESSAYS = _page(10, "A House of Glass", "A House of Glass is a 1958 essay collection by the "
               "Danish critic Per Holm.")


async def test_a_value_the_passage_gives_otherwise_is_answered_no(embedder: Any) -> None:
    cases = [("Was The Lamp in the Hall written by Per Holm?", [STORY, ESSAYS], "No", "Borg"),
             ("Was The Lamp in the Hall written by Ines Borg?", [STORY, ESSAYS], "Yes", "Borg"),
             ("Is Lakeport located in Wisconsin?", [LAKEPORT], "No", "Ohio"),
             ("Is Lakeport in Ohio?", [LAKEPORT], "Yes", "Ohio")]
    for question, sources, answer, quoted in cases:
        draft = await _answer(embedder, question, sources)
        assert draft.summary.startswith(f"{answer}: ") and quoted in draft.summary, question
    # a place the passage does not name is neither said nor contradicted
    draft = await _answer(embedder, "Is Korvatind in Sweden?", PEAKS)
    assert not draft.summary.startswith(("Yes", "No"))


async def test_a_no_from_a_value_given_otherwise_is_graded_though_the_asked_one_is_absent(
        embedder: Any) -> None:
    question = "Was The Lamp in the Hall written by Tomas Berglund?"  # in no document
    draft = await _answer(embedder, question, [STORY])
    assert draft.summary.startswith("No: ") and "Ines Borg" in draft.summary
    graded = grade(verify_citations(draft, [STORY]), [STORY], detect_intent(question), [],
                   only_local=True, question=question, notes=draft.notes)
    assert graded.confidence in (Confidence.LOW, Confidence.MEDIUM)
    assert "The documents found do not mention Tomas Berglund." in graded.limitations
    # a subject no passage is about is no such answer: Insufficient as before
    absent = "Was The Glass Lantern written by Tomas Berglund?"
    draft = await _answer(embedder, absent, [STORY])
    graded = grade(verify_citations(draft, [STORY]), [STORY], detect_intent(absent), [],
                   only_local=True, question=absent, notes=draft.notes)
    assert not draft.summary.startswith("No") and graded.confidence == Confidence.INSUFFICIENT


async def test_a_city_beside_its_state_and_the_same_maker_are_weighed(embedder: Any) -> None:
    fair = _page(23, "Harvest Fair", "The Harvest Fair is a yearly market held in Dayton, Ohio, "
                 "since 1952.")
    draft = await _answer(embedder, "Is the Harvest Fair held in Toledo, Ohio?", [fair])
    assert draft.summary.startswith("No: ") and "Dayton" in draft.summary
    draft = await _answer(embedder, "Is the Harvest Fair held in Ohio?", [fair])
    assert draft.summary.startswith("Yes: ")
    films = [_page(24, "Salt Road", "Salt Road is a 1994 drama film written and directed by "
                   "Mira Lund."),
             _page(25, "Night Ferry", "Night Ferry is a 2001 thriller film directed by Mira "
                   "Lund."),
             _page(26, "Paper Birds", "Paper Birds is a 1999 comedy film directed by Otto "
                   "Brand.")]
    same = "Were Salt Road and Night Ferry directed by the same person?"
    assert (await _answer(embedder, same, films)).summary.startswith("Yes: ")
    other = "Were Salt Road and Paper Birds directed by the same person?"
    assert (await _answer(embedder, other, films)).summary.startswith("No: ")


async def test_a_word_in_another_form_is_the_same_word(embedder: Any) -> None:
    prize = _page(15, "Tove Ahl", "Tove Ahl (born 1931) is a Norwegian poet. She won the "
                  "Nordic Poetry Prize in 1988.")
    draft = await _answer(embedder, "Did Tove Ahl win the Nordic Poetry Prize?", [prize])
    assert draft.summary.startswith("Yes: ") and "won the Nordic Poetry Prize" in draft.summary


async def test_the_second_tallest_is_not_the_tallest(embedder: Any) -> None:
    tower = _page(22, "Harbour Tower", "Harbour Tower is an office building in Tarnby. At 31 "
                  "stories, it is the second-tallest building in Tarnby.")
    draft = await _answer(embedder, "Is Harbour Tower the tallest building in Tarnby?", [tower])
    assert not draft.summary.startswith("Yes")


async def test_two_things_are_weighed_by_year_family_and_members(embedder: Any) -> None:
    genera = [_page(16, "Corvina", "Corvina is a genus of shrubs in the family Rosaceae."),
              _page(17, "Maltaria", "Maltaria is a genus of herbs in the family Rosaceae "
                    "that grows in dry meadows."),
              _page(18, "Pellis", "Pellis is a genus of trees in the family Lauraceae.")]
    bands = [_page(19, "The Wrens of Hull", "The Wrens of Hull are a band from Hull, "
                   "consisting of Ada Marsh (guitar), Lee Stone (bass) and Tom Reed (drums). "
                   "They formed in 1999."),
             _page(20, "Copper Lane", "Copper Lane is a band formed in 1999 in Derby, "
                   "consisting of Jo Hart, Sam Vale and Kit Moss."),
             _page(21, "Dry Creek Boys", "Dry Creek Boys is a country band formed in 2004. The "
                   "band consists of Al Ross on vocals and guitar, Ben Lowe on bass and Cy "
                   "Park on drums.")]
    cases = [("Are Corvina and Maltaria in the same plant family?", genera, "Yes"),
             ("Are Corvina and Pellis in the same plant family?", genera, "No"),
             ("Were The Wrens of Hull and Copper Lane formed in the same year?", bands, "Yes"),
             ("Were Copper Lane and Dry Creek Boys both formed in 1999?", bands, "No"),
             ("Do The Wrens of Hull and Copper Lane have the same number of members?", bands,
              "Yes"),
             ("Was A House of Glass published before The Lamp in the Hall?", [ESSAYS, STORY],
              "No")]
    for question, sources, answer in cases:
        draft = await _answer(embedder, question, sources)
        assert draft.summary.startswith(f"{answer}: "), question
    # members listed with what each plays are not counted: not settled, never guessed
    draft = await _answer(embedder, "Do Copper Lane and Dry Creek Boys have the same number "
                          "of members?", bands)
    assert not draft.summary.startswith(("Yes", "No"))


async def test_a_title_the_question_names_split_is_weighed_as_one_thing(embedder: Any) -> None:
    # "Letters in the Snow" reads as two names ("Letters", "Snow"): the passages' titles say
    # where the first thing ends and how far the second goes ("Ledger", not "Ledger released")
    films = [_page(22, "Letters in the Snow (film)", "Letters in the Snow is a 1987 Danish "
                   "drama film directed by Ida Holm, starring Per Lund."),
             _page(23, "Ledger (film)", "Ledger is a 1987 Finnish comedy film directed by Aku "
                   "Lahti, starring Per Lund."),
             _page(24, "Tin Harbour", "Tin Harbour is a 1990 British crime film.")]
    cases = [("Were Letters in the Snow and Ledger released in the same year?", "Yes"),
             ("Were Letters in the Snow and Tin Harbour released in the same year?", "No")]
    for question, answer in cases:
        draft = await _answer(embedder, question, films)
        assert draft.summary.startswith(f"{answer}: Letters in the Snow is a 1987"), question
    # "each" says both, not what is said of them: "feature" is the verb, said in other words
    draft = await _answer(embedder, "Do Letters in the Snow and Ledger each feature Per Lund?",
                          films)
    assert draft.summary.startswith("Yes: "), draft.summary
    # a side is a whole name: "Tin Harbour Blues" has no passage, and "Tin Harbour" is not it
    draft = await _answer(embedder, "Were Ledger and Tin Harbour Blues released in the same "
                          "year?", films)
    assert not draft.summary.startswith(("Yes", "No")), draft.summary


async def test_a_name_of_short_words_is_not_any_title_of_short_words(embedder: Any) -> None:
    # the question's names hold "I Was" (all short words) and a song's title is all short
    # words too: it is not the film's passage, and the film's whole title is found
    films = [_page(25, "Boy Finds Mother", "Boy Finds Mother is a 1961 Estonian drama film "
                   "directed by Leida Laius."),
             _page(26, "I Was a Moon of the Earth", "I Was a Moon of the Earth is an Estonian "
                   "science-fiction film of 1961."),
             _page(27, "Should We Tell Him", '"Should We Tell Him" is a song released in 1958 '
                   "by The Alder Sisters.")]
    draft = await _answer(embedder, "Were the Estonian films Boy Finds Mother and I Was a Moon "
                          "of the Earth made in the same year?", films)
    assert draft.summary.startswith("Yes: Boy Finds Mother is a 1961"), draft.summary
    assert "Should We Tell Him" not in draft.summary
    # a title of short words alone is still found, word for word
    bands = [_page(28, "The Who Else", "The Who Else is an English rock band formed in 1990."),
             _page(29, "For Them", "For Them is an American rock band formed in 1990.")]
    draft = await _answer(embedder, "Were The Who Else and For Them formed in the same year?",
                          bands)
    assert draft.summary.startswith("Yes: "), draft.summary


async def test_the_asked_noun_said_in_other_words_is_no_no(embedder: Any) -> None:
    pages = [_page(40, "Brindle & Co.", "Brindle & Co. was a soft drink manufacturer founded "
                   "in 1880 in Leeds."),
             _page(41, "Fizzwell Drinks", "Fizzwell Drinks is a soft drink company founded in "
                   "1990."),
             _page(42, "Ola Brandt", "Ola Brandt (born 1970) is a Norwegian rock singer."),
             _page(43, "The Cinders", "The Cinders are a Norwegian rock band formed in 1992.")]
    # a manufacturer may well be a company: the passage does not say it is not one
    draft = await _answer(embedder, "Are Brindle & Co. and Fizzwell Drinks both soft drink "
                          "companies?", pages)
    assert not draft.summary.startswith(("Yes", "No")), draft.summary
    # a singer is a person, not a band: that is a No
    draft = await _answer(embedder, "Are Ola Brandt and The Cinders both rock bands?", pages)
    assert draft.summary.startswith("No: "), draft.summary
    # and a person said to be another person is one too: an actor is no director
    actors = [_page(48, "Eli Sand", "Eli Sand (born 1960) is an American film actor."),
              _page(49, "Ada Rook", "Ada Rook (born 1955) is an American film director.")]
    draft = await _answer(embedder, "Are Eli Sand and Ada Rook both film directors?", actors)
    assert draft.summary.startswith("No: "), draft.summary
    # unless it is a kind of the asked one in some sense: a film director is a filmmaker
    makers = [_page(50, "Ivo Lind", "Ivo Lind (1901 – 1960) was a Soviet documentary film "
                    "and newsreel director."),
              _page(51, "Mia Berg", "Mia Berg (born 1950) is a French documentary filmmaker.")]
    draft = await _answer(embedder, "Were Ivo Lind and Mia Berg both documentary filmmakers?",
                          makers)
    assert not draft.summary.startswith(("Yes", "No")), draft.summary


async def test_two_kinds_of_year_in_one_question_are_not_weighed(embedder: Any) -> None:
    question = "Did Pierre Dufresne die before Anna Lindqvist was born?"
    draft = await _answer(embedder, question, [PAINTER, SCULPTOR])
    assert not draft.summary.startswith(("Yes", "No"))


# ---- either-or, the winner first -----------------------------------------------------------

async def test_the_older_of_two_is_named_first_from_their_birth_years(embedder: Any) -> None:
    draft = await _answer(embedder, "Who was born first, Anna Lindqvist or Pierre "
                                "Dufresne?", [PAINTER, SCULPTOR])
    assert draft.summary.startswith("Pierre Dufresne: ")
    draft = await _answer(embedder, "Who is younger, Mirela Vasquez or Anna "
                                "Lindqvist?", [PAINTER, POTTER])
    assert draft.summary.startswith("Mirela Vasquez: ") and "1962" in draft.summary


async def test_an_option_cut_at_its_colon_is_the_title_the_question_writes_whole(
        embedder: Any) -> None:
    films = [_page(46, "Marrow Creek: The Last Harvest", "Marrow Creek: The Last Harvest is a "
                   "2003 film by Ida Quist. It was nominated for an Academy Award."),
             _page(47, "Sundown Tour (2010 film)", "Sundown Tour is a 2010 rock documentary "
                   "film about The Fenwicks.")]
    # "Marrow Creek: The Last Harvest" is one option, not "The Last Harvest", and asks for no
    # latest of the two; what the apposition says of the other ("the Fenwicks rock
    # documentary") is no support for it
    draft = await _answer(embedder, "Which film was nominated for an Academy Award, Marrow "
                          "Creek: The Last Harvest or Sundown Tour, the Fenwicks rock "
                          "documentary?", films)
    assert draft.summary.startswith("Marrow Creek: The Last Harvest: "), draft.summary


async def test_a_title_with_small_words_is_one_option_named_as_the_question_writes_it(
        embedder: Any) -> None:
    draft = await _answer(embedder, "Which was published first, A House of Glass or The Lamp "
                          "in the Hall?", [ESSAYS, STORY])
    assert draft.summary.startswith("The Lamp in the Hall: ")
    # the sentence giving the year leans on the one before it: both are quoted
    assert "short story by Ines Borg. It was first published in 1921" in draft.summary


async def test_a_height_decides_which_is_higher(embedder: Any) -> None:
    draft = await _answer(embedder, "Which mountain is higher, Storhorn or Korvatind?",
                                PEAKS)
    assert draft.summary.startswith("Korvatind: ") and "1,834 m" in draft.summary


async def test_a_measure_the_passages_do_not_give_is_not_guessed(embedder: Any) -> None:
    draft = await _answer(embedder, "Which mountain is older, Storhorn or Korvatind?",
                                PEAKS)
    assert not draft.summary.startswith(("Storhorn:", "Korvatind:"))
    assert UNSETTLED in draft.notes


# ---- the second hop ------------------------------------------------------------------------

LIBRARY = _page(6, "Corvel Library", "The Corvel Library is a public library in Tarnby. It was "
                "designed by the architect Halvard Moen and opened in 1974.", 0.7)
ARCHITECT = _page(7, "Halvard Moen", "Halvard Moen (born 3 May 1931) is a Norwegian architect "
                  "known for civic buildings.", 0.35)
MUSEUM = _page(8, "Tarnby Museum", "The Tarnby Museum is a public museum of local history. "
               "The museum holds a library of maps.", 0.5)


def test_the_second_hop_searches_what_the_first_passage_names() -> None:
    question = "In what year was the architect of the Corvel Library born?"
    queries = bridge_queries(question, [LIBRARY, MUSEUM], [LIBRARY, MUSEUM], 2)
    assert queries[0].startswith("Halvard Moen") and "born" in queries[0]
    # a passage already found about it needs no search
    assert not any(q.startswith("Halvard Moen")
                   for q in bridge_queries(question, [LIBRARY], [LIBRARY, ARCHITECT], 2))


async def test_the_answer_leads_with_the_second_hop_and_cites_no_bystander(
        embedder: Any) -> None:
    question = "In what year was the architect of the Corvel Library born?"
    draft = await _answer(embedder, question, [LIBRARY, MUSEUM, ARCHITECT])
    assert "1931" in draft.summary
    assert "Corvel Library" in draft.detail  # the link of the chain follows
    assert "s8" not in {c.source_id for c in draft.citations}  # shares words, answers nothing


async def test_a_job_searches_the_second_hop_and_cites_it(
        sqlite_engine: Any, chroma: Any, embedder: Any, knowledge_base: Any,
        tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    for page in (LIBRARY, ARCHITECT, MUSEUM):
        (folder / f"{page.id}.md").write_text(f"# {page.title}\n\n{page.content}\n")
    for n in range(30):  # passages that match the question's words better than the architect
        (folder / f"prize{n}.md").write_text(
            f"# Tarnby architecture prize {1950 + n}\n\nThe Tarnby architecture prize of "
            f"{1950 + n} went to a student architect born in Tarnby that year.\n")
    await knowledge_base.index([folder], "t1")
    client: JobClient = _client(sqlite_engine, chroma, embedder, knowledge_base)
    result = await client.run(ResearchRequest(
        question="In what year was the architect of the Corvel Library born?", tenant="t1"))
    job = await client.jobs.result(result.job_id)
    assert job is not None
    rounds = job.trace.iterations
    assert len(rounds) == 2 and any(q.startswith("Halvard Moen") for q in rounds[1].queries)
    assert "1931" in result.answer.summary
    assert {s.title for s in result.sources} <= {"Corvel Library", "Halvard Moen"}


# ---- limitations name things ---------------------------------------------------------------

ALTARPIECE = _page(9, "Brask Altarpiece", "The Brask Altarpiece is an altarpiece painted by "
                   "Anna Lindqvist for Brask church.")


def _limitations(question: str) -> list[str]:
    verified = verify_citations(_draft(ALTARPIECE), [ALTARPIECE])
    return grade(verified, [ALTARPIECE], detect_intent(question), [], only_local=True,
                 question=question).limitations


def test_limitations_never_report_a_common_word_of_the_question_missing() -> None:
    limitations = _limitations("What nationality was the painter of the Brask Altarpiece?")
    assert not any("nationality" in line for line in limitations)


def test_a_possessive_common_word_is_never_reported_missing() -> None:
    limitations = _limitations("Which women's church was the Brask Altarpiece painted for by "
                               "Anna Lindqvist?")
    assert not any("women" in line for line in limitations), limitations


def test_a_missing_name_is_still_reported() -> None:
    limitations = _limitations("What nationality was the painter of the Brask Altarpiece in "
                               "Velden?")
    assert any("Velden" in line for line in limitations)


def test_a_name_with_an_initial_is_found_with_the_full_middle_name() -> None:
    assert mentions("Robert K. Halvorsen", phrase("Robert Kare Halvorsen (born 1940) is ..."))
    assert not mentions("Robert K Halvorsen", phrase("Robert Moen met Halvorsen in Oslo"))
    assert not mentions("Velvet Quarry", phrase("a quarry of velvet stone"))


def test_a_plural_ending_a_name_is_named_in_the_singular_too() -> None:
    assert mentions("Nordic Heritage Sites", phrase("It was made a Nordic Heritage Site in 1990."))
    assert not mentions("Nordic Heritage Sites", phrase("the Nordic Heritage Fund's site"))
    parks = [_page(44, "Hallin National Park", "Hallin National Park was declared a Nordic "
                   "Heritage Site in 1990."),
             _page(45, "Vesk National Park", "Vesk National Park was declared a Nordic "
                   "Heritage Site in 1995.")]
    graded = _graded_answer("Have Hallin National Park and Vesk National Park both been "
                            "declared Nordic Heritage Sites?", parks)
    assert graded.confidence != Confidence.INSUFFICIENT, graded.limitations


def _draft(page: Source) -> Any:
    from core.answer.synthesis.base import Draft
    from core.models import Citation

    sentence = page.content or ""
    return Draft(summary=f"{sentence[:-1]} [1].", citations=[
        Citation(claim=sentence, source_id=page.id, quote=sentence)])


def test_an_unsettled_question_is_low_and_insufficient_when_a_side_has_no_passage() -> None:

    question = "Who was born first, Anna Lindqvist or Tomas Berglund?"
    berglund = _page(10, "Tomas Berglund", "Tomas Berglund is a Swedish painter of seascapes "
                     "who exhibited in Anna Lindqvist's gallery.")

    def graded(pages: list[Source]) -> Any:
        draft = _draft(pages[0])
        if len(pages) > 1:
            draft = draft.model_copy(update={
                "summary": f"{draft.summary} {(pages[1].content or '')[:-1]} [2].",
                "citations": draft.citations + _draft(pages[1]).citations})
        verified = verify_citations(draft, pages)
        return grade(verified, pages, detect_intent(question), [], only_local=True,
                     question=question, notes=[UNSETTLED])

    pupil = _page(11, "Anna Lindqvist", "Anna Lindqvist (born 14 March 1950) is a Swedish "
                  "painter who studied with Tomas Berglund.")
    assert graded([pupil]).confidence == Confidence.INSUFFICIENT  # he is named, not described
    both = graded([PAINTER, berglund])
    assert both.confidence == Confidence.LOW


async def test_a_comparison_searches_the_side_it_has_no_passage_about(
        embedder: Any, knowledge_base: Any) -> None:
    from core.config import PipelineSettings
    from core.models import Depth
    from core.research.engine import ResearchQuestion, ResearchState, tier
    from core.research.heuristic_steps import SecondHop
    from core.research.search import SearchScope
    from core.sources.local import LocalKnowledgeBaseSource

    question = "Who was born first, Anna Lindqvist or Pierre Dufresne?"
    reading = ResearchQuestion(question=question, subject=question,
                               intent=detect_intent(question), checklist=[question])
    scope = SearchScope({"local": LocalKnowledgeBaseSource(knowledge_base, 3)})
    state = ResearchState(tier=tier(Depth.QUICK, PipelineSettings(), None), rounds=1,
                          found=[[PAINTER, _page(12, "Lindqvist retrospective", "A show of "
                                                 "Anna Lindqvist and Pierre Dufresne.")]])
    plan, verdict = await SecondHop().reflect(reading, scope, state)
    assert [q.text for q in plan.queries] == ["Pierre Dufresne"]
    state.found.append([SCULPTOR])
    state.rounds = 1
    plan, verdict = await SecondHop().reflect(reading, scope, state)
    assert plan.queries == [] and verdict == {"sufficient": True, "second_hop": []}


async def test_an_area_decides_which_is_larger_whatever_its_unit(embedder: Any) -> None:
    parks = [_page(13, "Storpark", "Storpark is a national park in Sweden. It covers 3,960 "
                   "hectares of pine forest."),
             _page(14, "Eldvik Park", "Eldvik Park is a national park in Sweden covering "
                   "22 square miles of marsh.")]
    draft = await _answer(embedder, "Which is larger, Storpark or Eldvik Park?", parks)
    assert draft.summary.startswith("Eldvik Park: ")  # 57 km² against 39.6 km²


async def test_between_a_and_b_is_an_either_or_question(embedder: Any) -> None:
    draft = await _answer(embedder, "Between Korvatind and Storhorn, which mountain is "
                          "higher?", PEAKS)
    assert draft.summary.startswith("Korvatind: ")


async def test_a_kind_of_what_the_question_says_counts_as_saying_it(embedder: Any) -> None:
    singers = [_page(15, "Mirela Vasquez", "Mirela Vasquez (born 1962) is a Swedish singer and "
                     "songwriter."),
               _page(16, "Tomas Berglund", "Tomas Berglund (born 1958) is a Swedish guitarist "
                     "who played in several bands.")]
    draft = await _answer(embedder, "Are Mirela Vasquez and Tomas Berglund both musicians?",
                          singers)
    assert draft.summary.startswith("Yes: ")  # a singer and a guitarist are musicians
    draft = await _answer(embedder, "Are Mirela Vasquez and Tomas Berglund both actors?",
                          singers)
    assert draft.summary.startswith("No: ")


def test_a_how_question_with_or_is_no_either_or() -> None:
    from core.answer.verdict import either_or

    def options(question: str) -> list[str]:
        return either_or(question, detect_intent(question))

    assert options("How do I install or upgrade the bot?") == []
    assert options("Should I use PostgreSQL or SQLite for production?") == [
        "PostgreSQL", "SQLite"]


# ---- the things a comparison weighs --------------------------------------------------------

async def test_a_birthplace_before_the_nationality_is_not_the_nationality(embedder: Any
                                                                          ) -> None:
    emigre = _page(15, "Lucien Marchetti", "Lucien Marchetti (1890 – 1961) was a French-born "
                   "American film director of westerns.")
    local = _page(16, "Dana Whitcombe", "Dana Whitcombe (born 1958) is an American screenwriter "
                  "and producer.")
    question = "Are both Dana Whitcombe and Lucien Marchetti American?"
    draft = await _answer(embedder, question, [local, emigre])
    assert draft.summary.startswith("Yes: ")


async def test_a_country_said_of_one_side_is_not_a_side(embedder: Any) -> None:
    question = "Are Anna Lindqvist from Sweden, and French Pierre Dufresne, both painters?"
    assert {"Anna Lindqvist", "Pierre Dufresne"} <= set(detect_intent(question).entities)
    draft = await _answer(embedder, question, [PAINTER, SCULPTOR])
    assert draft.summary.startswith("Yes: Anna Lindqvist")
    verified = verify_citations(draft, [PAINTER, SCULPTOR])
    graded = grade(verified, [PAINTER, SCULPTOR], detect_intent(question), [], only_local=True,
                   question=question)
    assert graded.confidence != Confidence.INSUFFICIENT
    assert not any("Sweden" in line for line in graded.limitations)  # "Swedish" says it


async def test_a_duo_has_fewer_members_than_a_trio(embedder: Any) -> None:
    bands = [_page(17, "Glass Harbour", "Glass Harbour is an indie pop duo from Leeds, made up "
                   "of two cousins."),
             _page(18, "The Tallow Lamps", "The Tallow Lamps are a folk band from Cork. The "
                   "band is a trio of fiddle, banjo and voice.")]
    question = "Which band has more members, Glass Harbour or The Tallow Lamps?"
    draft = await _answer(embedder, question, bands)
    assert draft.summary.startswith("The Tallow Lamps: ")  # as the question writes it


async def test_a_passage_about_a_named_side_is_kept_below_the_relevance_floor(embedder: Any
                                                                             ) -> None:
    from core.retrieval.rank import rank_sources

    question = "Were Anna Lindqvist and Pierre Dufresne both painters known for landscapes?"
    other = _page(19, "Pierre Dufresne", "Pierre Dufresne worked in bronze.")
    names = detect_intent(question).entities
    unfloored = {s.id: s.metadata.relevance for s in await rank_sources(
        question, [[PAINTER, other]], embedder, 5, 2, 0.0)}
    assert unfloored["s1"] > unfloored["s19"] + 0.02  # the painter matches the question better
    floor = (unfloored["s1"] + unfloored["s19"]) / 2
    floored = await rank_sources(question, [[PAINTER, other]], embedder, 5, 2, floor)
    assert [s.id for s in floored] == ["s1"]  # the floor alone drops Dufresne's passage
    named = await rank_sources(question, [[PAINTER, other]], embedder, 5, 2, floor, names=names)
    assert [s.id for s in named] == ["s1", "s19"]  # he is a side: his passage stays


async def test_the_only_one_counts_as_one(embedder: Any) -> None:
    genera = [_page(20, "Velloria", "Velloria is a genus of mosses. It holds some 40 species "
                    "of damp rock faces."),
              _page(21, "Quarrelia", "Quarrelia alpina is a small herb of scree slopes, and the "
                    "only species in the genus Quarrelia.")]
    draft = await _answer(embedder, "Which genus has more species, Velloria or Quarrelia?",
                          genera)
    assert draft.summary.startswith("Velloria: Velloria is a genus of mosses. It holds")


async def test_what_two_share_is_the_description_both_openings_give(embedder: Any) -> None:
    pair = [_page(22, "Ines Halvorsen", "Ines Halvorsen (born 1971) is a Norwegian-Swedish "
                  "painter and printmaker known for her winter landscapes."),
            _page(23, "Oskar Brandt", "Oskar Brandt (1902 – 1977) was a Swedish painter and "
                  "printmaker of harbour scenes.")]
    draft = await _answer(embedder, "What profession do Ines Halvorsen and Oskar Brandt have "
                          "in common?", pair)
    assert draft.summary.startswith("Both are described as Swedish painter and printmaker: ")
    assert {c.source_id for c in draft.citations} == {"s22", "s23"}
    asks_where = await _answer(embedder, "Which university did both Ines Halvorsen and Oskar "
                               "Brandt attend?", pair)
    assert not asks_where.summary.startswith("Both")  # a place is not in their descriptions


async def test_a_kind_of_the_asked_word_supports_a_side(embedder: Any) -> None:
    pair = [_page(24, "Lena Sorvik", "Lena Sorvik (born 1988) is a Finnish singer and actress "
                  "from Turku."),
            _page(25, "Matti Halonen", "Matti Halonen (born 1950) is a Finnish composer of "
                  "choral music.")]
    draft = await _answer(embedder, "Who was also an actor, Lena Sorvik or Matti Halonen?", pair)
    assert draft.summary.startswith("Lena Sorvik: Lena Sorvik")
    assert [c.source_id for c in draft.citations] == ["s24", "s25"]  # and what the other is


async def test_a_duo_and_two_members_are_the_same_number(embedder: Any) -> None:
    bands = [_page(26, "Glass Harbour", "Glass Harbour is an indie pop duo from Leeds."),
             _page(27, "Salt Ferns", "Salt Ferns is a folk band from Cork with two members.")]
    draft = await _answer(embedder, "Do Glass Harbour and Salt Ferns have the same number of "
                          "members?", bands)
    assert draft.summary.startswith("Yes: ")


# ---- names as the question writes them -----------------------------------------------------

def test_a_possessive_apostrophe_opens_no_quotation() -> None:
    entities = detect_intent("Which label released Kestrel's debut album about the "
                             "island's birds?").entities
    assert not any("debut album" in e for e in entities)
    assert detect_intent("Is 'Blue Hour' a novel?").entities == ["Blue Hour"]


def test_a_capital_outside_ascii_starts_a_name() -> None:
    entities = detect_intent("Did Ölund Åberg and Émile Żak write Nights at Ærø?").entities
    assert {"Ölund Åberg", "Émile Żak"} <= set(entities)


def test_the_asked_property_and_a_year_measured_against_are_not_required_names() -> None:
    from core.answer.grading import specifics

    question = "The author of Quiet Harbours is of what Nationality?"
    assert specifics(detect_intent(question), question) == ["Quiet Harbours"]
    question = "Were Halden College and Brixham Institute both founded before 1950?"
    assert "1950" not in specifics(detect_intent(question), question)
    question = "Which Halden College team won in 1950?"
    assert "1950" in specifics(detect_intent(question), question)


CELLIST = _page(20, "Tomasz Wieczorak", "Tomasz Wieczorak (born 1971) is a Polish cellist who "
                "plays with the Kraków Chamber Orchestra.", 0.7)
RECITAL = _page(21, "Kraków Chamber Orchestra", "The Kraków Chamber Orchestra gave its first "
                "recital in 1990; its cellist Tomasz Wieczorak joined in 1998.", 0.6)


def _graded_answer(question: str, pages: list[Source]) -> Any:
    from core.answer.synthesis.base import Draft
    from core.models import Citation

    draft = Draft(summary=" ".join(f"{(p.content or '')[:-1]} [{n}]."
                                   for n, p in enumerate(pages, 1)),
                  citations=[Citation(claim=p.content or "", source_id=p.id,
                                      quote=p.content or "") for p in pages])
    return grade(verify_citations(draft, pages), pages, detect_intent(question), [],
                 only_local=True, question=question)


def test_a_name_spelled_one_letter_off_is_taken_as_written_and_said() -> None:
    graded = _graded_answer("What instrument does Tomasz Wieczorek play in the Kraków "
                            "Chamber Orchestra?", [CELLIST, RECITAL])
    assert graded.confidence in (Confidence.LOW, Confidence.MEDIUM)  # never High
    assert any('"Tomasz Wieczorak"' in line and '"Tomasz Wieczorek"' in line
               for line in graded.limitations)


def test_a_dictionary_word_one_letter_off_is_another_name() -> None:
    manor = _page(22, "Marden Hall", "Marden Hall is a manor house in Kent, England, built "
                  "in 1620 beside the river Teise.", 0.7)
    graded = _graded_answer("Which river flows past Marden Hill in Kent?", [manor])
    assert graded.confidence == Confidence.INSUFFICIENT
    assert any("Marden Hill" in line for line in graded.limitations)


def test_a_name_with_a_word_more_inside_is_said_as_the_documents_write_it() -> None:
    from core.answer.grading import spelled_as

    assert spelled_as("Oslo Harbour Police", phrase("the Oslo City Harbour Police")) \
        == "oslo city harbour police"
    assert spelled_as("Oslo Police", phrase("the Oslo City Police")) is None  # two words
    assert spelled_as("Harwick", phrase("Hartwick College")) is None  # one word: never


def test_cited_text_holding_little_of_the_question_does_not_answer() -> None:
    pages = [_page(23, "Velden", "Velden is a town in Bavaria on the river Vils.", 0.7),
             _page(24, "Vils", "The Vils is a river in Bavaria, a tributary of the Danube.",
                   0.7)]
    graded = _graded_answer("Which composer wrote the Velden festival overture for brass "
                            "band and organ?", pages)
    assert graded.confidence == Confidence.INSUFFICIENT
    assert any("only part of what the question asks" in line for line in graded.limitations)


async def test_two_things_shared_of_which_kind_are_said_first(embedder: Any) -> None:
    pages = [_page(25, "Lunaria", "Lunaria is a genus of flowering plants in the family "
                   "Brassicaceae, native to Europe."),
             _page(26, "Aethionema", "Aethionema is a genus of flowering plants in the family "
                   "Brassicaceae, known as stonecress.")]
    draft = await _answer(embedder, "Lunaria and Aethionema are both genera of which type of "
                          "plants?", pages)
    assert draft.summary.startswith("Both are described as")
    assert "flowering plants" in draft.summary
    assert {c.source_id for c in draft.citations} == {"s25", "s26"}


async def test_each_thing_the_question_names_is_cited_from_its_own_passage(
        embedder: Any) -> None:
    pages = [_page(27, "Ingrid Sol", "Ingrid Sol (born 1988) is a Danish tennis player. She "
                   "reached the final of the Nordic Open in 2012."),
             _page(28, "Hanna Brask", "Hanna Brask (born 1979) is a retired Swedish tennis "
                   "player. She was runner-up at the Nordic Open in 2003."),
             _page(29, "Nordic Open", "The Nordic Open is a tennis tournament held in Malmö "
                   "every August since 1968; Ingrid Sol played its 2012 final.")]
    draft = await _answer(embedder, "Which tournament have Ingrid Sol and Hanna Brask both "
                          "been finalists in?", pages)
    assert {"s27", "s28"} <= {c.source_id for c in draft.citations}


def test_a_title_that_places_its_subject_is_about_the_subject() -> None:
    from core.retrieval.rank import subjects_of

    park = _page(30, "Ashford Park, Kent", "Ashford Park is a public park.")
    assert " ashford park " in subjects_of(park)
    company = _page(31, "Halden, Inc.", "The firm makes boats.")  # a legal form, no place
    assert subjects_of(company) == {" halden inc ", " firm makes boats "}


def test_a_name_no_passage_mentions_is_searched_with_the_questions_words() -> None:
    from core.retrieval.rank import unmentioned_names

    question = "Which film starred Aldo Renn as a former Oslo Harbour Police detective?"
    found = [_page(32, "Aldo Renn", "Aldo Renn is a Norwegian actor.")]
    queries = unmentioned_names(question, detect_intent(question).entities, found)
    assert len(queries) == 1 and queries[0].startswith("Oslo Harbour Police")
    assert "detective" in queries[0] and "Aldo" not in queries[0]


async def test_the_sentence_naming_what_is_asked_for_leads_its_confirmation_follows(
        embedder: Any) -> None:
    ceremony = _page(33, "Tarnby Film Prize 2004", "The Tarnby Film Prize 2004 honoured the "
                     "best Nordic short films of the year. The ceremony was hosted by Ebba "
                     "Strand in Tarnby.", 0.7)
    director = _page(34, "Ebba Strand", "Ebba Strand (born 1961) is a Danish film director "
                     "and screenwriter known for short films.", 0.5)
    draft = await _answer(embedder, "Which Danish film director hosted the Tarnby Film Prize "
                          "2004?", [ceremony, director])
    assert "hosted by Ebba Strand" in draft.summary
    assert "s34" in {c.source_id for c in draft.citations}
    # an attribute of the thing named is still answered from its passage first
    draft = await _answer(embedder, "In what year was the architect of the Corvel Library "
                          "born?", [LIBRARY, MUSEUM, ARCHITECT])
    assert "1931" in draft.summary


def test_a_name_missing_from_the_cited_text_is_reported_whole() -> None:
    graded = _graded_answer("Which film starred Aldo Renn as a former Oslo Harbour Police "
                            "detective?", [_page(35, "Aldo Renn", "Aldo Renn is a Norwegian "
                                                 "actor who starred in films as a detective.")])
    assert any('Oslo Harbour Police' in line for line in graded.limitations)
    assert not any("Oslo, Harbour" in line or "Oslo or" in line for line in graded.limitations)


def test_a_regnal_numeral_an_initial_and_an_abbreviation_stay_in_the_name() -> None:
    from core.text import NAME

    assert [m.group(0) for m in NAME.finditer("honours made by King Harald V in 1990")] \
        == ["King Harald V"]
    assert [m.group(0) for m in NAME.finditer("a story by Edith K. Marlow about")] \
        == ["Edith K. Marlow"]
    assert [m.group(0) for m in NAME.finditer("It was Plan B. The plan failed")] \
        == ["It", "Plan", "The"]  # an initial before a sentence's first word ends a name
    intent = detect_intent("Which cup did Tarnby Rovers F.C. win in St. Olav Park?")
    assert intent.entities == ["Tarnby Rovers F.C", "St. Olav Park"]


def test_the_go_between_and_the_asked_property_are_not_names() -> None:
    assert detect_intent("In which year was the Queen who opened the Corvel Library "
                         "born?").entities == ["Corvel Library"]
    assert detect_intent("The author of Quiet Harbours is of what Nationality?").entities \
        == ["Quiet Harbours"]
    assert detect_intent("Who directed The Keeper of the Harbour Lights?").entities \
        == ["The Keeper of the Harbour Lights"]
    # a dictionary word opening a longer name stays in it; a function word does not
    assert detect_intent("Rose Marlow Gardens links a zoo with which park?").entities \
        == ["Rose Marlow Gardens"]
    assert detect_intent("Are Rose Marlow and Ebba Strand both painters?").entities \
        == ["Rose Marlow", "Ebba Strand"]


def test_an_ellipsis_inside_a_title_does_not_end_the_sentence() -> None:
    from core.text import sentences

    assert sentences("The Way It Is... is a 1958 novel by Ebba Strand. It sold well.") \
        == ["The Way It Is... is a 1958 novel by Ebba Strand.", "It sold well."]


def test_a_question_mark_ending_a_title_does_not_end_the_sentence() -> None:
    from core.text import sentences

    assert sentences("Is It Rain?  (1971) is Ada Fox's second album. It sold well.") \
        == ["Is It Rain? (1971) is Ada Fox's second album.", "It sold well."]
    assert sentences("He left. (He came back.) Then he wrote.") == [
        "He left.", "(He came back.)", "Then he wrote."]


NOVEL = _page(36, "Quiet Harbours...", "Quiet Harbours... is a 1958 novel written by Ebba "
              "Strand about a lighthouse keeper, Olav Brekke, and his family.", 0.6)
NOVELIST = _page(37, "Ebba Strand", "Ebba Strand (born 1921) is a Danish writer and "
                 "translator.", 0.1)
AUTHORS = _page(38, "Nordic Authors Prize", "The Nordic Authors Prize is given each year to an "
                "author from the Nordic countries, chosen by Helle Dam.", 0.5)


def test_the_second_hop_goes_on_from_the_opening_of_the_passage_about_the_named_thing(
) -> None:
    question = "The author of Quiet Harbours is of what nationality?"
    names = detect_intent(question).entities
    queries = bridge_queries(question, [AUTHORS, NOVEL], [AUTHORS, NOVEL], 2, names)
    # before a name elsewhere that stands beside the question's word "author"
    assert queries[0].startswith("Ebba Strand")


async def test_the_opening_of_the_go_betweens_passage_answers_the_question(
        embedder: Any) -> None:
    question = "The author of Quiet Harbours is of what nationality?"
    draft = await _answer(embedder, question, [NOVEL, AUTHORS, NOVELIST])
    assert draft.summary.startswith("Ebba Strand (born 1921) is a Danish writer")
    graded = grade(verify_citations(draft, [NOVEL, AUTHORS, NOVELIST]),
                   [NOVEL, AUTHORS, NOVELIST], detect_intent(question), [], only_local=True,
                   question=question)
    # "Danish" gives the nationality asked for: not a question the text holds only part of
    assert graded.confidence != Confidence.INSUFFICIENT
    assert graded.evidence is not None and graded.evidence.chained


async def test_a_date_of_birth_answers_in_what_year_someone_was_born(embedder: Any) -> None:
    honours = _page(39, "1990 Tarnby Honours", "The 1990 Tarnby Honours were appointments by "
                    "King Harald V to reward good works by citizens of Tarnby.", 0.8)
    king = _page(40, "Harald V", "Harald V (Harald Olav; 21 February 1937 – ) is King of "
                 "Tarnby since 1991.", 0.3)
    draft = await _answer(embedder, "In which year was the King who made the 1990 Tarnby "
                          "Honours born?", [honours, king])
    assert "1937" in draft.summary


async def test_a_pronoun_after_an_opening_phrase_is_quoted_with_its_subject(
        embedder: Any) -> None:
    film = _page(41, "The Lantern House (film)", "The Lantern House is a 2009 Danish fantasy "
                 "film directed by Ebba Strand. Set on an island off Jutland, it follows a "
                 "family who discover sea spirits around their lighthouse.", 0.7)
    draft = await _answer(embedder, "What fantasy film follows a family who discover sea "
                          "spirits around their lighthouse?", [film])
    # never "Set on an island off Jutland, it follows ..." alone
    assert draft.summary.startswith("The Lantern House is a 2009 Danish fantasy film")
    cup = _page(86, "Nordic Cup", "The Nordic Cup is a knockout football competition in "
                "Vestmark. Since 2017 it has been known as the Brekke Cup for sponsorship "
                "reasons.", 0.7)
    draft = await _answer(embedder, "What has been known as the Brekke Cup since 2017?", [cup])
    # a phrase of time needs no comma: never "Since 2017 it has been known ..." alone
    assert draft.summary.startswith("The Nordic Cup is a knockout football competition")
    poet = _page(87, "Ilse Varga", "Ilse Varga (born 3 May 1950) is a Hungarian poet. On "
                 "January 28, 2015, she became the first living writer inducted into the "
                 "Danube Writers Hall of Fame.", 0.7)
    draft = await _answer(embedder, "Which Danube Writers Hall of Fame writer was inducted "
                          "first?", [poet])
    # a date with commas in it is an opening phrase too
    assert draft.summary.startswith("Ilse Varga (born 3 May 1950)")


async def test_what_a_named_thing_is_is_answered_from_its_own_passage(embedder: Any) -> None:
    boat = _page(42, "Harbour Queen", "Harbour Queen was a replica paddle steamer based at "
                 "Tarnby Mills in Tarnby, Denmark; it carried tourists on the fjord.", 0.8)
    mall = _page(43, "Tarnby Mills", "Tarnby Mills is a regional shopping mall owned by Nordic "
                 "Property Group. It opened in Tarnby in 2001.", 0.6)
    draft = await _answer(embedder, "What is Tarnby Mills in Tarnby, Denmark?", [boat, mall])
    assert draft.summary.startswith("Tarnby Mills is a regional shopping mall")



def test_a_country_or_a_month_the_question_names_needs_no_passage_about_it() -> None:
    pages = [_page(46, "Velmora", "Velmora is a genus of flowering shrubs native to Japan and "
                   "Korea.", 0.7),
             _page(47, "Dantrix", "Dantrix is a genus of climbing plants native to Japan.",
                   0.7)]
    graded = _graded_answer("Are Velmora and Dantrix both genera native to Japan?", pages)
    assert graded.evidence is not None
    assert (graded.evidence.names, graded.evidence.about) == (2, 2)  # Japan is not a subject
    assert graded.confidence in (Confidence.MEDIUM, Confidence.HIGH)
    # a thing named with no passage about it still holds the grade down
    graded = _graded_answer("Are Velmora and Ebba Strand both native to Japan?", pages[:1])
    assert graded.confidence in (Confidence.LOW, Confidence.INSUFFICIENT)


def test_a_title_with_the_inside_is_one_name() -> None:
    assert detect_intent("Did Battle Beyond the Sun use scenes from a Soviet film?").entities \
        [0] == "Battle Beyond the Sun"


def test_a_passage_whose_title_places_it_in_a_named_region_is_still_the_go_between() -> None:
    village = _page(48, "East Tarnby, Vestmark", "East Tarnby is a village in the town of "
                    "Tarnby in Harrow County, Vestmark.", 0.8)
    county = _page(49, "Harrow County, Vestmark", "Harrow County is a county located in "
                   "Vestmark. Its county seat is Brekkeby.", 0.6)
    graded = _graded_answer("What is the county seat of the county where East Tarnby, "
                            "Vestmark is located?", [village, county])
    # "Harrow County, Vestmark" is about Harrow County, not about Vestmark
    assert graded.evidence is not None and graded.evidence.chained
    assert graded.confidence != Confidence.INSUFFICIENT
    # a place named with its state, which the question asks through: the state is named
    # too, and the county's passage is still the go-between
    village = _page(47, "East Tarnby, Kansas", "East Tarnby is a village in the town of "
                    "Tarnby in Harrow County, Kansas.", 0.8)
    county = _page(46, "Harrow County, Kansas", "Harrow County is a county located in "
                   "Kansas. Its county seat is Brekkeby.", 0.6)
    question = "What is the county seat of the county where East Tarnby, Kansas is located?"
    assert detect_intent(question).entities == ["East Tarnby", "Kansas"]
    graded = _graded_answer(question, [village, county])
    assert graded.evidence is not None and graded.evidence.chained
    assert graded.confidence != Confidence.INSUFFICIENT


async def test_the_passage_whose_subject_is_the_kind_asked_for_leads(embedder: Any) -> None:
    game = _page(50, "Harbour Quest", "Harbour Quest is a 1981 role-playing game designed by "
                 "Ebba Strand and published by Tarnby Press.", 0.8)
    designer = _page(51, "Ebba Strand", "Ebba Strand (born 1948) is a Danish game designer, "
                     "best known for her work with Harbour Quest and Sea Lanes.", 0.75)
    adventure = _page(52, "Tomb of Brekke", "Tomb of Brekke is a 1983 adventure for the "
                      "role-playing game Harbour Quest, published by Tarnby Press.", 0.6)
    draft = await _answer(embedder, 'What is the name of the adventure in "Harbour Quest", a '
                          "game designed by Ebba Strand?", [game, designer, adventure])
    assert draft.summary.startswith("Tomb of Brekke is a 1983 adventure for the role-playing")


async def test_of_two_of_the_kind_asked_for_the_one_the_named_things_passage_names_leads(
        embedder: Any) -> None:
    first = _page(53, "Olav Brekke", "Olav Brekke (1890 – 1931) was a Norwegian ace pilot and "
                  "adventurer, best remembered for his polar flights.", 0.6)
    other = _page(54, "Nils Varde", "Nils Varde (1885 – 1918) was a Norwegian and Danish "
                  "fighter pilot and flying ace in the First World War.", 0.65)
    plane = _page(55, "Havørn", "Havørn was a Norwegian seaplane that disappeared in 1928 "
                  "over the Barents Sea. It was flown by Olav Brekke and Rolf Dahl.", 0.6)
    draft = await _answer(embedder, "Which Norwegian ace pilot and adventurer flew the Havørn?",
                          [other, first, plane])
    assert draft.summary.startswith("Olav Brekke (1890 – 1931) was a Norwegian ace pilot")


async def test_a_name_joining_two_with_and_is_one_subject(embedder: Any) -> None:
    duo = _page(56, "Kettle and Spoon", "Kettle and Spoon are fictional characters in a Danish "
                "picture book of 1931.")
    film = _page(57, "Frost and Ember", "Frost and Ember is a 1987 animated film directed by "
                 "Mira Lund.")
    for question, sources in (("Are Kettle and Spoon fictional characters?", [duo]),
                              ("Was Frost and Ember directed by Mira Lund?", [film])):
        draft = await _answer(embedder, question, sources)
        assert draft.summary.startswith("Yes: "), question
    # "both" weighs two things: no passage is about each, so nothing is decided
    draft = await _answer(embedder, "Are Kettle and Spoon both fictional characters?", [duo])
    assert not draft.summary.startswith(("Yes", "No"))


async def test_a_species_is_its_genus_and_epithet(embedder: Any) -> None:
    genus = _page(58, "Velmora", "Velmora is a genus of flowering shrubs native to Japan.")
    species = _page(59, "Velmora alba", "Velmora alba is a species of shrub in the family "
                    "Rosaceae that is native to Korea.")
    draft = await _answer(embedder, "Is Velmora alba native to Korea?", [genus, species])
    assert draft.summary.startswith("Yes: ") and "Velmora alba is a species" in draft.summary


async def test_a_birthplace_in_another_country_answers_no(embedder: Any) -> None:
    painter = _page(60, "Ebba Strand", "Ebba Strand (1894–1986) was a Danish-American painter "
                    "born in Odense, Denmark, who worked in New York.")
    draft = await _answer(embedder, "Was Ebba Strand born in Norway?", [painter])
    assert draft.summary.startswith("No: ") and "born in Odense, Denmark" in draft.summary
    draft = await _answer(embedder, "Was Ebba Strand born in Denmark?", [painter])
    assert draft.summary.startswith("Yes: ")


async def test_members_listed_with_their_roles_or_nicknames_are_counted(embedder: Any) -> None:
    bands = [_page(61, "Glass Harbour", "Glass Harbour is a rock band from Leeds. It consists "
                   "of lead vocalist Tom Reed, keyboardist Ann Reed, and drummer Joe Hale."),
             _page(62, "The Tallow Lamps", "The Tallow Lamps were a folk band from Cork. "
                   'consisting of Rory Dunne (fiddle), Sean "Banjo" Kelly (banjo), Liam Roe '
                   "(voice) and Cian Byrne (drums)."),
             _page(63, "Kestrel", "Kestrel is an electronic duo from Oslo.")]
    question = "Which band has more members, Glass Harbour or The Tallow Lamps?"
    draft = await _answer(embedder, question, bands)
    assert draft.summary.startswith("The Tallow Lamps: ")  # four against three
    draft = await _answer(embedder, "Which band has more constant members, Kestrel or Glass "
                          "Harbour?", bands)
    assert draft.summary.startswith("Glass Harbour: ")  # "members", not "constant"


async def test_a_case_name_and_a_company_suffix_stay_in_the_option(embedder: Any) -> None:
    assert detect_intent("Which came first, Lund v. Holm or Tarnby Mills, Inc.?").entities == [
        "Lund v. Holm", "Tarnby Mills, Inc"]
    cases = [_page(64, "Lund v. Holm", "Lund v. Holm, 429 U.S. 190 (1976), was a case decided "
                   "by the Supreme Court."),
             _page(65, "Tarnby Mills, Inc. v. Brekke", "Tarnby Mills, Inc. v. Brekke, 334 U.S. "
                   "131 (1948) was an antitrust case decided by the Supreme Court.")]
    draft = await _answer(embedder, "Which case came first, Lund v. Holm or Tarnby Mills, Inc. "
                          "v. Brekke?", cases)
    assert draft.summary.startswith("Tarnby Mills, Inc. v. Brekke: ")


def test_a_title_is_read_the_same_in_every_process() -> None:
    # the small words of a title are tried longest first: "and" is never read as "an"
    script = ("from core.answer.verdict import _one_subject\n"
              "from core.research.intake import detect_intent\n"
              "q = 'Are Kettle and Spoon fictional characters?'\n"
              "print(_one_subject(q, detect_intent(q)))\n")
    seen = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}, check=True
                           ).stdout.strip() for seed in range(6)}
    assert seen == {"('Kettle and Spoon', 'fictional characters')"}


async def test_a_passage_whose_title_places_it_is_the_second_hop_of_a_passage_naming_it(
        embedder: Any) -> None:
    from core.retrieval.rank import rank_sources

    gardens = _page(66, "Alder Gardens, Brekkeby", "Alder Gardens is an open space in "
                    "Brekkeby linking the town zoo with Harrow Park.", 0.8)
    other = _page(67, "Brekkeby Zoo", "Brekkeby Zoo is a zoo in Brekkeby with 400 animals.")
    park = _page(68, "Harrow Park, Brekkeby", "Harrow Park is a public park in Brekkeby. It was "
                 "laid out by the gardener Olav Dahl in 1926.")
    question = "Alder Gardens links a zoo with a park laid out by which gardener?"
    ranked = await rank_sources(question, [[gardens, other, park]], embedder, 1, 1, 0.0)
    assert ranked[0].id == "s66" and "s68" in [s.id for s in ranked]


async def test_a_title_holding_and_is_one_side_of_a_both_question(embedder: Any) -> None:
    films = [_page(69, "The Mill and the Tower", "The Mill and the Tower is a 1926 Danish "
                   "silent film directed by Olav Dahl."),
             _page(70, "The Red Lantern (1950 film)", "The Red Lantern is a 1950 Danish "
                   "animated film.")]
    draft = await _answer(embedder, "Are The Mill and the Tower and The Red Lantern both "
                          "Danish films?", films)
    assert draft.summary.startswith("Yes: ")
    assert {c.source_id for c in draft.citations} == {"s69", "s70"}
    # the second of two weighed in time may be a title its names split
    books = [_page(71, "Salt and Silence", "Salt and Silence is a 1961 essay collection by "
                   "Per Holm."),
             _page(72, "Northern Lights: A Study", "Northern Lights: A Study of Ice is a 1947 "
                   "book by the critic Ebba Strand.")]
    draft = await _answer(embedder, "Was Northern Lights published before Salt and Silence?",
                          books)
    assert draft.summary.startswith("Yes: ")


async def test_a_word_of_the_same_sense_says_what_the_question_says(embedder: Any) -> None:
    tower = _page(73, "Brekke Clock Tower", "Brekke Clock Tower is a clock tower situated in "
                  "Old Town, a neighbourhood of Tarnby, next to the harbour.")
    draft = await _answer(embedder, "Is the Brekke Clock Tower located in Tarnby?", [tower])
    assert draft.summary.startswith("Yes: ")


async def test_of_two_born_the_same_year_the_earlier_day_is_older(embedder: Any) -> None:
    people = [_page(74, "Tove Ahl", "Tove Ahl (born 11 April 1973) is a Norwegian poet."),
              _page(75, "Per Holm", "Per Holm (born August 10, 1973) is a Danish critic.")]
    draft = await _answer(embedder, "Was Tove Ahl born before Per Holm?", people)
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, "Who is younger, Tove Ahl or Per Holm?", people)
    assert draft.summary.startswith("Per Holm: ")
    # a year alone against a day of that year settles nothing
    people[1] = _page(75, "Per Holm", "Per Holm (born 1973) is a Danish critic.")
    draft = await _answer(embedder, "Was Tove Ahl born before Per Holm?", people)
    assert not draft.summary.startswith(("Yes", "No"))


async def test_a_passage_about_what_the_leads_passage_names_elsewhere_is_cited(
        embedder: Any) -> None:
    season = _page(76, "2019–20 Tarnby FC season", "The 2019–20 season is Tarnby FC's 40th "
                   "year in existence and their first back in the second division. Along "
                   "with competing in the league, the club will also take part in the Nordic "
                   "Cup and the Harbour Trophy.", 0.8)
    cup = _page(77, "Nordic Cup", "The Nordic Cup is a knockout football competition in "
                "Vestmark. Since 2017, it has been known as the Brekke Cup for sponsorship "
                "reasons.", 0.6)
    other = _page(78, "Harbour Shield", "The Harbour Shield is a cup competition, known as "
                  "the Salt Shield for sponsorship reasons.", 0.6)
    draft = await _answer(embedder, "The 2019–20 Tarnby FC season will be a year in which the "
                          "team competes in the league cup known as what for sponsorship "
                          "reasons?", [season, cup, other])
    # the cup is named by the season's passage, though not in its best sentence: the cup's
    # passage is the second hop, and its sentence that answers leads
    cited = {c.source_id for c in draft.citations}
    assert "s77" in cited and "s78" not in cited
    assert "Brekke Cup" in draft.summary


async def test_a_name_holding_death_is_no_question_about_a_death(embedder: Any) -> None:
    bands = [_page(79, "Silent Death", "Silent Death is an American punk band formed in "
                   "Denver, Colorado, in 1979 by Ray Holm."),
             _page(80, "Kettle Drum", "Kettle Drum is a Danish rock band, formed in Odense in "
                   "1983.")]
    draft = await _answer(embedder, "Which band was formed first, Kettle Drum or Silent Death?",
                          bands)
    assert draft.summary.startswith("Silent Death: ")


async def test_the_maker_the_opening_names_decides_whoever_else_the_passage_names(
        embedder: Any) -> None:
    film = _page(81, "Night Court", "Night Court is a 1937 drama film directed by Mira Lund, "
                 "based on a story by Per Holm. It was the second time the story was filmed, "
                 "the first being 1932's Day Court, directed by Otto Brand.")
    draft = await _answer(embedder, "Was Night Court directed by Otto Brand?", [film])
    assert draft.summary.startswith("No: ") and "directed by Mira Lund" in draft.summary
    draft = await _answer(embedder, "Was Night Court directed by Mira Lund?", [film])
    assert draft.summary.startswith("Yes: ")
    # a maker of another kind named by the opening settles nothing against a producer
    draft = await _answer(embedder, "Was Night Court produced by Otto Brand?", [film])
    assert not draft.summary.startswith(("Yes", "No"))


async def test_a_nationality_born_birthplace_and_a_title_opening_with_a_number(
        embedder: Any) -> None:
    director = _page(82, "Otto Brand", "Otto Brand (May 7, 1890 – February 20, 1959) was a "
                     "French-born American film director.")
    draft = await _answer(embedder, "Was Otto Brand born in France?", [director])
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, "Was Otto Brand born in Italy?", [director])
    assert draft.summary.startswith("No: ")
    film = _page(83, "12 Tarnby Road", "12 Tarnby Road is a 1974 British film directed by "
                 "Mira Lund.")
    draft = await _answer(embedder, "Is 12 Tarnby Road an American film?", [film])
    assert draft.summary.startswith("No: ") and "British" in draft.summary


async def test_a_state_written_with_the_word_state_and_a_title_that_opens_with_a_name(
        embedder: Any) -> None:
    bands = [_page(84, "Grey Harbour", "Grey Harbour was an American rock band formed in "
                   "Tacoma, Washington in 1985."),
             _page(85, "Mira Lund and the Lanterns", "Mira Lund and the Lanterns is a rock "
                   "band formed in 2005 from Spokane, Washington.")]
    draft = await _answer(embedder, "Are Grey Harbour and Mira Lund and the Lanterns both rock "
                          "bands from Washington state?", bands)
    assert draft.summary.startswith("Yes: ")


async def test_a_nation_of_the_united_kingdom_is_told_apart(embedder: Any) -> None:
    bands = [_page(86, "Slate Harbour", "Slate Harbour were a Welsh rock band from Bangor, "
                   "Wales, formed in 1999."),
             _page(87, "Kestrel Lane", "Kestrel Lane are an English pop band from Leeds.")]
    question = "Are Slate Harbour and Kestrel Lane both Welsh bands?"
    draft = await _answer(embedder, question, bands)
    assert draft.summary.startswith("No: ") and "English" in draft.summary
    assert {c.source_id for c in draft.citations} == {"s86", "s87"}
    # a British band is not known to be Welsh: nothing decided
    british = _page(87, "Kestrel Lane", "Kestrel Lane are a British pop band.")
    draft = await _answer(embedder, question, [bands[0], british])
    assert not draft.summary.startswith(("Yes", "No"))
    # and either is from the United Kingdom
    draft = await _answer(embedder, "Are Slate Harbour and Kestrel Lane both British bands?",
                          bands)
    assert draft.summary.startswith("Yes: ")


async def test_a_nationality_of_a_state_that_no_longer_exists(embedder: Any) -> None:
    writers = [_page(88, "Jan Voral", "Jan Voral (1901 – 1986) was a Czechoslovak poet."),
               _page(89, "Emil Brandt", "Emil Brandt (1830 – 1914) was a German novelist.")]
    draft = await _answer(embedder, "Were Jan Voral and Emil Brandt of the same nationality?",
                          writers)
    assert draft.summary.startswith("No: ") and "Czechoslovak" in draft.summary


async def test_the_same_city_is_read_from_where_each_opening_puts_them(embedder: Any) -> None:
    bands = [_page(90, "The Lamplights", "The Lamplights are an American rock band formed in "
                   "1985 in Buffalo, New York."),
             _page(91, "Ninth Pier", "Ninth Pier is an American band originally from Chicago, "
                   "Illinois."),
             _page(92, "Copper Vale", "Copper Vale is an indie band from Buffalo, New York.")]
    draft = await _answer(embedder, "Are The Lamplights and Ninth Pier from the same city?",
                          bands)
    assert draft.summary.startswith("No: ") and "Chicago" in draft.summary
    draft = await _answer(embedder, "Are The Lamplights and Copper Vale from the same city?",
                          bands)
    assert draft.summary.startswith("Yes: ")


async def test_the_kind_the_opening_gives_decides_a_genus_of_what(embedder: Any) -> None:
    genera = [_page(93, "Velutina", "Velutina is a genus of extinct vascular plants of the "
                    "Devonian."),
              _page(94, "Morrowia", "Morrowia is a genus of fungi. Many species of it grow on "
                    "dead plant material."),
              _page(95, "Tarsilla", "Tarsilla is a genus of moths in the family Erebidae.")]
    draft = await _answer(embedder, "Are Velutina and Morrowia both genera of plants?", genera)
    assert draft.summary.startswith("No: ") and "genus of fungi" in draft.summary
    assert {c.source_id for c in draft.citations} == {"s93", "s94"}
    draft = await _answer(embedder, "Is Tarsilla a genus of insects?", genera)  # moths are
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, "Is Morrowia a genus of plants?", genera)
    assert draft.summary.startswith("No: ")


async def test_the_verb_of_a_did_question_may_be_said_in_other_words(embedder: Any) -> None:
    players = [_page(96, "Ivo Marek", "Ivo Marek (born 1963) is a former tennis player who "
                     "represented his country at the 1988 Summer Olympics in Seoul."),
               _page(97, "Tomas Lind", "Tomas Lind (born 1960) is a retired tennis player "
                     "who represented his country at the 1988 Summer Olympics.")]
    question = "Did Ivo Marek and Tomas Lind both compete at the 1988 Summer Olympics?"
    draft = await _answer(embedder, question, players)
    assert draft.summary.startswith("Yes: ")
    assert draft.notes and "other words" in draft.notes[0]  # graded below High
    # what else the question says must still be there: 1992 is not
    draft = await _answer(embedder, question.replace("1988", "1992"), players)
    assert draft.summary.startswith("No: ")
    # a word of a related sense somewhere in a passage does not say the question's word
    magazines = [_page(98, "Trail Kids", "Trail Kids is a children's nature magazine. It "
                       "offers feature articles for children."),
                 _page(99, "Rally", "Rally is an American sports magazine.")]
    draft = await _answer(embedder, "Are Trail Kids and Rally both sports magazines?",
                          magazines)
    assert draft.summary.startswith("No: ")


def test_a_title_opening_with_a_number_is_one_name() -> None:
    assert detect_intent("Do Second Chance and 11 Tarnby Road have the same director?"
                         ).entities == ["Second Chance", "11 Tarnby Road"]
    assert detect_intent("Which came first, 24 Lanes or Lost Harbour?").entities == [
        "24 Lanes", "Lost Harbour"]
    assert "Tarnby Road" in detect_intent("In 1994 Tarnby Road won what?").entities


def test_the_maker_the_question_asks_for_is_searched_before_other_names() -> None:
    film = _page(100, "Salt Harbour (1965 film)", "Salt Harbour is a 1965 thriller directed by "
                 "Ola Brenne from a screenplay by Tove Aas, based on the novel \"Grey Tide\", "
                 "written by Hanne Vik under a pseudonym.")
    question = "The 1965 thriller Salt Harbour was based on a novel by a writer born in what year?"
    queries = bridge_queries(question, [film], [film], 2, ["Salt Harbour"])
    assert queries[0].startswith("Hanne Vik")  # "written by", not the title or the director
    queries = bridge_queries(question.replace("a writer", "a director"), [film], [film], 2,
                             ["Salt Harbour"])
    assert queries[0].startswith("Ola Brenne")
    # any maker read as "<made> by": "narrated by" for a narrator; a word that only starts
    # like a maker's verb ("government" for "governor") is none
    documentary = _page(123, "Salt Roads", "Salt Roads is a 2001 documentary film by the "
                        "Tarn Institute, directed by Ola Brenne and narrated by Ada Holm.")
    queries = bridge_queries("Where was the narrator of the documentary Salt Roads born?",
                             [documentary], [documentary], 2, ["Salt Roads"])
    assert queries[0].startswith("Ada Holm")


def test_a_kind_of_work_between_a_year_and_a_title_is_not_part_of_the_name() -> None:
    assert detect_intent("Where was the director of the 1946 Western Song of Tarn born?"
                         ).entities == ["Song of Tarn"]
    assert detect_intent("Who spoke at the 2004 Republican National Convention?").entities == [
        "Republican National Convention"]


TOWERS = [_page(101, "Kestrel Tower", "Kestrel Tower is a 40-storey skyscraper in the Loop, "
                "Chicago, Illinois, completed in 1972."),
          _page(102, "Harrow Plaza", "Harrow Plaza is a 52-storey skyscraper in Midtown "
                "Manhattan, New York City, completed in 1989."),
          _page(103, "Pell Building", "The Pell Building is an office tower in Midtown "
                "Manhattan, New York City, completed in 2004.")]


async def test_a_decade_or_a_century_holds_the_years_it_spans(embedder: Any) -> None:
    question = "Were Kestrel Tower and Harrow Plaza both completed in the 20th century?"
    draft = await _answer(embedder, question, TOWERS)
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, question.replace("20th", "21st"), TOWERS)
    assert draft.summary.startswith("No: ")
    draft = await _answer(embedder, "Were Kestrel Tower and Harrow Plaza both completed in "
                          "the 1970s?", TOWERS)
    assert draft.summary.startswith("No: ") and "1989" in draft.summary + draft.detail
    draft = await _answer(embedder, "Were Kestrel Tower and Harrow Plaza completed in the "
                          "same decade?", TOWERS)
    assert draft.summary.startswith("No: ")
    draft = await _answer(embedder, "Were Kestrel Tower and Harrow Plaza completed in the "
                          "same century?", TOWERS)
    assert draft.summary.startswith("Yes: ")


async def test_the_same_city_reads_a_place_written_with_the(embedder: Any) -> None:
    draft = await _answer(embedder, "Are Kestrel Tower and Harrow Plaza located in the same "
                          "city?", TOWERS)
    assert draft.summary.startswith("No: ") and "Chicago" in draft.summary + draft.detail
    draft = await _answer(embedder, "Are Harrow Plaza and the Pell Building located in the "
                          "same city?", TOWERS)
    assert draft.summary.startswith("Yes: ")


async def test_the_same_profession_is_a_kind_of_work_both_openings_give(embedder: Any) -> None:
    people = [_page(104, "Mira Lund", "Mira Lund (born 4 May 1950) is an American film "
                    "director and screenwriter."),
              _page(105, "Otto Brand", "Otto Brand (2 June 1931 – 8 May 1990) was a German "
                    "film director and producer."),
              _page(106, "Ada Holm", "Ada Holm (born 1962) is a Norwegian chemist.")]
    draft = await _answer(embedder, "Do Mira Lund and Otto Brand share the same profession?",
                          people)
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, "Did Mira Lund and Ada Holm have the same occupation?",
                          people)
    assert draft.summary.startswith("No: ") and "chemist" in draft.summary + draft.detail


async def test_a_place_is_said_without_the_word_located(embedder: Any) -> None:
    draft = await _answer(embedder, "Is Kestrel Tower located in Chicago?", TOWERS)
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, "Are Harrow Plaza and the Pell Building both located in "
                          "New York City?", TOWERS)
    assert draft.summary.startswith("Yes: ")
    # a place in a US state is in the United States
    draft = await _answer(embedder, "Are Harrow Plaza and Kestrel Tower both located in the "
                          "United States?", TOWERS)
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, "Are Harrow Plaza and Kestrel Tower both located in "
                          "Canada?", TOWERS)
    assert draft.summary.startswith("No: ")


async def test_a_count_is_read_beside_a_word_of_the_same_sense(embedder: Any) -> None:
    draft = await _answer(embedder, "Which has more floors, Kestrel Tower or Harrow Plaza?",
                          TOWERS)
    assert draft.summary.startswith("Harrow Plaza: ") and "52-storey" in draft.summary
    draft = await _answer(embedder, "Which has fewer floors, Kestrel Tower or Harrow Plaza?",
                          TOWERS)
    assert draft.summary.startswith("Kestrel Tower: ")


async def test_the_link_that_names_what_is_asked_leads(embedder: Any) -> None:
    county = _page(107, "Tarn County", "Tarn County is a county in the U.S. state of Vermont. "
                   "As of the 2010 census, the population was 12,102. Its county seat is "
                   "Millbrook.")
    hamlet = _page(108, "East Ferris", "East Ferris is an unincorporated community in the town "
                   "of Ferris in Tarn County, Vermont, United States.")
    draft = await _answer(embedder, "What is the county seat of the county where East Ferris, "
                          "Vermont is located?", [county, hamlet])
    assert "Millbrook" in draft.summary
    actress = _page(109, "Ilse Varga", "Ilse Varga (born 1976) is an English actress best known "
                    "for roles such as Queen Maren in the TV film \"The Frost Crown\" (1999).")
    film = _page(110, "The Frost Crown", "The Frost Crown is a 1999 made-for-TV fantasy movie "
                 "from Harrow Pictures.")
    draft = await _answer(embedder, "In which role did Ilse Varga play in a 1999 Harrow "
                          "Pictures made-for-TV fantasy movie?", [film, actress])
    assert "Queen Maren" in draft.summary


async def test_what_the_review_found_is_not_answered_wrongly(embedder: Any) -> None:
    # an event verb must be said: "nominated for an Oscar" is no Yes for "win an Oscar"
    actors = [_page(111, "Ada Holm", "Ada Holm (born 1962) is a Norwegian actress. She was "
                    "nominated for an Oscar in 1990."),
              _page(112, "Ivo Marek", "Ivo Marek (born 1963) is a Czech actor. He won an Oscar "
                    "in 1995.")]
    draft = await _answer(embedder, "Did Ada Holm and Ivo Marek both win an Oscar?", actors)
    assert not draft.summary.startswith("Yes")
    # a kind written with commas or a rank after "in" is still the kind asked
    breads = [_page(113, "Tarka", "Tarka is a type of leavened, oven-baked flatbread."),
              _page(114, "Lomi", "Lomi is a type of flatbread from the north.")]
    draft = await _answer(embedder, "Are Tarka and Lomi both types of bread?", breads)
    assert draft.summary.startswith("Yes: ")
    # where each was born decides "born in the same city", not where each works
    singers = [_page(115, "Mira Lund", "Mira Lund (born 1970) is a singer born in Memphis, "
                     "Tennessee. She is based in Nashville, Tennessee."),
               _page(116, "Ada Berg", "Ada Berg (born 1972) is a singer born in Knoxville, "
                     "Tennessee. She is based in Nashville, Tennessee.")]
    draft = await _answer(embedder, "Were Mira Lund and Ada Berg born in the same city?",
                          singers)
    assert draft.summary.startswith("No: ")
    # "active in the 1990s" is not read from a birth year
    painters = [_page(117, "Ola Brenne", "Ola Brenne (born 1950) is a painter, active from "
                      "1975 to 2005."),
                _page(118, "Tove Aas", "Tove Aas (born 1960) is a painter, active from 1980.")]
    draft = await _answer(embedder, "Were Ola Brenne and Tove Aas both active in the 1990s?",
                          painters)
    assert not draft.summary.startswith(("Yes", "No"))
    # the noun before a kind of work counts; a kind of the other's does too
    players = [_page(119, "Bo Kim", "Bo Kim (born 1980) is an American football player."),
               _page(120, "Cy Dunn", "Cy Dunn (born 1981) is a baseball player."),
               _page(121, "Ann Lee", "Ann Lee (born 1979) is an English actress."),
               _page(122, "Per Holm", "Per Holm (born 1977) is a Danish actor.")]
    draft = await _answer(embedder, "Do Bo Kim and Cy Dunn have the same profession?", players)
    assert draft.summary.startswith("No: ")
    draft = await _answer(embedder, "Do Ann Lee and Per Holm have the same profession?",
                          players)
    assert draft.summary.startswith("Yes: ")


def test_a_year_before_a_name_and_a_name_opening_with_a_genre_stay_as_written() -> None:
    assert detect_intent("Between 1970 and 1980 Tarn Harbour released what?").entities == [
        "Tarn Harbour"]
    assert detect_intent("Who won the 1995 Drama Desk Award?").entities == ["Drama Desk Award"]


async def test_forms_a_fifth_blind_set_asked_in(embedder: Any) -> None:
    managers = [_page(124, "Hal Brodie", "Sir Hal Brodie (1909 – 1994) was a Scottish football "
                      "player and manager."),
                _page(125, "Ern Castle", "Ern Castle (1866 – 1932) was an English football "
                      "manager."),
                _page(126, "Tom Reid", "Tom Reid (1950 – 2010) was a British football "
                      "manager.")]
    # a Scottish and an English manager are not of one nationality; a Scottish and a
    # British one are both of the United Kingdom
    draft = await _answer(embedder, "Were Hal Brodie and Ern Castle of the same nationality?",
                          managers)
    assert draft.summary.startswith("No: ")
    draft = await _answer(embedder, "Were Hal Brodie and Tom Reid of the same nationality?",
                          managers)
    assert draft.summary.startswith("Yes: ")
    # a year and a kind before the title; the maker the opening names decides
    film = _page(127, "A Song for Tarn", "A Song for Tarn is a 1949 American comedy film "
                 "directed by Ola Brenne and written by Tove Aas.")
    draft = await _answer(embedder, "Was the 1949 film A Song for Tarn directed by Ola Brenne?",
                          [film])
    assert draft.summary.startswith("Yes: ")
    draft = await _answer(embedder, "Was the 1949 film A Song for Tarn directed by Tove Aas?",
                          [film])
    assert draft.summary.startswith("No: ")
    # quotes around a title
    song = _page(128, "Tarn Drum", "\"Tarn Drum\" is a popular Scottish folk song and nursery "
                 "rhyme.")
    draft = await _answer(embedder, "Is \"Tarn Drum\" a Scottish folk song?", [song])
    assert draft.summary.startswith("Yes: ")
    # "as the band B": a kind between "the" and the name
    bands = [_page(129, "The Salt Lanterns", "The Salt Lanterns are an English rock band."),
             _page(130, "Grey Harbour", "Grey Harbour is an American indie band.")]
    draft = await _answer(embedder, "Are The Salt Lanterns from the same country as the band "
                          "Grey Harbour?", bands)
    assert draft.summary.startswith("No: ")
    # where each was born, written without a place after it
    physicists = [_page(131, "Ivo Marek", "Ivo Marek (born in Rome on 8 April 1967) is an "
                        "Italian physicist."),
                  _page(132, "Ugo Lenti", "Ugo Lenti (born 1939 in Rome) is an Italian "
                        "physicist who works in Geneva, Switzerland.")]
    draft = await _answer(embedder, "Were physicists Ivo Marek and Ugo Lenti born in the same "
                          "city?", physicists)
    assert draft.summary.startswith("Yes: ")


async def test_a_describing_word_the_passage_leaves_unsaid_is_no_no(embedder: Any) -> None:
    # "a Chilean artist" does not say which kind of artist: never No; Yes as the question
    # reads it, with a note that says so (graded Low)
    artists = [_page(140, "Rosa Ilabaca", "Rosa Ilabaca (1931 – 1999) was a Chilean artist "
                      "known for her murals."),
               _page(141, "Tomas Vidal", "Tomas Vidal (born 1950) is a Peruvian visual artist "
                      "and teacher.")]
    soto = _page(139, "Lia Soto", "Lia Soto (1920 – 1990) was a Bolivian painter and teacher.")
    for question in ("Were Rosa Ilabaca and Tomas Vidal both visual artists?",
                     "Were Tomas Vidal and Lia Soto both visual artists?"):  # "a painter"
        draft = await _answer(embedder, question, [*artists, soto])
        assert draft.summary.startswith("Yes: "), draft.summary
        assert BROAD in draft.notes
        graded = grade(verify_citations(draft, [*artists, soto]), [*artists, soto],
                       detect_intent(question), [], only_local=True, question=question,
                       notes=draft.notes)
        assert graded.confidence == Confidence.LOW
    # a thing whose opening leaves out its genre mostly has none: not settled, never Yes
    bands = [_page(136, "Grey Fen", "Grey Fen is an American band formed in 1990."),
             _page(137, "Iron Weald", "Iron Weald is an American heavy metal band.")]
    draft = await _answer(embedder, "Are Grey Fen and Iron Weald both heavy metal bands?", bands)
    assert not draft.summary.startswith(("Yes", "No")), draft.summary
    # a kind further below is not the noun: "a vocalist and songwriter" is no manga artist
    draft = await _answer(embedder, "Were Tomas Vidal and Kai Endo both visual artists?", [
        *artists, _page(138, "Kai Endo", "Kai Endo (born 1970) is a Japanese vocalist and "
                        "songwriter.")])
    assert draft.summary.startswith("No: ")
    # another describing word in its place is: "a folk band" is no metal band
    bands = [_page(142, "Iron Fell", "Iron Fell is a Finnish folk band formed in 1999."),
             _page(143, "Black Tarn", "Black Tarn is a Swedish metal band formed in 2001.")]
    draft = await _answer(embedder, "Are Iron Fell and Black Tarn both metal bands?", bands)
    assert draft.summary.startswith("No: ")


async def test_the_same_games_are_the_same_edition_of_them(embedder: Any) -> None:
    runners = [_page(144, "Arlo Penn", "Arlo Penn (born 1948) is a Canadian sprinter. He "
                      "competed in the men's 800 metres at the 1972 Summer Olympics."),
               _page(145, "Dale Shore", "Dale Shore (born 1950) is a Canadian sprinter. He "
                      "competed in the men's 800 metres at the 1976 Summer Olympics."),
               _page(146, "Cy Ward", "Cy Ward (born 1949) is a Canadian sprinter. He competed "
                      "in the men's 800 metres at the 1976 Summer Olympics.")]
    question = "Did Arlo Penn and Dale Shore run the 800 metres at the same Summer Olympics?"
    assert (await _answer(embedder, question, runners)).summary.startswith("No: ")
    question = "Did Cy Ward and Dale Shore run the 800 metres at the same Summer Olympics?"
    assert (await _answer(embedder, question, runners)).summary.startswith("Yes: ")
    # two editions on one side: not settled by the first of them
    twice = _page(147, "Eli Park", "Eli Park (born 1947) is a Canadian sprinter. He competed "
                  "in the men's 800 metres at the 1972 and 1976 Summer Olympics.")
    question = "Did Eli Park and Dale Shore run the 800 metres at the same Summer Olympics?"
    assert not (await _answer(embedder, question, [*runners, twice])).summary.startswith(
        ("Yes", "No"))


async def test_the_same_instrument_is_read_from_who_plays_what(embedder: Any) -> None:
    players = [_page(147, "Ned Lark", "Ned Lark (born 1960) is an English bassist and vocalist "
                      "in the band Soft Iron."),
               _page(148, "Ivy Moss", "Ivy Moss (born 1962) is an English guitarist, singer and "
                      "songwriter."),
               _page(149, "Ray Dunn", "Ray Dunn (born 1958) is an American guitarist and "
                      "producer.")]
    question = "Did Ned Lark and Ivy Moss play the same instrument?"
    assert (await _answer(embedder, question, players)).summary.startswith("No: ")
    question = "Did Ray Dunn and Ivy Moss play the same instrument?"
    assert (await _answer(embedder, question, players)).summary.startswith("Yes: ")


async def test_a_novel_by_its_author_is_written_by_them(embedder: Any) -> None:
    novels = [_page(150, "The Salt Road", "The Salt Road is a 1951 novel by Swiss author Lena "
                     "Brun. It won a prize."),
              _page(151, "Winter Ash", "Winter Ash is a philosophical novel by Lena Brun."),
              _page(152, "Red Quay", "Red Quay is a 1960 novel by Oskar Tell, produced by Ash "
                    "Press as a radio play by Lena Brun.")]
    question = "Were The Salt Road and Winter Ash written by the same author?"
    assert (await _answer(embedder, question, novels)).summary.startswith("Yes: ")
    question = "Were The Salt Road and Red Quay written by the same author?"
    assert (await _answer(embedder, question, novels)).summary.startswith("No: ")


async def test_is_a_larger_or_taller_than_b_is_weighed_by_their_numbers(embedder: Any) -> None:
    towns = [_page(153, "Arrowby, Queensland", "Arrowby is a town in Queensland, Australia, "
                   "with a population of 8,412 people at the 2011 census."),
             _page(154, "Denholm", "Denholm is a suburb of Carrick. At the 2006 census, Denholm "
                   "had a population of 11,020 people.")]
    question = "Does Arrowby, Queensland have a larger population than Denholm?"
    assert (await _answer(embedder, question, towns)).summary.startswith("No: ")
    question = "Does Denholm have a larger population than Arrowby, Queensland?"
    assert (await _answer(embedder, question, towns)).summary.startswith("Yes: ")
    towers = [_page(155, "88 Wren Street", "88 Wren Street is a proposed residential tower. "
                    "It will rise 52 stories or 780 feet."),
              _page(156, "301 Oak Avenue", "301 Oak Avenue is an office building. It is 240 m "
                    "tall.")]
    question = "Is 88 Wren Street planned to be taller than 301 Oak Avenue?"
    assert (await _answer(embedder, question, towers)).summary.startswith("No: ")


async def test_a_place_named_with_its_state_is_one_name(embedder: Any) -> None:
    cities = [_page(157, "Elton, Kansas", "Elton is a city in and the county seat of Barrow "
                    "County, Kansas, United States."),
              _page(158, "North Fairview, Kansas", "North Fairview is the largest city in "
                    "Barrow County, Kansas, United States.")]
    question = "Are Elton, Kansas and North Fairview, Kansas in the same county?"
    assert detect_intent(question).entities == ["Elton, Kansas", "North Fairview, Kansas"]
    # a list of places is no place with its region, nor is a longer name or a possessive
    assert detect_intent("Which is larger, Kansas, Ohio or Utah?").entities == [
        "Kansas", "Ohio", "Utah"]
    assert detect_intent("Which is older, Emory, Georgia Tech or Duke?").entities == [
        "Emory", "Georgia Tech", "Duke"]
    assert detect_intent("Which is older, Harvard, Virginia or Yale?").entities == [
        "Harvard", "Virginia", "Yale"]
    assert detect_intent("Did Sam Hale, Texas's first senator, die first?").entities[0] == \
        "Sam Hale"
    assert (await _answer(embedder, question, cities)).summary.startswith("Yes: ")


async def test_who_made_it_and_when_lead_with_the_sentence_that_says_so(embedder: Any
                                                                        ) -> None:
    film = _page(159, "Tin Valley", "Tin Valley is a 2015 animated road film produced by Lark "
                 "Studios and released by Harbor Pictures. Shot in Oregon over two summers, "
                 "Tin Valley was directed by Mina Oda and written by Sam Pike.")
    draft = await _answer(embedder, "Who directed the 2015 animated film Tin Valley?", [film])
    assert draft.summary.startswith("Shot in Oregon over two summers, Tin Valley was directed "
                                    "by Mina Oda")
    writer = _page(160, "Jon Kessel", "Jon Kessel (born April 2, 1961) is an American "
                   "television producer. After writing for several sitcoms, Kessel co-created "
                   "the series Harbor Lights with Amy Tran.")
    draft = await _answer(embedder, "In what year was the producer who co-created Harbor "
                          "Lights with Amy Tran born?", [writer])
    assert "1961" in draft.summary


async def test_directed_by_at_the_start_of_a_sentence_names_who_directed(embedder: Any
                                                                          ) -> None:
    film = _page(161, "Road to Tarn", "Road to Tarn is a 2016 animated comedy film produced by "
                 "Lark Studios and released by Harbor Pictures. Directed by Mina Oda, the "
                 "screenplay was written by Sam Pike.")
    draft = await _answer(embedder, "Who directed the 2016 animated film Road to Tarn?", [film])
    assert draft.summary.startswith("Directed by Mina Oda")


def test_a_title_of_a_word_then_in_and_a_name_is_one_name() -> None:
    assert detect_intent("When was the play Lost in Tarnby written?").entities == [
        "Lost in Tarnby"]
    assert detect_intent("Is Mount Kenya in Kenya?").entities == ["Mount Kenya", "Kenya"]
    assert detect_intent("Is Wales in Britain?").entities == ["Wales", "Britain"]
    assert detect_intent("Is Nice in France?").entities == ["Nice", "France"]
    # a surname that is also a word, inside a name, opens no title
    assert detect_intent("Who starred with Ned 'Red' Banks in Tarn Road?").entities[-2:] == [
        "Banks", "Tarn Road"]


async def test_the_go_between_a_title_with_in_names_answers_the_question(embedder: Any
                                                                          ) -> None:
    play = _page(162, "Lost in Tarnby", "Lost in Tarnby is a 1982 British television play "
                 "written by Ola Brenne and directed by Tove Aas. Cinematographer Ivo Marek's "
                 "use of the Steadicam gave it a gritty look. Editor Ugo Lenti cut it in ten "
                 "days.", 0.8)
    editor = _page(163, "Ugo Lenti", "Ugo Lenti (born May 9, 1932) was an Italian film and "
                   "television editor. He was born in Rome and edited television plays.", 0.6)
    camera = _page(164, "Ivo Marek", "Ivo Marek (born 15 September 1940) is an English "
                   "cinematographer and film director.", 0.55)
    draft = await _answer(embedder, "In what year was the cinematographer of the television "
                          "play Lost in Tarnby born?", [play, editor, camera])
    assert draft.summary.startswith("Ivo Marek (born 15 September 1940)")


async def test_the_same_position_is_read_from_the_positions_the_openings_name(embedder: Any
                                                                              ) -> None:
    players = [_page(165, "Arne Holt", "Arne Holt (1931 – 2004) was a Swedish football defender "
                     "and manager."),
               _page(166, "Jan Mroz", "Jan Mroz (born 1965) is a Polish former football player "
                     "who played goalkeeper."),
               _page(167, "Leo Brand", "Leo Brand (born 1970) is a Danish former footballer who "
                     "played as a centre-back for Brondby.")]
    question = "Did Arne Holt and Jan Mroz play the same position?"
    assert (await _answer(embedder, question, players)).summary.startswith("No: ")
    question = "Did Arne Holt and Leo Brand play the same position?"
    assert (await _answer(embedder, question, players)).summary.startswith("Yes: ")


async def test_the_same_sport_is_read_from_the_sports_the_openings_name(embedder: Any) -> None:
    players = [_page(168, "Rui Sal", "Rui Sal (born 1962) is a former professional tennis "
                     "player from Spain."),
               _page(169, "Ana Mor", "Ana Mor (born 1949) is a former tennis player who won "
                     "the US Open."),
               _page(170, "Kit Dale", "Kit Dale (born 1970) is an English former footballer "
                     "who played for Leeds.")]
    question = "Do Rui Sal and Ana Mor play the same sport?"
    assert (await _answer(embedder, question, players)).summary.startswith("Yes: ")
    question = "Do Rui Sal and Kit Dale play the same sport?"
    assert (await _answer(embedder, question, players)).summary.startswith("No: ")


async def _first_word(embedder: Any, question: str, *pages: tuple[str, str]) -> str:
    """"Yes" or "No" as the answer to `question` over made-up (title, text) passages begins,
    or "unsettled"."""
    sources = [_page(300 + n, title, text) for n, (title, text) in enumerate(pages)]
    summary = (await _answer(embedder, question, sources)).summary
    return summary.split(":")[0] if summary.startswith(("Yes:", "No:")) else "unsettled"


async def test_a_sport_position_or_instrument_is_read_only_from_what_its_subject_plays(
        embedder: Any) -> None:
    first_word = functools.partial(_first_word, embedder)
    table = ("Ma Lin", "Ma Lin (born 1980) is a Chinese table tennis player.")
    tennis = ("Rui Sal", "Rui Sal (born 1962) is a former professional tennis player.")
    assert await first_word("Do Ma Lin and Rui Sal play the same sport?", table, tennis) == "No"
    # "turned golf commentator" is not what he plays; "football" alone says not which one
    turned = ("Andy Fell", "Andy Fell (born 1955) is a Scottish former footballer turned golf "
              "commentator.")
    golfer = ("Peter Ash", "Peter Ash (1931 – 2022) was an English professional golfer.")
    assert await first_word("Did Andy Fell and Peter Ash play the same sport?", turned,
                            golfer) == "No"
    gridiron = ("Tom Bray", "Tom Bray (born 1977) is an American former football quarterback.")
    soccer = ("Dave Beck", "Dave Beck (born 1975) is an English former professional footballer.")
    assert await first_word("Did Tom Bray and Dave Beck play the same sport?", gridiron,
                            soccer) == "unsettled"
    # the daughter of a pianist plays no piano; a bass guitarist is a bassist
    daughter = ("Amy Lo", "Amy Lo (born 1990) is a singer and songwriter, the daughter of jazz "
                "pianist Ray Lo.")
    pianist = ("Joe Samp", "Joe Samp (1939 – 2014) was an American jazz pianist.")
    assert await first_word("Did Amy Lo and Joe Samp play the same instrument?", daughter,
                            pianist) == "unsettled"
    bass = ("John Deal", "John Deal (born 1951) is an English bass guitarist.")
    lead = ("Bri Mayo", "Bri Mayo (born 1947) is an English lead guitarist.")
    assert await first_word("Did John Deal and Bri Mayo play the same instrument?", bass,
                            lead) == "No"
    # a drummer is a percussionist: not settled either way
    drums = ("Ringo Stark", "Ringo Stark (born 1940) is an English drummer.")
    percussion = ("Eve Glen", "Eve Glen (born 1965) is a Scottish percussionist.")
    assert await first_word("Did Ringo Stark and Eve Glen play the same instrument?", drums,
                            percussion) == "unsettled"
    small = ("Lee Jam", "Lee Jam (born 1984) is an American basketball small forward.")
    power = ("Tim Dunn", "Tim Dunn (born 1976) is an American basketball power forward.")
    assert await first_word("Did Lee Jam and Tim Dunn play the same position?", small,
                            power) == "No"


async def test_a_work_by_b_names_only_the_maker_its_kind_of_work_has(embedder: Any) -> None:
    first_word = functools.partial(_first_word, embedder)
    # a novel by B is written by B, never produced by B; a nationality is no maker
    film = ("Tarn", "Tarn is a 1976 film based on the novel by Stig Kings.")
    other = ("Mire", "Mire is a 1990 film based on the novel by Stig Kings.")
    assert await first_word("Do Tarn and Mire have the same producer?", film,
                            other) == "unsettled"
    albums = [("Lowtide", "Lowtide is the second studio album by American rock band Fen."),
              ("Ten Rooms", "Ten Rooms is the debut studio album by American rock band Moor.")]
    assert await first_word("Do Lowtide and Ten Rooms have the same producer?",
                            *albums) == "unsettled"
    # a film by its director
    films = [("Vertige", "Vertige is a 1958 American film by Alf Hitch."),
             ("Psyche", "Psyche is a 1960 American film by Alf Hitch.")]
    assert await first_word("Were Vertige and Psyche directed by the same person?",
                            *films) == "Yes"


async def test_a_measure_is_read_next_to_its_word_in_its_unit(embedder: Any) -> None:
    first_word = functools.partial(_first_word, embedder)
    big = ("Tarnopol", "Tarnopol is the capital of Vestmark, with a population of 14 million.")
    small = ("Brekkeby", "Brekkeby is a city. The population grew by 4 percent to 302,971.")
    assert await first_word("Does Tarnopol have a larger population than Brekkeby?", big,
                            small) == "Yes"
    # the capacity, not the site's area
    grounds = [("Elm Park", "Elm Park is a stadium on a 30 hectare site, with a capacity of "
                "90,000."),
               ("Oak Field", "Oak Field is a stadium on a 60 hectare site, with a capacity of "
                "74,310.")]
    assert await first_word("Does Elm Park have a larger capacity than Oak Field?",
                            *grounds) == "Yes"
    # a height beside its word, not a race's length or another peak's
    runners = [("Ulf Bolt", "Ulf Bolt is a sprinter who won the 100 m title. He stands 1.95 m "
                "tall."),
               ("Mika John", "Mika John is a sprinter who won the 400 m title. He stands 1.85 m "
                "tall.")]
    assert await first_word("Is Ulf Bolt taller than Mika John?", *runners) == "Yes"
    peaks = [("Lhotar", "Lhotar is the fourth highest mountain at 8,516 metres, connected to "
              "Mount Evra (8,849 m)."),
             ("Kangar", "Kangar is the third highest mountain, with an elevation of 8,586 m.")]
    assert await first_word("Is Lhotar higher than Kangar?", *peaks) == "No"


async def test_who_made_what_leads_only_with_the_maker_of_what_is_asked(embedder: Any) -> None:
    film = _page(210, "Harbor Jaws", "Harbor Jaws is a 1975 thriller directed by Sten Berg. "
                 "The screenplay was written by Ola Brenne and Tove Aas. Its score, by Ivo "
                 "Marek, won an award.")
    draft = await _answer(embedder, "Who wrote the score for Harbor Jaws?", [film])
    assert not draft.summary.startswith("The screenplay was written")
    # a year of birth does not answer when someone retired
    producer = _page(211, "Jon Kessel", "Jon Kessel (born April 2, 1961) is an American "
                     "television producer. After writing for several sitcoms, Kessel "
                     "co-created the series Harbor Lights with Amy Tran.")
    draft = await _answer(embedder, "In what year did the producer who co-created Harbor "
                          "Lights with Amy Tran retire?", [producer])
    assert "1961" not in draft.summary


def test_new_south_wales_is_in_australia_and_south_wales_in_wales() -> None:
    from core.countries import countries_in, home_nations_in

    assert countries_in("a town in New South Wales") == ["Australia"]
    assert home_nations_in("a town in New South Wales") == []
    assert home_nations_in("a coastal city in South Wales") == ["Wales"]
    # a US state or region whose name holds another country's is neither country: a
    # passage saying "American" does not name it
    assert countries_in("a painter born in Taos, New Mexico") == []
    assert countries_in("a poet from New England") == []
    assert countries_in("a poet from Mexico City") == ["Mexico"]
    assert home_nations_in("a poet from New England") == []


def test_names_of_short_words_alone_are_the_same_only_word_for_word() -> None:
    from core.text import same_phrase

    assert same_phrase("The Who Else", "who else") and same_phrase("The Works", "Works")
    assert not same_phrase("I Was", "Should We Tell Him")
    assert not same_phrase("The", "")  # no words at all name nothing


async def test_both_in_a_state_is_weighed_by_the_state_each_opening_names(
        embedder: Any) -> None:
    orchids = [_page(230, "Caladenia vesper", "Caladenia vesper, the evening spider orchid, "
                     "is a plant in the orchid family and is endemic to New South Wales."),
               _page(231, "Caladenia nimba", "Caladenia nimba is a plant in the orchid family "
                     "and is endemic to New South Wales, where it grows in heath."),
               _page(232, "Caladenia ferox", "Caladenia ferox is a plant in the orchid family "
                     "and is endemic to Tasmania.")]
    cases = [("Are Caladenia vesper and Caladenia nimba both endemic to New South Wales?", "Yes"),
             ("Are Caladenia vesper and Caladenia ferox both endemic to New South Wales?", "No")]
    for question, answer in cases:
        draft = await _answer(embedder, question, orchids)
        assert draft.summary.startswith(f"{answer}: Caladenia vesper"), question
        assert len(draft.citations) == 2, question
    # the No rests on the other state its opening names, not on words it lacks
    assert OTHERWISE in draft.notes
    # "endemic to New South Wales and Tasmania": one in each is no Yes
    draft = await _answer(embedder, "Are Caladenia vesper and Caladenia ferox both endemic to "
                          "New South Wales and Tasmania?", orchids)
    assert not draft.summary.startswith("Yes"), draft.summary


def test_a_place_named_with_its_region_that_only_places_the_subject_needs_no_passage(
        ) -> None:
    mall = _page(220, "Tarn Mills", "Tarn Mills is a shopping mall in Elton, Kansas, opened "
                 "in 2000 on the site of a theme park.", 0.7)
    graded = _graded_answer("Is Tarn Mills a shopping mall in Elton, Kansas?", [mall])
    assert graded.evidence is not None and graded.evidence.names == 1
    assert graded.confidence == Confidence.MEDIUM  # one document: not High, and not Low


def test_a_name_whose_phrase_is_one_common_word_is_named_only_word_for_word() -> None:
    from core.retrieval.rank import named_subjects

    sitcom = _page(74, "Can &amp; Kettle", "Can & Kettle is a British sitcom set in Leeds.")
    assert named_subjects("It follows Mara Kettle and her family.", sitcom) == set()
    assert named_subjects('He starred in the sitcom "Can & Kettle" (1990-94).', sitcom) \
        == {" kettle "}
    orchard = _page(75, "Out of Orchards", "Out of Orchards is a 1962 novel.")
    assert named_subjects("He wrote the novel Out of Orchards in Kent.", orchard) != set()
    assert named_subjects("The orchards of Kent are old.", orchard) == set()
    # a name written as a name: not by words of the language that spell it
    assert named_subjects("They sold apples out of orchards in Kent.", orchard) == set()
    lake = _page(76, "Fishing Lake", "Fishing Lake is a lake in Saskatchewan.")
    assert named_subjects("Foo Lake is a recreational and fishing lake in Ohio.", lake) == set()
    assert named_subjects("Foo Lake drains into Fishing Lake.", lake) == {" fishing lake "}
    band = _page(79, "Victor (band)", "Victor is a South Korean boy group formed in 2013.")
    assert named_subjects("He is the victor of the Foo Prize.", band) == set()
    assert named_subjects("He toured with Victor in 2015.", band) == {" victor "}
    battle = _page(78, "Battle of Tarrow", "The Battle of Tarrow was fought in 1811.")
    assert named_subjects("Units fought at the battle of Tarrow in 1811.", battle) \
        == {" battle tarrow "}


async def test_a_passage_whose_one_word_subject_another_names_by_chance_does_not_lead(
        embedder: Any) -> None:
    film = _page(76, "The Brass Orchard", "The Brass Orchard is a 2009 American fantasy film "
                 "starring Ida Holm. Set in an old estate in Maine, it follows Mara Kettle and "
                 "her family as they discover magical creatures in a hidden orchard.", 0.7)
    sitcom = _page(77, "Can &amp; Kettle", "Can & Kettle is a British sitcom. Set in Leeds, the "
                   "show follows two friends who discover a family cafe.", 0.5)
    question = ("What is the name of the fantasy film starring Ida Holm, featuring a family who "
                "discover magical creatures around their estate?")
    draft = await _answer(embedder, question, [film, sitcom])
    assert draft.summary.startswith("The Brass Orchard is a 2009 American fantasy film")
    assert "s77" not in {c.source_id for c in draft.citations}


def test_another_of_a_numbered_series_is_a_sibling_not_the_thing_named() -> None:
    from core.retrieval.rank import numbered_sibling

    other = _page(78, "Lancer 7", "Lancer 7 (L-7) was a weather satellite launched in 1971.")
    assert numbered_sibling(other, ["Lancer 4 satellite", "Pacific Ocean"])
    assert not numbered_sibling(other, ["Lancer 7", "Lancer 4"])  # both named: a comparison
    edition = _page(79, "1957 Brekke Cup", "The 1957 Brekke Cup was the ninth Brekke Cup.")
    assert not numbered_sibling(edition, ["Brekke Cup"])  # one edition of what is named
    mentioning = _page(80, "Lancer 7", "Lancer 7 replaced Lancer 4 satellite in orbit.")
    assert not numbered_sibling(mentioning, ["Lancer 4 satellite"])


async def test_a_sentence_about_another_of_a_numbered_series_does_not_answer(
        embedder: Any) -> None:
    named = _page(81, "KV-4", "The KV-4 Lancer was a weather satellite. With its transfer to "
                  "the Orla ground station in 1968, the KV-4 was one of the first satellites "
                  "tracked from the Arctic.", 0.6)
    other = _page(82, "KV-9", "The KV-9 Lancer was a weather satellite tracked from a ground "
                  "station in the Arctic during the Cold War.", 0.8)
    question = ("To which ground station was the KV-4 Lancer weather satellite transferred "
                "during the Cold War?")
    draft = await _answer(embedder, question, [named, other])
    assert "Orla" in draft.summary
    assert "s82" not in {c.source_id for c in draft.citations}


async def test_provinces_of_other_countries_are_compared_like_us_states(
        embedder: Any) -> None:
    lakes = [_page(83, "Tarrow Lake", "Tarrow Lake is a lake in the Canadian province of "
                   "Manitoba. It lies north of the town of Gimli."),
             _page(84, "Ebbin Lake", "Ebbin Lake (or Lake Ebbin) is a lake in central Ontario, "
                   "Canada, fed by Ebbin Creek."),
             _page(85, "Sorrel Lake", "Sorrel Lake is a small lake in Manitoba, Canada, east of "
                   "Lake Winnipeg.")]
    other = await _answer(embedder, "Are Tarrow Lake and Ebbin Lake located in the same "
                          "Canadian province?", lakes)
    assert other.summary.startswith("No: ") and "Ontario" in other.summary
    same = await _answer(embedder, "Are Tarrow Lake and Sorrel Lake in the same province?",
                         lakes)
    assert same.summary.startswith("Yes: ")
    # the name of the lake or of a queen is not where a thing is
    from core.countries import provinces_in, states_in
    assert provinces_in("on Lake Ontario, named for Queen Victoria, in Quebec City") == []
    assert provinces_in("a city in Sichuan Province, bordering Shaanxi") == ["Sichuan",
                                                                            "Shaanxi"]
    assert states_in("a ranch in Queensland owned by a Texas family") == ["Queensland", "Texas"]


async def test_a_thing_said_to_be_in_another_province_is_answered_no(embedder: Any) -> None:
    park = _page(86, "Corran Hills Provincial Park", "Corran Hills Provincial Park is a "
                 "provincial park in Saskatchewan, Canada. It holds a chain of small lakes.")
    draft = await _answer(embedder, "Is Corran Hills Provincial Park in Alberta?", [park])
    assert draft.summary.startswith("No: Corran Hills Provincial Park is a provincial park")
    draft = await _answer(embedder, "Is Corran Hills Provincial Park in Saskatchewan?", [park])
    assert draft.summary.startswith("Yes: ")


async def test_a_place_whose_name_joins_two_is_what_is_said_of_one_thing(
        embedder: Any) -> None:
    castle = _page(87, "Harlow Castle", "Harlow Castle, located between Dalry and Minnigaff, in "
                   "Dumfries and Galloway, Scotland, was built in 1802 for a merchant.")
    draft = await _answer(embedder, "Is Harlow Castle located in Dumfries and Galloway?",
                          [castle])
    assert draft.summary.startswith("Yes: Harlow Castle")


async def test_another_origin_or_nationality_than_asked_is_answered_no(embedder: Any) -> None:
    breed = _page(88, "Dorking hen", "The Dorking hen is a breed of chicken that originated "
                  "in England in Roman times. It is kept for eggs and meat.")
    draft = await _answer(embedder, "Did the Dorking hen originate in Spain?", [breed])
    assert draft.summary.startswith("No: The Dorking hen is a breed of chicken")
    draft = await _answer(embedder, "Did the Dorking hen originate in England?", [breed])
    assert draft.summary.startswith("Yes: ")
    player = _page(89, "Tomas Arvelo", "Tomas Arvelo (born 1948) is a Chilean chess grandmaster "
                   "and writer.")
    draft = await _answer(embedder, "Is Tomas Arvelo an Argentine chess grandmaster?", [player])
    assert draft.summary.startswith("No: Tomas Arvelo")


async def test_a_title_the_question_names_split_is_weighed_whole(embedder: Any) -> None:
    books = [_page(90, "Girl at the End of Summer", "Girl at the End of Summer (London: Orrin "
                   "Press, 1971) is a novel by Hedda Voss."),
             _page(91, "Tallow (novel)", "Tallow is a 1984 novel by Hedda Voss.")]
    draft = await _answer(embedder, "Was Girl at the End of Summer published before Tallow?",
                          books)
    assert draft.summary.startswith("Yes: Girl at the End of Summer")


async def test_quoted_titles_and_a_maker_asked_by_another_verb_are_compared(
        embedder: Any) -> None:
    songs = [_page(92, "Salt Road (song)", "\"Salt Road\" is a song written by Ada Pell and Rui "
                   "Sato of the duo Lowfield."),
             _page(93, "Night Ferry (song)", "\"Night Ferry\" is a song written by Ada Pell and "
                   "Rui Sato of the duo Lowfield.")]
    draft = await _answer(embedder, "Were \"Salt Road\" and \"Night Ferry\" written by the same "
                          "songwriters?", songs)
    assert draft.summary.startswith("Yes: ")
    manga = [_page(94, "Copper Kettle (manga)", "Copper Kettle is a Japanese manga series "
                   "written and illustrated by Aiko Mori, set in a mountain inn."),
             _page(95, "Lantern Boys", "Lantern Boys is a Japanese manga series about a rowing "
                   "club written and illustrated by Kenji Oda.")]
    draft = await _answer(embedder, "Were the manga series Copper Kettle and Lantern Boys "
                          "created by the same author?", manga)
    assert draft.summary.startswith("No: ") and "Kenji Oda" in draft.summary


async def test_a_work_asked_for_by_another_word_of_its_sense_leads(embedder: Any) -> None:
    # "a movie of what name": the passage whose opening says its subject is a film answers
    disaster = _page(96, "Lake Orra ferry disaster", "The Lake Orra ferry disaster was the "
                     "sinking of the ferry Wren in 1931. The ferry capsized in a storm on Lake "
                     "Orra with ninety passengers aboard, and most of them drowned.", 0.8)
    film = _page(97, "Grey Water (film)", "Grey Water is a 2015 drama film directed by Lena "
                 "Fisk and starring Paul Hain. The film is based on the Lake Orra ferry disaster "
                 "of 1931, when the ferry capsized in a storm off Keld Point.", 0.6)
    question = ("The sinking of a ferry in a storm on Lake Orra with ninety passengers aboard "
                "was turned into a movie of what name?")
    draft = await _answer(embedder, question, [disaster, film])
    assert draft.summary.startswith("Grey Water is a 2015 drama film"), draft.summary


async def test_what_the_question_names_in_the_plural_is_no_second_hop(embedder: Any) -> None:
    # "both soft drinks" names the generic passage's subject: not a thing to hop to
    fizz = _page(98, "Polar Fizz", "Polar Fizz quickly became Iceland's most popular soft drink "
                 "in the 1950s. Polar Fizz is a lemon-flavoured soft drink made in Reykjavik.",
                 0.8)
    generic = _page(99, "Soft drink", "A soft drink is a drink that typically contains "
                    "carbonated water, a sweetener, and a natural or artificial flavor.", 0.6)
    other = _page(100, "Brisko", "Brisko is a brand of lemon soft drinks launched in 1981.", 0.6)
    question = "What is the main flavor of both soft drinks, Polar Fizz and Brisko?"
    draft = await _answer(embedder, question, [fizz, generic, other])
    assert not draft.summary.startswith("A soft drink"), draft.summary
    from core.text import in_phrase, phrase
    assert in_phrase(phrase("soft drink"), phrase(question))
    assert in_phrase(phrase("box"), phrase("two boxes")) and not in_phrase(phrase("drink"),
                                                                           phrase("drinking"))


async def test_the_grade_of_a_kind_is_compared_from_its_compound(embedder: Any) -> None:
    cities = [_page(101, "Lanxiang", "Lanxiang is a prefecture-level city of Hubei province, "
                    "China. It lies on the Han River."),
              _page(102, "Qiaoshan", "Qiaoshan is a county-level city in southern Hunan "
                    "province, China."),
              _page(103, "Dongmei", "Dongmei is a prefecture-level city in eastern Hunan, "
                    "China.")]
    draft = await _answer(embedder, "Are Lanxiang and Qiaoshan the same level of city?", cities)
    assert draft.summary.startswith("No: Lanxiang is a prefecture-level city"), draft.summary
    draft = await _answer(embedder, "Are Lanxiang and Dongmei the same level of city?", cities)
    assert draft.summary.startswith("Yes: "), draft.summary


def test_the_maker_of_a_work_named_by_its_kind_is_searched_before_an_alias() -> None:
    # "the novel "X" by B" names the author; '("Grey Night")' renames the film itself
    film = _page(104, "Nuit grise", "Nuit grise (\"Grey Night\") is a 2009 French drama film "
                 "directed by Paul Morand. It is based on the novel \"Por la tarde\" by Luis "
                 "Carrasco Ruiz. It was shown at the Berlin Film Festival.")
    question = "In which city was the author of the novel that Nuit grise is based on born?"
    queries = bridge_queries(question, [film], [film], 3, ["Nuit grise"])
    assert queries[0].startswith("Luis Carrasco Ruiz"), queries
    assert not any(q.startswith("Grey Night") for q in queries), queries


def test_who_did_what_the_question_asks_is_searched_before_places_the_clause_names() -> None:
    # "introduced in the Tarn Assembly by Ada Holm": the one who introduced it, not the
    # assembly, which stands nearer the question's verb; the act's own long name is not
    # another thing either
    act = _page(105, "FAIR Act", "The Fund Accountability In Regional Elections Act, known as "
                "the FAIR Act, was a bill introduced in the Tarn Assembly by Ada Holm on 3 May "
                "2011 and in the Upper Chamber by Ola Brenne on 9 June 2011.")
    question = "What other office did the person who introduced the FAIR Act hold?"
    queries = bridge_queries(question, [act], [act], 3, ["FAIR Act"])
    assert queries[0].startswith("Ada Holm"), queries
    # who introduced another bill, in a passage about no thing the question names, is not it
    other = _page(106, "Harbour Law", "The Harbour Law was a bill introduced in the Tarn "
                  "Assembly by Tom Ray in 2012.")
    later = _page(107, "FAIR Act", "The FAIR Act was a bill on campaign spending. It was "
                  "introduced in the Tarn Assembly by Ada Holm in 2011.")
    queries = bridge_queries(question, [other, later], [other, later], 3, ["FAIR Act"])
    assert queries[0].startswith("Ada Holm"), queries
    # a participle that is not the question's verb makes no agent of the name after "by"
    queries = bridge_queries("What other office did the person who opposed the FAIR Act "
                             "hold?", [act], [act], 3, ["FAIR Act"])
    assert not queries[0].startswith("Ada Holm"), queries


def test_states_and_provinces_come_in_the_order_the_text_names_them() -> None:
    from core.countries import states_in

    # "Kansas" inside "Arkansas" is not where Kansas is named
    assert states_in("from Arkansas to Ontario and Kansas") == ["Arkansas", "Ontario", "Kansas"]
    assert states_in("Washington, D.C. and Victoria") == ["Victoria"]


def test_the_words_of_the_question_form_are_not_what_it_asks_about() -> None:
    asked = detect_intent("What type of sport do Ilse Varga and Tom Brecker have in common?")
    assert "common" not in asked.key_terms
    assert "sport" in asked.key_terms
    assert "common" in detect_intent("Which common bird nests in Lake Orvin?").key_terms
    players = [_page(105, "Ilse Varga", "Ilse Varga (born 1961) is a former professional tennis "
                     "player from Hungary."),
               _page(106, "Tom Brecker", "Tom Brecker (born 1950) is a former tennis player "
                     "who won two doubles titles.")]
    question = "What type of sport do Ilse Varga and Tom Brecker have in common?"
    graded = _graded_answer(question, players)
    assert graded.confidence != Confidence.INSUFFICIENT, graded.limitations


async def test_what_two_share_is_a_description_not_what_happened_to_both(
        embedder: Any) -> None:
    # both passages say the same thing happened, not what either is
    pages = [_page(107, "1990 Harlow Open – Doubles", "Ilse Varga and Mara Kos were the "
                   "defending champions, but Varga did not participate this year."),
             _page(108, "1988 Harlow Open – Singles", "Tom Brecker was the defending champion, "
                   "but did not participate this year.")]
    question = "What type of sport do Ilse Varga and Tom Brecker have in common?"
    draft = await _answer(embedder, question, pages)
    assert not draft.summary.startswith("Both are described as"), draft.summary
    assert UNSETTLED in draft.notes  # not settled: graded Low at best
    campaign = await _answer(embedder, "Both Open Fields and Green Acre embrace what "
                             "campaign?", [_page(109, "Open Fields", "Open Fields is a charity "
                                                 "that promotes the Plant a Hedge campaign.")])
    assert UNSETTLED not in campaign.notes  # a thing both name, not a description


def test_the_first_link_may_be_a_passage_that_names_what_the_question_does() -> None:
    # no passage is about "ZBX": the passage naming it and the hotel is the first link
    contest = _page(110, "1994 Arlen Open", "The 1994 Arlen Open was a ZBX chess championship "
                    "held in May 1994 at the Harrow Lake Hotel in Duluth.", 0.7)
    hotel = _page(111, "Harrow Lake Hotel", "The Harrow Lake Hotel is a resort hotel designed "
                  "by architect Mina Ostrova, opened in 1990.", 0.7)
    other = _page(112, "Pine Ridge Hotel", "The Pine Ridge Hotel is a resort hotel designed by "
                  "architect Karl Wendt, opened in 1985.", 0.7)
    question = "Who designed the hotel that held the ZBX chess championship in May 1994?"
    assert _graded_answer(question, [contest, hotel]).confidence != Confidence.INSUFFICIENT
    assert _graded_answer(question, [contest, other]).confidence == Confidence.INSUFFICIENT


async def test_what_both_have_is_the_run_both_passages_give_beside_the_asked_word(
        embedder: Any) -> None:
    drinks = [_page(113, "Fjordbrus", "Fjordbrus is a pear-flavoured soda made in Bergen since "
                    "1921. It is sold in green bottles."),
              _page(114, "Glimmer Pop", "Glimmer Pop is a brand of mostly pear flavored sodas "
                    "launched in 1986.")]
    draft = await _answer(embedder, "What is the main flavor of both sodas, Fjordbrus and "
                          "Glimmer Pop?", drinks)
    assert draft.summary.startswith("Pear: Fjordbrus is a pear-flavoured soda"), draft.summary
    assert {c.source_id for c in draft.citations} == {"s113", "s114"}
    # a word both passages hold away from what is asked is not what both have
    plants = [_page(115, "Quercilla", "Quercilla alba is a species of plant in the Fagaceae "
                    "family, found in Laos."),
              _page(116, "Verdanta", "Verdanta erecta is a species of flowering shrub in the "
                    "verbena family, native to Peru.")]
    other = await _answer(embedder, "What is in both the Quercilla and Verdanta species?", plants)
    assert not other.summary.startswith("Family"), other.summary


async def test_a_kind_asked_of_each_thing_is_checked_against_that_thing(embedder: Any) -> None:
    pages = [_page(61, "Lantern (magazine)", "Lantern is a quarterly poetry magazine published "
                   "in Bergen."),
             _page(62, "The Harbor Courier", "The Harbor Courier was a daily newspaper serving "
                   "the town of Kelso.")]
    # each thing has its own kind: not both of the last one
    same = "Is Lantern a magazine and the Harbor Courier a newspaper?"
    assert (await _answer(embedder, same, pages)).summary.startswith("Yes: ")
    swapped = "Is Lantern a newspaper and the Harbor Courier a magazine?"
    assert (await _answer(embedder, swapped, pages)).summary.startswith("No: ")


async def test_a_title_with_not_in_it_is_no_negated_question(embedder: Any) -> None:
    pages = [_page(63, "Rust Is Not Gold", "Rust Is Not Gold is a 2011 documentary film about "
                   "scrap dealers."),
             _page(64, "Open Water Blues", "Open Water Blues is a 2011 documentary film by Ada "
                   "Kern.")]
    question = "Were the documentaries Rust Is Not Gold and Open Water Blues released in the " \
               "same year?"
    assert (await _answer(embedder, question, pages)).summary.startswith("Yes: ")


async def test_a_city_is_not_the_province_two_cities_share(embedder: Any) -> None:
    pages = [_page(65, "Pale Orchard", "Pale Orchard is a folk band formed in 2009 from "
                   "Regina, Saskatchewan, Canada."),
             _page(66, "The Ninth Fence", "The Ninth Fence is a rock band based in Saskatoon, "
                   "Saskatchewan."),
             _page(67, "Glass Pilots", "Glass Pilots is a Saskatoon-based trio that plays "
                   "surf rock.")]
    other = "Are Pale Orchard and The Ninth Fence from the same city?"
    draft = await _answer(embedder, other, pages)
    assert draft.summary.startswith("No: ")
    same = "Are The Ninth Fence and Glass Pilots based in the same city?"
    assert (await _answer(embedder, same, pages)).summary.startswith("Yes: ")


async def test_a_party_named_in_the_question_is_no_describing_word(embedder: Any) -> None:
    pages = [_page(68, "Mara Quill", "Mara Quill (born 1961) is an Australian politician who "
                   "served as a Greens member of the Tasmanian House of Assembly."),
             _page(69, "Tom Ashby", "Tom Ashby (born 1955), an Australian politician, was an "
                   "independent member of the Tasmanian House of Assembly."),
             _page(70, "Ruth Nolan", "Ruth Nolan (born 1970) is an Australian politician in "
                   "the Tasmanian branch of the Australian Greens Party.")]
    both = "Were Mara Quill and Tom Ashby both Greens politicians?"
    assert (await _answer(embedder, both, pages)).summary.startswith("No: ")
    party = "Were Mara Quill and Ruth Nolan members of the same party?"
    assert (await _answer(embedder, party, pages)).summary.startswith("Yes: ")
    other = "Were Mara Quill and Tom Ashby members of the same party?"
    assert not (await _answer(embedder, other, pages)).summary.startswith("Yes")


async def test_a_maker_is_read_past_a_place_or_a_role_before_the_name(embedder: Any) -> None:
    pages = [_page(71, "Tide Atlas", "Tide Atlas is a 2005 documentary film made by filmmaker "
                   "Ines Varga."),
             _page(72, "Salt Flats", "Salt Flats is a 2008 documentary film directed by Ines "
                   "Varga."),
             _page(73, "Moon Harbor", "Moon Harbor is a 2009 documentary film directed by Per "
                   "Holm."),
             _page(74, "Pocket Saga", "Pocket Saga is a comics anthology published in North "
                   "America by Brightline Press."),
             _page(75, "Weekly Pocket Saga", "Weekly Pocket Saga is a digital comics "
                   "anthology published by Brightline Press.")]
    same = "Were Tide Atlas and Salt Flats made by the same filmmaker?"
    assert (await _answer(embedder, same, pages)).summary.startswith("Yes: ")
    other = "Were Tide Atlas and Moon Harbor made by the same filmmaker?"
    assert (await _answer(embedder, other, pages)).summary.startswith("No: ")
    published = "Are Pocket Saga and Weekly Pocket Saga published by the same company?"
    assert (await _answer(embedder, published, pages)).summary.startswith("Yes: ")


async def test_another_frequency_and_another_position_are_answered_no(embedder: Any) -> None:
    pages = [_page(76, "Kite Review", "Kite Review is a bi-monthly hobby magazine published "
                   "in Leeds."),
             _page(77, "Dune Post", "Dune Post is a monthly travel magazine."),
             _page(78, "Olaf Brenn", "Olaf Brenn (born 1984) is a Canadian football running "
                   "back for the Regina Riders."),
             _page(79, "Dev Moore", "Dev Moore (born 1986) is a Canadian football offensive "
                   "lineman for the Hamilton Hawks.")]
    monthly = "Are Kite Review and Dune Post both published monthly?"
    draft = await _answer(embedder, monthly, pages)
    assert draft.summary.startswith("No: ") and "bi-monthly" in draft.summary
    position = "Do Olaf Brenn and Dev Moore play the same position?"
    assert (await _answer(embedder, position, pages)).summary.startswith("No: ")


async def test_the_place_of_the_asked_event_leads_over_a_sentence_sharing_more_words(
        embedder: Any) -> None:
    pages = [_page(80, "Orbital Tea Kettle", "The Orbital Tea Kettle is a kettle built for the "
                   "space station. The first tea brewed in orbit with it was drunk by astronaut "
                   "Lena Varro in 2019."),
             _page(81, "Lena Varro", "Lena Varro (born 2 May 1981 in Turku) is a Finnish "
                   "astronaut and engineer. Varro is also known as the first person who brewed "
                   "tea in orbit with the Orbital Tea Kettle.")]
    question = "The astronaut who drank the first tea brewed in orbit with the Orbital Tea " \
               "Kettle was born in which city?"
    draft = await _answer(embedder, question, pages)
    assert "Turku" in draft.summary


async def test_who_died_first_reads_the_brackets_with_the_years(embedder: Any) -> None:
    pages = [_page(82, "Ivan Petrov (mathematician)", "Ivan Petrov (Иван Петров) (3 March 1890 – "
                   "9 May 1931) was a Russian mathematician."),
             _page(83, "Oleg Sorin", "Oleg Sorin (12 June 1895 – 2 January 1970) was a Russian "
                   "mathematician.")]
    draft = await _answer(embedder, "Which mathematician died first, Ivan Petrov or Oleg "
                          "Sorin?", pages)
    assert draft.summary.startswith("Ivan Petrov: ")


async def test_a_title_with_small_words_after_before_is_the_second_thing(embedder: Any) -> None:
    pages = [_page(84, "The Harbor Review", "The Harbor Review was a literary magazine "
                   "published in Halifax from 1902 to 1910."),
             _page(85, "Nova revija", "Nova revija was a literary magazine published in 1921 "
                   "and 1922 in Ljubljana.")]
    question = "Did The Harbor Review begin publication before Nova revija?"
    assert (await _answer(embedder, question, pages)).summary.startswith("Yes: ")
    question = "Did Nova revija begin publication before The Harbor Review?"
    assert (await _answer(embedder, question, pages)).summary.startswith("No: ")


async def test_what_each_thing_is_and_what_both_share_are_not_confused(embedder: Any) -> None:
    pages = [_page(86, "Blue Lanes", "Blue Lanes is a 1991 album by the band Harbor Nine."),
             _page(87, "Paper Moonlight", "Paper Moonlight is a 1991 song by the band Harbor "
                   "Nine.")]
    question = "Is Blue Lanes an album and Paper Moonlight a song from the same year?"
    assert not (await _answer(embedder, question, pages)).summary.startswith("No")
    shouted = "Is Blue Lanes NOT an album?"
    assert not (await _answer(embedder, shouted, pages)).summary.startswith("Yes")


async def test_a_place_or_a_longer_party_name_is_no_same_party(embedder: Any) -> None:
    pages = [_page(88, "Ada Quist", "Ada Quist (born 1950) is an American politician who served "
                   "as a United States senator from Ohio."),
             _page(89, "Bo Lind", "Bo Lind (born 1948) is an American politician who served as "
                   "a United States senator from Iowa."),
             _page(90, "Karl Wendt", "Karl Wendt (born 1960) is a German politician of the Free "
                   "Democratic Party."),
             _page(91, "Jon Hale", "Jon Hale (born 1962) is an American politician of the "
                   "Democratic Party.")]
    places = "Were Ada Quist and Bo Lind members of the same party?"
    assert not (await _answer(embedder, places, pages)).summary.startswith("Yes")
    longer = "Were Karl Wendt and Jon Hale members of the same party?"
    assert (await _answer(embedder, longer, pages)).summary.startswith("No: ")


async def test_one_relation_names_every_maker_where_each_passage_gives_it(
        embedder: Any) -> None:
    pages = [_page(92, "Spider Tales", "Spider Tales is a comic created by Vela Comics and "
                   "written by Stan Reede."),
             _page(93, "Hulk Stories", "Hulk Stories is a comic written by Stan Reede.")]
    question = "Were Spider Tales and Hulk Stories created by the same author?"
    assert (await _answer(embedder, question, pages)).summary.startswith("Yes: ")


async def test_a_parents_dates_and_a_papers_name_are_not_the_subjects(embedder: Any) -> None:
    pages = [_page(94, "Ann Wild", "Ann Wild (born 1940) is the daughter of painter John Wild "
                   "(1900–1970)."),
             _page(95, "Carl Dorn", "Carl Dorn (1921–1990) was a German painter."),
             _page(96, "Kite Review", "Kite Review is a British hobby magazine owned by the "
                   "publisher of the Daily Mail. It is published every week, a weekly."),
             _page(97, "Dune Post", "Dune Post is a weekly travel magazine.")]
    died = "Who died first, Ann Wild or Carl Dorn?"
    assert not (await _answer(embedder, died, pages)).summary.startswith("Ann Wild:")
    weekly = "Are Kite Review and Dune Post both weekly magazines?"
    assert not (await _answer(embedder, weekly, pages)).summary.startswith("No")


async def test_a_city_named_like_a_region_and_another_subjects_base(embedder: Any) -> None:
    pages = [_page(98, "Cedar Vane", "Cedar Vane is a folk band from Victoria, British "
                   "Columbia."),
             _page(99, "Rust Orchard", "Rust Orchard is a rock band from Vancouver, British "
                   "Columbia."),
             _page(100, "Alpha Records", "Alpha Records is a record label from Austin, Texas, "
                    "owned by the Chicago-based Beta Group."),
             _page(101, "Gamma Records", "Gamma Records is a Chicago-based record label.")]
    other = "Are Cedar Vane and Rust Orchard from the same city?"
    assert (await _answer(embedder, other, pages)).summary.startswith("No: ")
    owner = "Are Alpha Records and Gamma Records based in the same city?"
    assert not (await _answer(embedder, owner, pages)).summary.startswith("Yes")


async def test_the_place_of_the_asked_event_is_the_first_links_own(embedder: Any) -> None:
    pages = [_page(102, "Kettle Co", "Kettle Co is a company founded in Leeds in 1990. It was "
                   "acquired in 2005 by Big Corp."),
             _page(103, "Big Corp", "Big Corp is an American conglomerate headquartered in "
                   "Boston. It was established in 1950.")]
    question = "The company that acquired Kettle Co was founded in which city?"
    assert "Leeds" not in (await _answer(embedder, question, pages)).summary


async def test_a_party_is_named_apart_from_its_places_and_nations(embedder: Any) -> None:
    pages = [_page(104, "Ian Pell", "Ian Pell (born 1961) is a British Labour Party politician "
                   "who was MP for Hull."),
             _page(105, "Tom Quay", "Tom Quay (born 1958) is a British politician. A member of "
                   "the Labour Party, he was MP for York."),
             _page(106, "Ken Roe", "Ken Roe (born 1955) is an Australian politician of the "
                   "Australian Labor Party."),
             _page(107, "Li Wen", "Li Wen (born 1950) is a Chinese politician of the Communist "
                   "Party of China."),
             _page(108, "Tran Van", "Tran Van (born 1952) is a Vietnamese politician of the "
                   "Communist Party of Vietnam.")]
    same = "Were Ian Pell and Tom Quay members of the same party?"
    assert (await _answer(embedder, same, pages)).summary.startswith("Yes: ")
    for other in ("Were Ian Pell and Ken Roe members of the same party?",
                  "Were Li Wen and Tran Van members of the same party?"):
        assert (await _answer(embedder, other, pages)).summary.startswith("No: "), other


async def test_a_state_alone_is_no_city(embedder: Any) -> None:
    pages = [_page(109, "Joy Hart", "Joy Hart (born 3 May 1950 in California) is a singer."),
             _page(110, "Ray Colt", "Ray Colt (born 1 June 1960 in California, United States) "
                   "is a singer.")]
    question = "Were Joy Hart and Ray Colt born in the same city?"
    assert not (await _answer(embedder, question, pages)).summary.startswith("Yes")


async def test_a_province_named_like_a_nation_is_no_nationality(embedder: Any) -> None:
    # "born in Victoria, British Columbia" is no British director
    assert countries_in("born in Nanaimo, British Columbia") == ["Canada"]
    assert countries_in("an atoll in the Indian Ocean") == []
    first = _page(140, "Tom Ashby", "Tom Ashby (born 1971 in Leeds, England) is a British film "
                  "director and producer.")
    second = _page(141, "Roy Fenwick", "Roy Fenwick (born May 2, 1938 in Nanaimo, British "
                   "Columbia) is a Canadian film director and screenwriter.")
    draft = await _answer(embedder, "Are Tom Ashby and Roy Fenwick both British film directors?",
                          [first, second])
    assert draft.summary.startswith("No: "), draft.summary


async def test_the_things_named_before_the_verb_are_asked_about(embedder: Any) -> None:
    first = _page(142, "Salt Lagoon", "Salt Lagoon (Italian: Laguna di sale) is a 1987 Italian "
                  "drama film directed by Carla Berti.")
    second = _page(143, "Red Harbour", "Red Harbour is a 1962 Italian crime film directed by "
                   "Nino Ferri.")
    question = "Salt Lagoon and Red Harbour, are they both Italian films?"
    assert closed(question)
    assert not closed("Quick question: is it true that Salt Lagoon is Italian?")
    draft = await _answer(embedder, question, [first, second])
    assert draft.summary.startswith("Yes: "), draft.summary


async def test_an_adjective_is_its_noun_only_before_the_same_noun(embedder: Any) -> None:
    # "a film about an experiment" is no experimental film
    first = _page(144, "Red Tide", "Red Tide is a 2004 American film about an experiment in "
                  "time travel.")
    second = _page(145, "Blue Hour", "Blue Hour is a 1998 American experimental film by Ana "
                   "Ruiz.")
    draft = await _answer(embedder, "Are Red Tide and Blue Hour both experimental films?",
                          [first, second])
    assert not draft.summary.startswith("Yes"), draft.summary
    # but "a country music duo" is a musical duo: the noun before the same noun
    first = _page(146, "Tin Porch", "Tin Porch was an American country music duo composed of "
                  "Ada Reyes and Lou Marsh.")
    second = _page(147, "Vale & Stone", "Ida Vale and Tom Stone, known as Vale & Stone, are an "
                   "English musical duo from Bristol.")
    draft = await _answer(embedder, "Are Tin Porch and Vale & Stone both musical duos?",
                          [first, second])
    assert draft.summary.startswith("Yes: "), draft.summary


async def test_one_beginning_is_weighed_against_another(embedder: Any) -> None:
    # "established before B was first published": both years of a beginning
    first = _page(146, "Goal Weekly", "Goal Weekly is a football magazine published in Leeds. "
                  "The magazine was established in 1961.")
    second = _page(147, "The Lake Review", "The Lake Review was a literary magazine published "
                   "in Duluth, Minnesota from 1879 to 1902.")
    draft = await _answer(embedder, "Was Goal Weekly established before The Lake Review was "
                          "first published?", [first, second])
    assert draft.summary.startswith("No: "), draft.summary
    draft = await _answer(embedder, "Was The Lake Review established before Goal Weekly was "
                          "first published?", [first, second])
    assert draft.summary.startswith("Yes: "), draft.summary
    # a thing's own beginning is not its album's
    larks = _page(148, "The Larks", "The Larks were a rock band formed in Hull in 1960. Their "
                  "first album was released in 1963.")
    finches = _page(149, "The Finches", "The Finches were a rock band formed in York in 1962.")
    draft = await _answer(embedder, "Was the Larks' first album released before the Finches "
                          "were formed?", [larks, finches])
    assert not draft.summary.startswith("Yes"), draft.summary


async def test_the_us_state_of_georgia_is_no_country(embedder: Any) -> None:
    assert countries_in("born in Macon, Georgia") == []
    assert countries_in("a graduate of the University of Georgia") == []
    assert countries_in("born in Kutaisi, Georgia") == ["Georgia"]
    assert countries_in("a Georgian painter") == ["Georgia"]
    first = _page(144, "Ada Lowe", "Ada Lowe (born 1960 in Macon, Georgia) is a jazz singer.")
    second = _page(145, "Nino Beridze", "Nino Beridze (born 1975 in Kutaisi, Georgia) is a "
                   "jazz singer.")
    question = "Were Ada Lowe and Nino Beridze born in the same country?"
    assert not (await _answer(embedder, question, [first, second])).summary.startswith("Yes")


def test_a_name_of_two_names_is_mentioned_by_a_passage_naming_both() -> None:
    passage = phrase("Elm Park is a Riverside Tram stop in Ashford, on the Blue Line.")
    assert mentions("Blue Line of the Riverside Tram", passage)
    assert not mentions("Blue Line of the Harbour Tram", passage)
    assert not mentions("University of Ashford", phrase("Ashford Brookes University"))
    # a work named with its maker's name: both named
    opera = phrase("Dido's Lament is an aria by the composer Henry Purcell.")
    assert mentions("Purcell's Dido's Lament", opera)
    assert not mentions("Purcell's King Arthur", opera)


def test_a_name_that_owns_the_next_one_is_one_name() -> None:
    assert detect_intent("Are Founders' Day and Harvest Day holidays of the same country?"
                         ).entities[-1] == "Harvest Day"
    assert detect_intent("Is Bolton's Folly older than Marsh's Mill?").entities == [
        "Bolton's Folly", "Marsh's Mill"]
    assert detect_intent("Who owned Hart's album?").entities == ["Hart"]


async def test_a_holiday_named_with_a_possessive_is_weighed_by_its_country(
        embedder: Any) -> None:
    first = _page(146, "Lantern's Day", "Lantern's Day (Lalo) is a Japanese national holiday "
                  "held each year on May 9.")
    second = _page(147, "Reef Settlement Day", "Reef Settlement Day is a public holiday in "
                   "Belize, held each year on March 3.")
    question = "Are Lantern's Day and Reef Settlement Day national holidays of the same country?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("No: ")
    assert countries_in("a public holiday in Belize") == ["Belize"]
    assert countries_in("an island of New Guinea") == []


async def test_originally_is_said_by_former(embedder: Any) -> None:
    first = _page(148, "Old Gate Mosque", "Old Gate Mosque is a former Orthodox church "
                  "converted into a mosque by the Ottomans.")
    second = _page(149, "Hill Mosque", "Hill Mosque is a former Orthodox church in Bursa, "
                   "converted into a mosque in 1490.")
    third = _page(150, "River Mosque", "River Mosque is a mosque in Edirne, built by the "
                  "Ottomans in the 16th century.")
    question = "Were Old Gate Mosque and Hill Mosque both originally Orthodox churches?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("Yes: ")
    other = "Were Old Gate Mosque and River Mosque both originally Orthodox churches?"
    assert (await _answer(embedder, other, [first, third])).summary.startswith("No: ")


async def test_a_city_named_alone_is_the_city(embedder: Any) -> None:
    first = _page(151, "Lake Mosque", "Lake Mosque is a mosque in Konya, built in 1560.")
    second = _page(152, "Gate Mosque", "Gate Mosque is a former church in Izmir, converted "
                   "into a mosque.")
    third = _page(153, "Bridge Mosque", "Bridge Mosque is an Ottoman mosque in Konya.")
    # a place named alone may be a district of another's city: it says Yes, never No
    question = "Is Lake Mosque located in the same city as Gate Mosque?"
    assert not (await _answer(embedder, question, [first, second])).summary.startswith(
        ("Yes", "No"))
    same = "Is Lake Mosque located in the same city as Bridge Mosque?"
    assert (await _answer(embedder, same, [first, third])).summary.startswith("Yes: ")
    # a list is no one city
    listed = _page(154, "Twin Mosque", "Twin Mosque is a pair of mosques in Konya and Izmir.")
    assert not (await _answer(embedder, "Is Twin Mosque located in the same city as Gate "
                              "Mosque?", [listed, second])).summary.startswith("Yes")


async def test_the_maker_named_by_the_role_asked(embedder: Any) -> None:
    first = _page(155, "Sea Song", "\"Sea Song\" is a song written by lyricist Ann Vale and "
                  "composer Ben Rook for the film \"Tide\" (1990).")
    second = _page(156, "Storm Song", "\"Storm Song\" is a song written by composer Ben Rook "
                   "and lyricist Cy Moss for the film \"Gale\" (2001).")
    pages = [first, second]
    lyricist = "Were \"Sea Song\" and \"Storm Song\" written by the same lyricist?"
    assert (await _answer(embedder, lyricist, pages)).summary.startswith("No: ")
    composer = "Were \"Sea Song\" and \"Storm Song\" written by the same composer?"
    assert (await _answer(embedder, composer, pages)).summary.startswith("Yes: ")
    shared = "Do \"Sea Song\" and \"Storm Song\" share the same lyricist?"
    assert (await _answer(embedder, shared, pages)).summary.startswith("No: ")


async def test_the_same_frequency_is_how_often_each_comes_out(embedder: Any) -> None:
    first = _page(157, "Journal of Lung Care", "The Journal of Lung Care is a medical journal. "
                  "It was established in 2001 and is published monthly by Vale Press.")
    second = _page(158, "Airway Review", "Airway Review is a quarterly medical journal that "
                   "covers asthma.")
    third = _page(159, "Chest Letters", "Chest Letters is a monthly journal of chest medicine.")
    question = "Are the Journal of Lung Care and Airway Review published with the same frequency?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("No: ")
    same = "Are the Journal of Lung Care and Chest Letters published with the same frequency?"
    assert (await _answer(embedder, same, [first, third])).summary.startswith("Yes: ")


async def test_the_place_of_a_death_is_read_from_the_death(embedder: Any) -> None:
    festival = _page(160, "Gull Festival", "The Gull Festival is a week-long festival held "
                     "each year in Tarn. It honors King Olaf Renn, who was called the Gull "
                     "King for his love of the sea.")
    king = _page(161, "Olaf Renn", "Olaf Renn (May 2, 1801 – June 3, 1860) was the last king "
                 "of Tarn. He reigned from 1830 until his death in Bergholm, on June 3, 1860. "
                 "He enjoyed sailing.")
    draft = await _answer(embedder, "The Gull Festival honors a king who died in which city?",
                          [festival, king])
    assert "Bergholm" in draft.summary, draft.summary


async def test_a_birth_name_is_read_where_the_singer_was_born(embedder: Any) -> None:
    album = _page(162, "Lantern Hall", "Lantern Hall is the third studio album by American "
                  "singer and songwriter Rae Lindel, released on May 5, 2001.")
    singer = _page(163, "Rae Lindel", "Rae Lindel (born Marta Rae Lindel, June 2, 1966) is an "
                   "American singer-songwriter and pianist.")
    works = _page(164, "Rae Lindel discography", "Rae Lindel is an American pianist and "
                  "singer-songwriter whose musical career began in 1984, when she and her "
                  "sister wrote the song \"Harbor\".")
    draft = await _answer(embedder, "Lantern Hall is an album by a singer whose birth name is "
                          "what?", [album, singer, works])
    assert "Marta Rae Lindel" in draft.summary, draft.summary


async def test_the_same_work_is_the_title_each_passage_quotes(embedder: Any) -> None:
    first = _page(165, "Who Can Sing It", "\"Who Can Sing It\" is a song by English musician "
                  "Lou Marsh, released on his 1973 album \"Living on the Hill\".")
    second = _page(166, "Sing Yourself", "\"Sing Yourself\" is a song by English musician Lou "
                   "Marsh, released on his 1976 album \"Thirty Three\".")
    third = _page(167, "Hill Song", "\"Hill Song\" is a song by Lou Marsh from his 1973 album "
                  "\"Living on the Hill\".")
    album = "Were \"Sing Yourself\" and \"Who Can Sing It\" released on the same Lou Marsh album?"
    assert (await _answer(embedder, album, [first, second])).summary.startswith("No: ")
    same = "Were \"Hill Song\" and \"Who Can Sing It\" released on the same album?"
    assert (await _answer(embedder, same, [first, third])).summary.startswith("Yes: ")
    nurse = _page(168, "Rosa", "Rosa Vell is the heroine of Tom Kyd's romantic tragedy \"The "
                  "Orchard\".")
    friar = _page(169, "Brother Ansel", "Brother Ansel is a fictional character in Tom Kyd's "
                  "drama \"The Orchard\". He is Rosa's confessor.")
    single = _page(209, "Low Road", "\"Low Road\" is a song recorded by Lou Marsh. It was "
                   "released in 1974 as the second single from his album \"Living on the "
                   "Hill\".")
    later = "Were \"Low Road\" and \"Who Can Sing It\" released on the same album?"
    assert (await _answer(embedder, later, [first, single])).summary.startswith("Yes: ")
    play = "Are Rosa and Brother Ansel both characters from the same Tom Kyd play?"
    assert (await _answer(embedder, play, [nurse, friar])).summary.startswith("Yes: ")


async def test_a_place_is_named_by_its_first_word_and_kind(embedder: Any) -> None:
    from core.retrieval.rank import named_subjects

    album = _page(170, "Why Not Now?", "Why Not Now? (1966) is Lou Vance's second album. It was "
                  "recorded at the Heron Hotel in Reno, Nevada.")
    hotel = _page(171, "Heron Reno", "Heron Reno (formerly The Grand Heron) is a hotel and "
                  "casino in Reno, Nevada. It is owned and operated by Pell Leisure "
                  "Corporation.")
    assert named_subjects(album.content or "", hotel, 3) == {" heron hotel "}
    person = _page(172, "Heron Vance", "Heron Vance is a singer from Reno.")
    assert not named_subjects("the Heron Singer", person, 3)
    draft = await _answer(embedder, "The Lou Vance album Why Not Now? was recorded at a hotel "
                          "that is now operated by which corporation?", [album, hotel])
    assert "Pell Leisure Corporation" in draft.summary, draft.summary
    assert draft.summary.count("(1966)") <= 1  # the album's sentence is whole


async def test_a_novel_by_its_title_then_its_author(embedder: Any) -> None:
    first = _page(173, "Night Glass", "Night Glass is a 2012 Chilean drama film directed by Rui "
                  "Sol, based on the novel \"The Cold Room\" by Ines Varga.")
    second = _page(174, "Dry Well", "Dry Well is a 2008 Chilean comedy film based on a novel by "
                   "Ines Varga. It was directed by Tomas Lira.")
    question = "Were the films Night Glass and Dry Well based on novels by the same author?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("Yes: ")


async def test_the_same_day_is_one_date(embedder: Any) -> None:
    first = _page(175, "Ada Crane", "Ada Crane (born 6 March 1937) is a British chemist.")
    second = _page(176, "Luc Marin", "Luc Marin (born March 6, 1937 in Lyon) is a French "
                   "composer.")
    third = _page(177, "Ines Roth", "Ines Roth (born 9 May 1937) is a German painter.")
    fourth = _page(178, "Otto Lind", "Otto Lind (born 1937) is a Swedish poet.")
    same = "Were Ada Crane and Luc Marin born on the same day?"
    assert (await _answer(embedder, same, [first, second])).summary.startswith("Yes: ")
    other = "Were Ada Crane and Ines Roth born on the same day?"
    assert (await _answer(embedder, other, [first, third])).summary.startswith("No: ")
    unknown = "Were Ada Crane and Otto Lind born on the same day?"
    assert not (await _answer(embedder, unknown, [first, fourth])).summary.startswith(
        ("Yes", "No"))


async def test_the_same_season_is_its_number(embedder: Any) -> None:
    first = _page(179, "Cave Trouble", "\"Cave Trouble\" is the third episode of the fourth "
                  "season of the American animated television series \"Fern Land\".")
    second = _page(180, "Moved Out!", "\"Moved Out!\" is the twelfth episode of the first "
                   "season of the American animated television series \"Fern Land\".")
    third = _page(181, "Lost Hat", "\"Lost Hat\" is the ninth episode of season 4 of the "
                  "animated series \"Fern Land\".")
    question = "Are the episodes Cave Trouble and Moved Out! from the same season of their series?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("No: ")
    same = "Are the episodes Cave Trouble and Lost Hat from the same season of their series?"
    assert (await _answer(embedder, same, [first, third])).summary.startswith("Yes: ")


async def test_the_noun_asked_is_the_one_before_of(embedder: Any) -> None:
    first = _page(182, "Harbor Gulls", "The Harbor Gulls are a baseball team based in Tarn. "
                  "The Gulls compete in the Coast League as a member of its East division.")
    second = _page(183, "River Hawks", "The River Hawks are a baseball team based in Lomb. They "
                   "are in the Central Division of the Coast League.")
    question = "Do the Harbor Gulls and the River Hawks play in the same division of the Coast " \
        "League?"
    draft = await _answer(embedder, question, [first, second])
    assert draft.summary.startswith("No: "), draft.summary
    assert "The River Hawks are a baseball team" in draft.summary  # "They" has its subject


async def test_units_of_a_force_are_said_by_what_they_are_of_it(embedder: Any) -> None:
    first = _page(184, "41st Liaison Squadron", "The 41st Liaison Squadron (Serbo-Croatian: "
                  "41. eskadrila) was an aviation squadron of Yugoslav Air Force formed in 1949.")
    second = _page(185, "42nd Fighter Squadron", "The 42nd Fighter Squadron was an aviation "
                   "squadron of Yugoslav Air Force established in 1961.")
    question = "Were the 41st Liaison Squadron and the 42nd Fighter Squadron both units of the " \
        "Yugoslav Air Force?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("Yes: ")
    assert countries_in("Serbo-Croatian: 41. eskadrila") == []


def test_a_name_given_two_years_is_two_editions() -> None:
    assert detect_intent("Were the 1998 Harbour Cup and the 2000 Harbour Cup held in the same "
                         "country?").entities == ["1998 Harbour Cup", "2000 Harbour Cup"]
    assert detect_intent("Were the 1987 and 1988 Tarn Gulls football teams led by the same "
                         "coach?").entities == ["1987 Tarn Gulls", "1988 Tarn Gulls"]
    assert detect_intent("Was the 1998 Harbour Cup held in Kenya?").entities[0] == "Harbour Cup"


async def test_the_winner_is_the_name_before_won(embedder: Any) -> None:
    first = _page(186, "2001 Lake Open", "The 2001 Lake Open was the 40th Lake Open, held at "
                  "Reed Club. Ivo Stark won his second straight Lake Open in a playoff.")
    second = _page(187, "2005 Lake Open", "The 2005 Lake Open was the 44th Lake Open, played at "
                   "Pine Club. Ivo Stark won his third Lake Open, five shots ahead.")
    third = _page(188, "2003 Lake Open", "The 2003 Lake Open was the 42nd Lake Open. It was won "
                  "by Al Moss.")
    question = "Were the 2001 Lake Open and the 2005 Lake Open won by the same golfer?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("Yes: ")
    other = "Were the 2001 Lake Open and the 2003 Lake Open won by the same golfer?"
    assert (await _answer(embedder, other, [first, third])).summary.startswith("No: ")


async def test_a_state_a_later_sentence_places_it_in(embedder: Any) -> None:
    first = _page(189, "Elk Creek School", "Elk Creek School (also known as the Elk School) was "
                  "a boarding school. It existed from 1909 to 1983. It was located in central "
                  "Oklahoma, near Concho.")
    second = _page(190, "Pine High School", "Pine High School is a high school in Winona, "
                   "Minnesota.")
    question = "Are Elk Creek School and Pine High School located in the same state?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("No: ")


async def test_the_go_between_asked_of_is_the_passage_of_its_kind(embedder: Any) -> None:
    jurist = _page(191, "Paul Arnaud", "Paul Arnaud (2 May 1901, Lyon – 3 June 1977, Bram) was "
                   "a French jurist. He is known for his translations of the historian Ibn "
                   "Tarif.")
    village = _page(192, "Bram", "Bram is a commune in the Aude department. The French jurist "
                    "Paul Arnaud (1901–1977) died in Bram.")
    historian = _page(193, "Ibn Tarif", "Ibn Tarif (12 May 1290 – 9 April 1351) was a North "
                      "African historian.", 0.4)
    draft = await _answer(embedder, "Paul Arnaud translated the work of a Tunisian historian "
                          "who died on what date?", [jurist, village, historian])
    assert "9 April 1351" in draft.summary, draft.summary
    album = _page(194, "Picnic (album)", "Picnic is the second album by Tin Roof, released in "
                  "1989. It was produced with help from Gil Moor (who plays a brief guitar solo "
                  "on \"Noon\").")
    band = _page(195, "Stone Path", "Stone Path was an American rock band formed in 1985 by "
                 "vocalist Ada Rain and guitarist Gil Moor.")
    guitarist = _page(196, "Gil Moor", "Gil Moor (born Moor Gil Andersen on May 2, 1962) was the "
                      "lead guitarist for rock act Stone Path.", 0.3)
    draft = await _answer(embedder, "The Tin Roof album Picnic features a brief guitar solo by a "
                          "musician who was born under what name?", [album, band, guitarist])
    assert "Moor Gil Andersen" in draft.summary, draft.summary


async def test_two_options_opening_with_one_name_stay_whole(embedder: Any) -> None:
    first = _page(197, "Le Pont volant", "Le Pont volant (\"The Flying Bridge\") is a French play "
                  "by Rene Caux, and his first, written in 1645.")
    second = _page(198, "Le Pont malgré lui", "Le Pont malgré lui is a farce by Rene Caux first "
                   "presented in 1666.")
    question = "Which Rene Caux play was written first, Le Pont volant or Le Pont malgré lui?"
    assert either_or(question, detect_intent(question)) == ["Le Pont volant",
                                                          "Le Pont malgré lui"]
    draft = await _answer(embedder, question, [first, second])
    assert draft.summary.startswith("Le Pont volant"), draft.summary


async def test_a_title_joined_by_a_plus_is_one_option(embedder: Any) -> None:
    character = _page(199, "Lena", "Lena Moss is the heroine of Tom Kyd's play \"Otto and "
                      "Lena\".")
    modern = _page(200, "Otto + Lena", "Otto + Lena is a 1996 American drama film directed by "
                   "Baz Lind.")
    older = _page(201, "The Tragedy of Otto and Lena", "The Tragedy of Otto and Lena is a 1982 "
                  "film adaptation of Tom Kyd's play \"Otto and Lena\".")
    question = "Which film was released first, Otto + Lena or The Tragedy of Otto and Lena?"
    assert either_or(question, detect_intent(question)) == ["Otto + Lena",
                                                          "Tragedy of Otto and Lena"]
    draft = await _answer(embedder, question, [character, modern, older])
    assert draft.summary.startswith("The Tragedy of Otto and Lena"), draft.summary


async def test_the_go_between_answers_with_its_sentence_that_says_it(embedder: Any) -> None:
    film = _page(202, "The Ticket (1952 film)", "The Ticket is a 1952 British comedy film. It was "
                 "adapted by Eli Amber from the novel by Arnold Bent.")
    writer = _page(203, "Eli Amber", "Eli Amber (28 June 1909 – 22 October 1998) was a British "
                   "author of thrillers. He wrote twenty novels. Amber used the pseudonym Ross "
                   "Reed for books co-written with Carl Rood.", 0.4)
    draft = await _answer(embedder, "The Ticket (1952 film) was adapted by a writer who used "
                          "what pseudonym for books co-written with Carl Rood?", [film, writer])
    assert draft.summary.startswith("Amber used the pseudonym Ross Reed"), draft.summary
    sitcom = _page(204, "The Old Yards", "The Old Yards is a British sitcom, broadcast in the "
                   "United Kingdom from 1982 to 1984 in two series. Shown on BBC2, it featured "
                   "offbeat humour.")
    author = _page(205, "Ben Alder", "Ben Alder is an English comedian. He wrote for the "
                   "sitcom The Old Yards.")
    draft = await _answer(embedder, "Ben Alder wrote for a British sitcom that was shown on "
                          "which channel from 1982 to 1984?", [author, sitcom])
    assert "BBC2" in draft.summary, draft.summary


async def test_the_go_between_is_the_one_described_as_asked(embedder: Any) -> None:
    father = _page(206, "Ara Vell", "Ara Vell is an Armenian painter. His son Dan Vell "
                   "co-founded the bands Gate of Salt and Tin Crown.")
    rock = _page(207, "Tin Crown", "Tin Crown was a rock band co-founded by Dan Vell, the son "
                 "of Ara Vell, that comes from the city of Reno.", 0.5)
    metal = _page(208, "Gate of Salt", "Gate of Salt is an Armenian-American heavy metal band "
                  "from Glendale, California, formed in 1994.", 0.4)
    draft = await _answer(embedder, "Ara Vell's son co-founded a heavy metal band that comes "
                          "from which city?", [father, rock, metal])
    assert "Glendale" in draft.summary, draft.summary


async def test_the_new_rules_stop_short_of_a_wrong_answer(embedder: Any) -> None:
    """A review of this session's rules found each of these answered wrongly; each now is
    right or left unsettled."""
    says = functools.partial(_summary, embedder, 300)

    assert not (await says(
        "Were Pat Vane and Bryn Eads both members of the Larks?",
        ("Pat Vane", "Pat Vane (born 1941) is an English musician, the original drummer of "
                     "the Larks."),
        ("Bryn Eads", "Bryn Eads (1934 – 1967) was an English entrepreneur who managed the "
                      "Larks from 1962."))).startswith("Yes")
    assert not (await says(
        "Are the Moor Regiment and the Sea Arm both units of the Royal Air Corps?",
        ("Moor Regiment", "The Moor Regiment is a specialist corps of the Royal Air Corps."),
        ("Sea Arm", "The Sea Arm is the naval aviation component of the Royal Fleet. It took "
                    "over carrier aircraft from the Royal Air Corps in 1939."))).startswith("Yes")
    assert (await says(
        "Were Dread and Dread II directed by the same director?",
        ("Dread", "Dread is a 1960 film produced and directed by Al Hatch."),
        ("Dread II", "Dread II is a 1983 film directed by Rick Frank. It is the sequel to "
                     "director Al Hatch's 1960 film Dread."))).startswith("No: ")
    assert countries_in("a Dominican friar from Germany") == ["Germany"]
    assert countries_in("an institution in San Marino, California") == []
    assert countries_in("a reservoir in Grenada County, Mississippi") == []
    assert countries_in("a footballer from Marneuli, Georgia") == ["Georgia"]
    assert countries_in("the first head of state of Georgia") == ["Georgia"]
    assert countries_in("Russia, Georgia and Armenia") == ["Russia", "Georgia", "Armenia"]
    assert not (await says(
        "Were The Nell and the Clock Hotel originally hotels?",
        ("The Nell", "The Nell is a hotel in London, housed in the former Midland Bank "
                     "headquarters."),
        ("Clock Hotel", "The Clock Hotel is a hotel in Leeds, housed in the former Refuge "
                        "Building."))).startswith("Yes")
    assert not (await says(
        "Are the Tarn Building and the Iron Building located in the same city?",
        ("Tarn Building", "The Tarn Building is a skyscraper on the East Side of Manhattan, "
                          "New York City, United States."),
        ("Iron Building", "The Iron Building is a triangular building located in Manhattan.")
    )).startswith("No")
    assert not (await says(
        "Are Jam and Last Vow episodes of the same series?",
        ("Jam", "\"Jam\" is the third episode of the third series of the science fiction "
                "programme Time Lord."),
        ("Last Vow", "\"Last Vow\" is the third episode of the third series of the crime "
                     "drama Holmes."))).startswith("Yes")
    assert not (await says(
        "Are Sometime and Come Along from the same album?",
        ("Sometime", "\"Sometime\" is a song by the band the Larks from their 1969 album "
                     "\"Abbey Lane\"."),
        ("Come Along", "\"Come Along\" is a song by the Larks, written by Jon Lenn. It was "
                       "released as a single in 1969, and later appeared on the compilation "
                       "album \"1967–1970\"."))).startswith("No")
    assert not (await says(
        "Were Rain Runner and Rain Runner 2049 directed by the same person?",
        ("Rain Runner", "Rain Runner is a 1982 film directed by Rod Scot."),
        ("Rain Runner 2049", "Rain Runner 2049 is a 2017 film, a sequel to Rain Runner. Rod "
                             "Scot directed the original film, while Dan Ville was hired to "
                             "direct."))).startswith("Yes")
    assert not (await says(
        "Do Rolling Sound and Vain Fair have the same publication frequency?",
        ("Rolling Sound", "Rolling Sound is an American monthly magazine on music."),
        ("Vain Fair", "Vain Fair is an American magazine of culture. It hosts an annual Oscar "
                      "party and publishes an annual Hollywood issue."))).startswith("No")
    assert not (await says(
        "Was Ocean's Nine released before Ocean's Ten?",
        ("Nine", "Nine is a fictional character in the series Strange Days, introduced in "
                 "2016."),
        ("Ocean's Ten", "Ocean's Ten is a 2004 heist film, the sequel to Ocean's Nine (2001).")
    )).startswith("No")
    draft = await says(
        "Sea Tale was written by a novelist who died in what year?",
        ("Sea Tale", "Sea Tale is an 1851 novel by American writer Hal Mell. The book is a "
                     "sailor's story. Mell dedicated it to the novelist Nat Hawes, a friend."),
        ("Hal Mell", "Hal Mell (August 1, 1819 – September 28, 1891) was an American novelist "
                     "and poet."),
        ("Nat Hawes", "Nat Hawes (July 4, 1804 – May 19, 1864) was an American novelist. He "
                      "died in his sleep on May 19, 1864."))
    assert "1891" in draft and "1864" not in draft.split("[")[0], draft


async def test_the_same_family_is_its_scientific_name_else_its_common_name(
        embedder: Any) -> None:
    async def says(question: str, first: str, second: str) -> str:
        sources = [_page(400, question.split()[1], first),
                   _page(401, question.split(" and ")[1].split()[0], second)]
        return str((await _answer(embedder, question, sources)).summary)

    # a common name before "family", the scientific one after a comma, or one alone
    assert (await says(
        "Are Wendia and Tolmera in the same plant family?",
        "Wendia is a genus of flowering plants in the borage family, Boraginaceae.",
        "Tolmera is a genus of shrubs in the family Boraginaceae, native to Chile.",
    )).startswith("Yes: ")
    assert (await says(
        "Do Wendia and Pallux belong to the same plant family?",
        "Wendia is a genus of flowering plants in the borage family, Boraginaceae.",
        "Pallux is a small genus of trees in the family Styracaceae, native to Japan.",
    )).startswith("No: ")
    assert (await says(
        "Are Orvia and Pellica in the same plant family?",
        "Orvia is a species of flowering plant in the pink family known as the field catchfly.",
        "Pellica is a species of flowering plant in the pink family known as sleepy pinks.",
    )).startswith("Yes: ")
    # one common name, one scientific: not known to be one family or two
    assert not (await says(
        "Are Orvia and Tolmera in the same plant family?",
        "Orvia is a species of flowering plant in the pink family known as the field catchfly.",
        "Tolmera is a genus of shrubs in the family Boraginaceae, native to Chile.",
    )).startswith(("Yes", "No"))
    # "the royal family" is no plant's family, nor one family wherever it is said
    assert not (await says(
        "Are Edda Vorn and Mila Vorn from the same family?",
        "Edda Vorn (born 1950) is a princess, a member of the royal family.",
        "Mila Vorn (born 1954) is a singer and a member of the royal family.",
    )).startswith(("Yes", "No"))


async def test_a_country_is_read_from_the_words_that_set_a_title_apart(
        embedder: Any) -> None:
    look = _page(402, "Glint (UK magazine)", "Glint is a glossy weekly fashion magazine for "
                 "young women. It is edited by Ann Hale.")
    figaro = _page(403, "Madame Lune", "Madame Lune is a French magazine supplement to the "
                   "daily newspaper \"La Lune\".")
    question = "Are Glint and Madame Lune magazines published in the same country?"
    assert (await _answer(embedder, question, [look, figaro])).summary.startswith("No: ")


async def test_a_measure_taken_at_a_census_is_weighed_from_that_census(embedder: Any) -> None:
    first = _page(404, "Tarnwick, Ohio", "Tarnwick is a city in Lake County, Ohio, United "
                  "States. The population was 4,160 at the 2010 census, up from 39,674 at the "
                  "1900 census.")
    second = _page(405, "Bellmoor, Iowa", "Bellmoor is a town in Polk County, Iowa. As of the "
                   "2010 census, the population was 37,819.")
    question = "Did Tarnwick, Ohio have a larger population than Bellmoor, Iowa at the 2010 " \
        "census?"
    draft = await _answer(embedder, question, [first, second])
    assert draft.summary.startswith("No: "), draft.summary
    # the sentence giving the number with the one that says what it is the number of
    assert "Tarnwick is a city in Lake County, Ohio, United States. The population was" \
        in draft.summary


async def test_what_two_share_may_be_named_before_them(embedder: Any) -> None:
    first = _page(406, "Lanes Serve a Writ", "Lanes Serve a Writ is a 1943 Western film "
                  "directed by Georg Arbo and starring Will Bode.")
    second = _page(407, "Campus Secrets", "Campus Secrets is a 1938 American film directed by "
                   "Georg Arbo, featuring Betty Gale.")
    third = _page(408, "Harbor Lights", "Harbor Lights is a 1940 film directed by Ona Pell.")
    same = "Did the same director make Lanes Serve a Writ and Campus Secrets?"
    assert (await _answer(embedder, same, [first, second])).summary.startswith("Yes: ")
    other = "Did the same director make Campus Secrets and Harbor Lights?"
    assert (await _answer(embedder, other, [second, third])).summary.startswith("No: ")


async def test_the_kind_named_before_two_things_is_not_part_of_the_first(
        embedder: Any) -> None:
    first = _page(409, "Edwin Shade and the Copper Bells", "Edwin Shade and the Copper Bells is "
                  "an American folk band formed in Fresno, California in 2007.")
    second = _page(410, "Louis IX (band)", "Louis IX is an American rock band from San Diego, "
                   "California.")
    question = "Are the bands Edwin Shade and the Copper Bells and Louis IX both from California?"
    assert (await _answer(embedder, question, [first, second])).summary.startswith("Yes: ")


async def test_in_which_city_asked_first_is_answered_by_the_sentence_of_the_event(
        embedder: Any) -> None:
    film = _page(411, "Lanterna (film)", "Lanterna is a 1961 Italian film directed by Ugo "
                 "Parri.")
    director = _page(412, "Ugo Parri", "Ugo Parri (1 May 1920 – 2 June 1980) was an Italian "
                     "actor, screenwriter and director. Parri was born in Trento, to a family of "
                     "clockmakers. He studied law before turning to the stage.")
    question = "In which city was the director of Lanterna born?"
    draft = await _answer(embedder, question, [film, director])
    assert draft.summary.startswith("Parri was born in Trento"), draft.summary


async def test_through_a_go_between_the_answer_is_reached_from_what_is_named(
        embedder: Any) -> None:
    book = _page(413, "The Quiet Tower", "The Quiet Tower is a 1953 work of nonfiction by "
                 "Polish writer and laureate Jan Wisk.")
    author = _page(414, "Jan Wisk", "Jan Wisk (30 June 1911 – 14 August 2004) was a Polish "
                   "poet. In 1980 Wisk received the Golden Quill Prize in Poetry.")
    other = _page(415, "Rainfall (novel)", "Rainfall is a novel by Mira Holt. In 1998, Holt "
                  "received the Golden Quill Prize in Poetry, and Rainfall was noted by the jury.")
    question = "In what year did the author of The Quiet Tower receive the Golden Quill Prize " \
        "in Poetry?"
    draft = await _answer(embedder, question, [book, other, author])
    assert "1998" not in draft.summary, draft.summary
    assert "Rainfall" not in f"{draft.summary} {draft.detail}"
    assert "In 1980 Wisk received" in f"{draft.summary} {draft.detail}"


def test_the_second_hop_searches_the_name_its_passage_gives_the_go_between_first() -> None:
    album = _page(416, "Glory Bound (album)", "Glory Bound is the seventh studio album by "
                  "Chicago-based rock band Lake Quorum. It was first heard in Calgary, Alberta.")
    question = "The band that released Glory Bound was formed in which town?"
    queries = bridge_queries(question, [album], [album], 1, detect_intent(question).entities)
    assert queries[0].startswith("Lake Quorum"), queries  # "band Lake Quorum", not Calgary
    essays = _page(417, "Party Lizard", "Party Lizard, subtitled \"The Confessions, Essays "
                   "and Other Outrages\" is a 1987 collection of essays by American satirical "
                   "writer P. J. Orrin.")
    question = "When was the author of Party Lizard born?"
    queries = bridge_queries(question, [essays], [essays], 1, detect_intent(question).entities)
    assert queries[0].startswith("P. J. Orrin"), queries  # the maker of the collection


async def test_a_place_asked_of_a_go_between_is_where_its_passage_says_the_event_was(
        embedder: Any) -> None:
    album = _page(418, "Keep This in Mind", "Keep This in Mind is the second studio album by "
                  "American rock band Motion Town Soundtrack. Produced by Mark Hale, the album "
                  "was released on June 7, 2005, in the United States by Epitome Records. Motion "
                  "Town Soundtrack, formed in 1997, had first found success with their debut "
                  "album, \"I Am the Show\" (2002). The band toured in the interim years.")
    band = _page(419, "Motion Town Soundtrack", "Motion Town Soundtrack was an American rock "
                 "band that formed in Brainerd, Minnesota in 1997. The band's line-up consisted "
                 "of vocalist Justin Peer and drummer Tony Thax. Over the course of their "
                 "career, the group toured heavily and released six studio albums, the majority "
                 "on independent label Epitome Records.")
    question = "In which city was the band behind the album Keep This in Mind formed?"
    draft = await _answer(embedder, question, [album, band])
    # the town in "Motion Town Soundtrack" makes its passage no town's; "formed in 1997" no place
    assert draft.summary.startswith("Motion Town Soundtrack was an American rock band that "
                                    "formed in Brainerd"), draft.summary


async def test_a_late_sentence_of_a_life_is_quoted_though_it_says_he(embedder: Any) -> None:
    poet = _page(420, "Jan Wisk", "Jan Wisk (30 June 1911 – 14 August 2004) was a Polish poet. "
                 "His early sequence \"The Hours\" is a cycle of twenty poems. Following the war, "
                 "he served as a cultural attaché in Paris. His book \"The Quiet Tower\" (1953) "
                 "became a classic. From 1961 to 1998 he was a professor at Berkeley. He became "
                 "a citizen in 1970. In 1980 he was awarded the Golden Quill Prize in Poetry.")
    question = "In what year was Jan Wisk awarded the Golden Quill Prize in Poetry?"
    draft = await _answer(embedder, question, [poet])
    assert "In 1980 he was awarded the Golden Quill Prize" in f"{draft.summary} {draft.detail}"


async def test_this_steps_rules_stop_short_of_a_wrong_answer(embedder: Any) -> None:
    """A review of this step's rules found each of these answered wrongly; each now is
    right or left unsettled."""
    says = functools.partial(_summary, embedder, 430)

    settled = ("Yes", "No")
    # two common names may be one family's
    assert not (await says(
        "Are Plantus alba and Herbia nigra in the same plant family?",
        ("Plantus alba", "Plantus alba is a species of flowering plant in the daisy family."),
        ("Herbia nigra", "Herbia nigra is a species of flowering plant in the aster family."),
    )).startswith(settled)
    # a subclass is no family
    assert (await says(
        "Are Rosa alpha and Pisum beta in the same plant family?",
        ("Rosa alpha", "Rosa alpha is a flowering plant of the subclass Rosidae, in the family "
                       "Rosaceae."),
        ("Pisum beta", "Pisum beta is a flowering plant of the subclass Rosidae, in the family "
                       "Fabaceae."),
    )).startswith("No: ")
    # a family that owns a firm is no plant's
    assert not (await says(
        "Does the same family own Greenleaf Nurseries and Hill Seeds?",
        ("Greenleaf Nurseries", "Greenleaf Nurseries is a company selling plants and trees, "
                                "owned by the founding family."),
        ("Hill Seeds", "Hill Seeds is a seed company selling grass and herbs, owned by the "
                       "founding family."),
    )).startswith(settled)
    # a title's bracket naming a subject is no country
    assert not (await says(
        "Are Tide and Red Sky from the same country?",
        ("Tide (Vietnam War documentary)", "Tide is a 1990 documentary film directed by Al "
                                           "Hatch."),
        ("Red Sky", "Red Sky is a 1992 Vietnamese documentary film."),
    )).startswith(settled)
    # "in the final" is not when a measure was taken
    assert not (await says(
        "Did Tom Ash score more goals than Bo Lind in the final?",
        ("Tom Ash", "Tom Ash (born 1980) is an English footballer. He scored 120 goals for "
                    "Foo United."),
        ("Bo Lind", "Bo Lind (born 1982) is a Swedish footballer. He scored 80 goals for Bar "
                    "City."),
    )).startswith(settled)
    # the census asked, not another's; a change and a population of others are no population
    for footown in ("Footown is a town in Ohio. The population was 4,160 at the 2000 census.",
                    "Footown is a town in Ohio. The population was 4,160 at the 2000 census. "
                    "By 2010 the population had fallen by 300 people.",
                    "Footown is a city in Ohio with a population of 84,000. In 2010, a "
                    "population of 2,000 students attended its university."):
        assert not (await says(
            "Did Footown have a larger population than Barville at the 2010 census?",
            ("Footown", footown),
            ("Barville", "Barville is a town in Ohio. The population was 39,000 at the 2010 "
                         "census."),
        )).startswith(settled), footown
    # "he" late in a passage that brought in a brother may be the brother
    summary = await says(
        "Who won the Foo Prize in 1955?",
        ("Tom Roe", "Tom Roe (1900–1970) was an English actor. His brother Sam Roe was a "
                    "novelist. They both moved to Paris in 1932. The two worked together for "
                    "years. In 1955 he won the Foo Prize for his novel The Sea."),
        ("Foo Prize", "The Foo Prize is a literary award given since 1920."))
    assert not summary.startswith("In 1955 he won"), summary


def test_a_term_in_office_is_no_life_and_the_ep_committee_no_record() -> None:
    from core.answer.grading import weigh

    question = "When was Tom Roe born?"
    mayor = Source(id="s1", title="Footown", path="/kb/footown.md", document_id="footown",
                   content="Footown is a city in Ohio. Tom Roe served as mayor of Footown "
                           "(1990–1994) and later as a judge.",
                   metadata=SourceMetadata(relevance=0.6, provider="local"))
    assert "born" in weigh([mayor], detect_intent(question), question).missing_words
    assert detect_intent("Who chairs the EP Committee on Foreign Affairs?").entities[0] == \
        "EP Committee"


async def test_a_yes_or_no_reads_the_fact_as_the_passage_words_it(embedder: Any) -> None:
    """The fact a question asks of both, said by each passage in its own words: an
    "inductee into" for "inducted into", a maker after its work's noun for "published by",
    a battle fought in for "took part in"; a country that opens a name is no place, and a
    country something was made for is not where it was made."""
    says = functools.partial(_summary, embedder, 440)

    assert (await says(
        "Have Ann Marsh and Bea Lott both been inducted into the Georgia Poets Hall of Fame?",
        ("Ann Marsh", "Ann Marsh (born 1950) is an American poet. She is a 2009 inductee into "
                      "the Georgia Poets Hall of Fame."),
        ("Bea Lott", "Bea Lott (1931–2012) was an American poet. In 2011 Lott was inducted "
                     "into the Georgia Poets Hall of Fame."),
    )).startswith("Yes")
    assert (await says(
        "Were Star Quest and Moon Dice both published by Ogre Games?",
        ("Star Quest", "Star Quest is a board game published by Ogre Games in 1990."),
        ("Moon Dice", "Moon Dice is a dice game by Ogre Games, written by Sam Ogre."),
    )).startswith("Yes")
    # another verb before the maker says another role: not settled as published
    assert not (await says(
        "Were Star Quest and Moon Dice both published by Ogre Games?",
        ("Star Quest", "Star Quest is a board game published by Ogre Games in 1990."),
        ("Moon Dice", "Moon Dice is a dice game designed by Ogre Games and sold by Bax."),
    )).startswith("Yes")
    # "took part in" said otherwise ("fought during"), or a battle only named: unsettled,
    # never a No for what the passages do not word as the question does
    assert not (await says(
        "Did VMF-901 and VMF-902 both take part in the Battle of Foo Bay?",
        ("VMF-901", "Marine Fighting Squadron 901 (VMF-901) was a fighter squadron of the "
                    "Marine Corps during World War II. They fought during the Battle of "
                    "Okinawa and the Battle of Foo Bay (1945)."),
        ("VMF-902", "Marine Fighting Squadron 902 (VMF-902) was a fighter squadron of the "
                    "Marine Corps during World War II. The squadron supported combat "
                    "operations during the Okinawa and the Battle of Foo Bay (1945)."),
    )).startswith(("Yes", "No"))
    assert (await says(
        "Were the Type Q rifle and the Type 9 rifle both produced in Japan?",
        ("Type Q rifle", "The Type Q rifle was produced during the war for the Japanese Empire "
                         "by the Kingdom of Italy."),
        ("Type 9 rifle", "The Type 9 rifle was a Japanese experimental rifle."),
    )).startswith("No: ")


async def test_either_or_reads_a_role_before_a_name_and_a_height_above_sea_level(
        embedder: Any) -> None:
    says = functools.partial(_summary, embedder, 450)

    for asked, older in (("older", True), ("younger", False)):
        summary = await says(
            f"Who is {asked}, journalist Ann Voss or novelist Bea Kemp?",
            ("Ann Voss", "Ann Voss (born March 3, 1976) is an American journalist."),
            ("Bea Kemp", "Bea Kemp (born June 12, 1973) is an American novelist."))
        assert summary.startswith("Bea Kemp" if older else "Ann Voss"), summary
        assert "[1]" in summary and "[2]" in summary, summary  # both dates decide it
    assert (await says(
        "Which mountain is higher, Foo Sar or Bar Kangri?",
        ("Foo Sar", "Foo Sar is at 7343 m above sea level, the 64th highest peak in the world."),
        ("Bar Kangri", "Bar Kangri is a mountain with an elevation of 7312 m."),
    )).startswith("Foo Sar")


def test_a_subject_written_as_words_of_the_language_is_named_by_them() -> None:
    from core.retrieval.rank import named_subjects

    genre = _page(77, "Young adult fiction", "Young adult fiction is fiction written for "
                  "readers from 12 to 18.")
    assert named_subjects("Ann Roe is a writer of young adult fiction.", genre) \
        == {" young adult fiction "}


def test_the_second_hop_searches_a_name_of_the_go_betweens_kind_not_the_subjects_full_name(
        ) -> None:
    soldier = _page(462, "Jon K. Fell", "Jon Kieran Fell (1843 – 1907) was an American "
                    "soldier who fought in the American Civil War. Fell received the Medal of "
                    "Honor for his action during the Battle of Foo Island in Missouri in 1862 "
                    "and the Battle of Bar River in Tennessee in 1862.")
    question = "Jon K. Fell received the Medal of Honor partly for his action in a battle " \
        "that is also known by what name?"
    queries = bridge_queries(question, [soldier], [soldier], 3,
                             detect_intent(question).entities)
    assert not any(q.startswith("Jon Kieran Fell") for q in queries), queries
    assert {q.split(" partly")[0] for q in queries} >= {"Battle of Foo Island",
                                                         "Battle of Bar River"}, queries


async def test_the_same_maker_or_network_is_read_as_each_passage_says_it(embedder: Any) -> None:
    """"Developed by the same company" of a passage saying "Foo Soft developed the game";
    "aired on the same network" by the name after "aired on"."""
    says = functools.partial(_summary, embedder, 470)

    assert (await says(
        "Were Star Quest and Moon Dice developed by the same company?",
        ("Star Quest", "Star Quest is a 2015 puzzle video game. Foo Soft Montreal developed "
                       "the game in a year."),
        ("Moon Dice", "Moon Dice is an action game developed by Bar Dynamics and published by "
                      "Foo Soft."),
    )).startswith("No: ")
    night = ("Night Court Nine", "Night Court Nine is an American crime drama series that "
                                 "aired on CBS from 1987 to 1988.")
    question = "Did Night Court Nine and Harbor Watch air on the same network?"
    assert (await says(question, night, ("Harbor Watch", "Harbor Watch is an American crime "
                                         "drama that aired on NBC in 1977."))).startswith("No: ")
    assert (await says(question, night, ("Harbor Watch", "Harbor Watch is an American crime "
                                         "drama that aired on CBS in 1977."))).startswith("Yes")
    # another verb says nothing of where it aired
    assert not (await says(question, night, (
        "Harbor Watch", "Harbor Watch is an American crime drama that was sold to NBC in "
                        "1977."))).startswith(("Yes", "No"))


def test_a_question_likening_one_thing_to_another_asks_of_both() -> None:
    from core.answer.verdict import decide

    def said(second: str) -> str | None:
        question = "Is Foo Hill, like Bar Lake, a documentary film?"
        pages = [_page(480, "Foo Hill", "Foo Hill is a 2007 documentary film about a climb."),
                 _page(481, "Bar Lake", f"Bar Lake is a 2004 {second} film.")]
        verdict = decide(question, detect_intent(question), pages)
        return verdict.answer if verdict else None

    assert said("documentary") == "Yes"
    assert said("drama") == "No"


async def test_a_go_betweens_kind_named_only_in_words_of_the_language_does_not_lead(
        embedder: Any) -> None:
    """"A recreational and fishing lake" does not name Fishing Lake: the lake the question
    reaches is the one named as a name."""
    town = _page(490, "Tarn Lake, Ohio", "Tarn Lake is a small community along the shores of "
                 "Tarn Lake, a recreational and fishing lake in Ohio.")
    lake = _page(491, "Tarn Lake", "Tarn Lake is a large fishing lake in Ohio. It is named "
                 "after Sam Tarn, a surveyor.")
    other = _page(492, "Fishing Lake", "Fishing Lake is a lake in Saskatchewan. It is named "
                  "after the fishing done there.")
    draft = await _answer(embedder, "The community of Tarn Lake, Ohio lies along a lake that "
                          "is named after whom?", [town, other, lake])
    assert "Saskatchewan" not in draft.summary, draft.summary
    assert "Fishing Lake" not in f"{draft.summary} {draft.detail}"


def test_the_twelfth_sets_rules_stop_short_of_a_wrong_answer() -> None:
    """A review of this step's rules found each of these answered wrongly; each now is
    right or left unsettled."""
    said = _decided
    # a passage naming two teams, or a day before the network, gives no one value
    assert said("Did Mark Toll and Dean Rask play for the same team?",
                ("Mark Toll", "Mark Toll is an American footballer. He played for the Harbor "
                              "City Gulls from 1992 and for the Lakeport Rams from 1996."),
                ("Dean Rask", "Dean Rask is an American footballer. He played for the "
                              "Lakeport Rams from 1994 to 2003.")) != "No"
    assert said("Did Quiet Acres and Hollow Point air on the same network?",
                ("Quiet Acres", "Quiet Acres is an American sitcom that aired on Thursday "
                                "nights on CBN from 1990 to 1992."),
                ("Hollow Point", "Hollow Point is an American police drama that aired on "
                                 "CBN in 1994.")) != "No"
    # ... while dates after it, or names in the next clause, leave it the one
    assert said("Did Quiet Acres and Hollow Point air on the same network?",
                ("Quiet Acres", "Quiet Acres is an American sitcom that aired on CBN from "
                                "September 27, 1990 to May 2, 1992."),
                ("Hollow Point", "Hollow Point is an American police drama that aired on "
                                 "NBC for 13 episodes, following the film Hollow.")) == "No"
    # a country's own name of two words is a country
    assert said("Were Xaver Lund and Petr Hrob both from the Czech Republic?",
                ("Xaver Lund", "Xaver Lund is a Czech footballer."),
                ("Petr Hrob", "Petr Hrob is a Czech ice hockey player.")) == "Yes"
    # "a film by B" or "an album by B" says nothing of who wrote or produced it
    assert said("Were Glass Meridian and Copper Dawn both produced by Rick Falk?",
                ("Glass Meridian", "Glass Meridian is the third studio album by Rick Falk."),
                ("Copper Dawn", "Copper Dawn is the fourth studio album by Rick Falk.")) \
        != "Yes"
    # one who competed for a country is of it
    assert said("Are Ann Holt and Bo Tarr both American?",
                ("Ann Holt", "Ann Holt (born 1970) is a runner who competed for the United "
                             "States at the 1996 Olympics. Born in Toronto, Canada, she moved "
                             "south at ten."),
                ("Bo Tarr", "Bo Tarr (born 1971) is an American runner.")) != "No"
    # a compound with a noun in "-ion" is not its verb: an "induction committee", an "edition"
    assert said("Were Ann Marsh and Bea Lott both inducted into the Foo Hall of Fame?",
                ("Ann Marsh", "Ann Marsh (born 1950) is an American poet. She chaired the Foo "
                              "Hall of Fame induction committee."),
                ("Bea Lott", "Bea Lott (1931–2012) was an American poet. In 2011 Lott was "
                             "inducted into the Foo Hall of Fame.")) != "Yes"
    # a city's altitude is no tower's height; "the game's engine" is not the game
    assert said("Which building is taller, Lanvar Tower or Meseta Plaza?",
                ("Lanvar Tower", "Lanvar Tower is a 110 m tall office building in Quito, a "
                                 "city 2,850 m above sea level."),
                ("Meseta Plaza", "Meseta Plaza is a skyscraper in Lima. It is 150 m tall.")) \
        == "Meseta Plaza"
    assert said("Were Sky Fort and Iron Keep developed by the same company?",
                ("Sky Fort", "Sky Fort is a 2014 strategy video game. Kestrel Studios "
                             "developed the game's engine."),
                ("Iron Keep", "Iron Keep is a 2016 strategy video game developed by Kestrel "
                              "Studios.")) != "Yes"
    # a word that is no role is part of what is weighed
    assert said("Which has the larger population, Kelton or metropolitan Darvish?",
                ("Kelton", "Kelton is a city with a population of 400,000."),
                ("Darvish", "Darvish is a city with a population of 300,000. Its metropolitan "
                            "area has 900,000 people.")) != "Kelton"


async def test_the_album_containing_a_single_is_a_go_between(embedder: Any) -> None:
    single = _page(520, "Rope Swing", "\"Rope Swing\" is a song by English band the Tarns. It "
                   "was released in 1979 by Polydor as the sole single from the band's second "
                   "album, \"Join Arms\" (1979).")
    album = _page(521, "Join Arms", "Join Arms is the second studio album by the English band "
                  "the Tarns. It was released in September 1979 by the record label Polydor.")
    draft = await _answer(embedder, "In what month was the album containing the Tarns' single "
                          "\"Rope Swing\" released?", [single, album])
    assert "September" in draft.summary, draft.summary


async def test_a_go_between_is_not_answered_by_the_named_things_own_passage(
        embedder: Any) -> None:
    """The named thing's own passage says of it what the question asks of the go-between
    ("produced by Ken Tam" of the Red Album): the answer is in the go-between's passage;
    unless the lead already gives a name of the kind asked ("Pine County")."""
    red = _page(530, "Red Album (Foo Band album)",
                "Red Album is the second album by the Leeds band Foo Band. It was released in "
                "2007. It is the follow-up to their album Quiet Hours. It was recorded in "
                "Wales and produced by Ken Tam.")
    quiet = _page(531, "Quiet Hours (album)",
                  "Quiet Hours is the debut album by the Leeds band Foo Band. It was released "
                  "in 2005. It was recorded in Bath and produced by Paul Corr.")
    draft = await _answer(embedder, "The album that Foo Band's Red Album followed up was "
                          "produced by whom?", [red, quiet])
    assert "Paul Corr" in draft.summary, draft.summary
    creek = _page(532, "Alder Brook", "Alder Brook is a stream in Harlan County, Minnesota. "
                  "It flows into Lake Corvane, which lies in Pine County.")
    county = _page(533, "Harlan County, Minnesota", "Harlan County is a county in the U.S. "
                   "state of Minnesota. Its county seat is Brandt. Many lakes lie in the "
                   "county.")
    draft = await _answer(embedder, "The lake that Alder Brook flows into is in which county?",
                          [creek, county])
    assert "Pine County" in draft.summary, draft.summary


def test_a_name_inside_the_go_betweens_own_words_is_its_noun() -> None:
    from core.answer.verdict import through_another

    question = "The EP that Foo Band's White EP followed up was produced by whom?"
    assert through_another(question, detect_intent(question).entities)
    assert not through_another("Who produced Foo Band's White EP?",
                               ["Foo Band's White EP"])
    # a name that only begins inside such words is named: "the documentaries Out of Place"
    question = "are the documentaries Out of Mind and The Tarn Sisters by the same director?"
    assert not through_another(question, ["Out of Mind", "The Tarn Sisters"])


# ---- the thirteenth blind set's forms ------------------------------------------------------

def test_the_thirteenth_sets_words_are_read_as_the_passages_write_them() -> None:
    # a hyphenated word said in two ("medium size"), a noun said as its adjective ("parental")
    assert _decided("Are the Harl Setter and the Dunmore Hound both medium-sized dog breeds?",
                    ("Harl Setter", "The Harl Setter is a medium size breed of dog."),
                    ("Dunmore Hound", "The Dunmore Hound is a medium-sized breed of dog.")) \
        == "Yes"
    assert _decided("Do the hybrids Velarra and Trosia both have Mendelia as a parent genus?",
                    ("Velarra", "Velarra is an intergeneric hybrid of orchids, with Mendelia "
                                "and Corvia as parent genera."),
                    ("Trosia", "Trosia (from Mendelia and Askia, its parental genera) is an "
                               "intergeneric hybrid of orchids.")) == "Yes"
    # "share a director" is the same director
    films = (("Harbor Lights", "Harbor Lights is a 1921 Danish film directed by Aksel Brun."),
             ("Winter Oath", "Winter Oath is a 1924 Danish drama film directed by Aksel Brun "
                             "and released by Nordlys."))
    assert _decided("Do Harbor Lights and Winter Oath share a director?", *films) == "Yes"
    assert _decided("Do Harbor Lights and Winter Oath have a director in common?", *films) \
        == "Yes"
    # "part of the Ostrava range" as "in the Ostrava range"
    assert _decided("Are Kel Sar and Dova Peak both part of the Ostrava mountain range?",
                    ("Kel Sar", "Kel Sar is a mountain located in the Ostrava mountain range."),
                    ("Dova Peak", "Dova Peak is a mountain in the Ostrava mountain range.")) \
        == "Yes"
    # "the same position in American football": a safety both
    assert _decided("Did Ray Tolbert and Vic Arno play the same position in American football?",
                    ("Ray Tolbert", "Ray Tolbert (born 1984) is a former American football "
                                    "safety."),
                    ("Vic Arno", "Vic Arno (born 1979) is a retired American football safety.")) \
        == "Yes"
    # a game "released in 1994 by" its publisher; "the same game designer" asks the designer
    assert _decided("Were Cow Wars: The Card Game and Moonrise: New Order published by the same "
                    "company?",
                    ("Cow Wars: The Card Game", "Cow Wars: The Card Game is a card game "
                                                "published by Tallow Games."),
                    ("Moonrise: New Order", "Moonrise: New Order is a card game that was "
                                            "released in 1994 by Tallow Games.")) == "Yes"
    assert _decided("Were The Kids of Varn and Oslund both created by the same game designer?",
                    ("The Kids of Varn", "The Kids of Varn is a board game for children. The "
                                         "game is created by Karl Brenner."),
                    ("Oslund", "Oslund is a German-style board game designed by Karl "
                               "Brenner.")) == "Yes"


def test_the_thirteenth_sets_forms_name_their_two_things() -> None:
    from core.answer.verdict import _asked_plainly

    # the things first, then the question of them
    assert _asked_plainly("West Holm and Tarrow Center, are both of them in Fenn County, "
                          "Virginia?") == "are West Holm and Tarrow Center both in Fenn County, "\
                                          "Virginia?"
    # after a clause saying something of them, a yes/no question, which the verdict leaves
    # to the passages ("were both novels set in Paris?" is of the novels, not the writers)
    stated = "Jan Roe and Ann Doe both wrote debut novels; were both novels set in Paris?"
    assert closed(stated)
    assert _decided(stated, ("Jan Roe", "Jan Roe (born 1970 in Paris) is a novelist."),
                    ("Ann Doe", "Ann Doe is a novelist who lives in Paris.")) is None
    assert _asked_plainly("Moon Hill and Cole Farm, are both towns in Texas?") \
        == "are Moon Hill and Cole Farm both towns in Texas?"
    assert _decided("West Holm and Tarrow Center, are both of them in Fenn County, Virginia?",
                    ("West Holm", "West Holm is an unincorporated community in Fenn County, "
                                  "Virginia, United States."),
                    ("Tarrow Center", "Tarrow Center is a shopping mall in Fenn County, "
                                      "Virginia.")) == "Yes"
    # a name in brackets after another is part of it: two ships, not one and a number
    ships = (("USS Harlow (BB-70)", "USS \"Harlow\" (BB-70) is an \"Iowa\"-class battleship of "
                                    "the United States Navy."),
             ("French battleship Belmont", "Belmont was the second ship of the Courbet-class "
                                           "battleships of the French Navy."))
    assert _decided("Were USS Harlow (BB-70) and the French ship Belmont both battleships?",
                    *ships) == "Yes"
    assert _decided("Were USS Harlow (BB-70) and the French ship Belmont both battleships?",
                    ships[0]) is None  # not No from one ship's passage
    # "Like A, is B ...?" names A, not "Like A"; a title and its subtitle are one name
    assert detect_intent("Like Yazra, is the act that recorded \"Come Over\" a British duo?"
                         ).entities[0] == "Yazra"
    assert detect_intent("Unlike Anyone Else is a film by whom?").entities == [
        "Unlike Anyone Else"]
    assert detect_intent("Were Cow Wars: The Card Game and Moonrise: New Order published by "
                         "the same company?").entities == ["Cow Wars: The Card Game",
                                                          "Moonrise: New Order"]


def test_the_thirteenth_sets_rules_do_not_answer_past_the_passages() -> None:
    # a species is no genus, though its passage names its genus
    assert _decided("Are Eustara and Melthia incana both genera?",
                    ("Eustara", "Eustara is a small genus in the gentian family."),
                    ("Melthia incana", "Melthia incana is a species of flowering plant in the "
                                       "genus Melthia.")) == "No"
    assert _decided("Are Eustara and Melthia both genera?",
                    ("Eustara", "Eustara is a small genus in the gentian family."),
                    ("Melthia", "Melthia is a genus of flowering plants with 50 species.")) \
        == "Yes"
    # born elsewhere, of Irish descent: not born in Ireland, nor Irish by nationality
    writers = (("Sean Dolan", "Sean Dolan (1934 – 2006) is regarded as one of the most "
                              "important Irish writers of his time."),
               ("J. B. Farr", "James Bernard Farr (1935 – 1979) was a Leeds-born novelist of "
                              "Irish descent."))
    assert _decided("Were Sean Dolan and J. B. Farr both born in Ireland?", *writers) != "Yes"
    assert _decided("Were Sean Dolan and J. B. Farr both Irish?", *writers) != "Yes"
    assert _decided("Were Sean Dolan and Mary Kell both born in Ireland?", writers[0],
                    ("Mary Kell", "Mary Kell (born 1950 in Cork, Ireland) is a poet.")) == "Yes"


def test_the_thirteenth_sets_go_betweens_and_grades() -> None:
    from core.answer.verdict import through_another

    # "the islands of Vilna" are Vilna itself, no go-between
    question = "Are the islands of Vilna and Bjarney in the same country?"
    assert not through_another(question, ["Vilna", "Bjarney"])
    assert through_another("Where was the director of Casablanca born?", ["Casablanca"])
    # a yes/no question weighs its two things, not the court it names
    cases = [_page(610, "Reyes v. Holt", "Reyes v. Holt, 98 U.S. 145 (1878), was a Supreme Court "
                   "of the United States case about religious duty."),
             _page(611, "Reyes v. Pegg", "Reyes v. Pegg, 223 F.2d 429 (2nd Cir. 1955), was a "
                   "landmark libel decision of a federal appeals court.")]
    graded = _graded_answer("Were Reyes v. Holt and Reyes v. Pegg both decided by the United "
                            "States Supreme Court?", cases)
    assert graded.evidence is not None and graded.evidence.subjects_needed == 2
    # "first" is what an either-or answer decides, which no passage says
    battles = [_page(612, "Battle of Tarn Creek", "The Battle of Tarn Creek was fought on "
                     "November 7, 1811, in Indiana."),
               _page(613, "Battle of Fallen Oaks", "The Battle of Fallen Oaks (August 20, 1794) "
                     "was the final battle of the Northwest War.")]
    graded = _graded_answer("Which battle took place first, the Battle of Tarn Creek or the "
                            "Battle of Fallen Oaks?", battles)
    assert graded.confidence != Confidence.INSUFFICIENT
    assert graded.evidence is not None and "first" not in graded.evidence.missing_words


async def test_a_birth_name_is_answered_by_the_go_betweens_born_as(embedder: Any) -> None:
    says = functools.partial(_summary, embedder, 620)
    film = ("Fence Line", "Fence Line is a 1945 American western film directed by John Eng and "
                          "starring Ray Rodd, Gabe Hale and Dana Eve. The film was part of the "
                          "long-running series of Ray Rodd films produced by Republic.")
    actress = ("Dana Eve", "Dana Eve (born Lucy Wood Smit; October 31, 1912 – February 7, "
                           "2001) was an American actress, singer, and songwriter.")
    summary = await says("What was the birth name of the actress who starred with Ray Rodd in "
                         "the 1945 film Fence Line?", film, actress)
    assert "Lucy Wood Smit" in summary, summary
    album = ("This Is Us (Rand Tarvis album)", "This Is Us is the ninth studio album by country "
             "music star Rand Tarvis, released on April 26, 1994 by Warner Bros. The tracks "
             "were all released as singles.")
    singer = ("Rand Tarvis", "Rand Bruce Trawick (born May 4, 1959), better known by his stage "
              "name, Rand Tarvis, is an American country music singer. Considered a pivotal "
              "figure in country music, Tarvis broke through in the mid-1980s.")
    summary = await says("What is the real name of the country music star who released the "
                         "album This Is Us in 1994?", album, singer)
    assert "Rand Bruce Trawick" in summary, summary


async def test_a_note_pointing_at_another_page_is_about_nothing(embedder: Any) -> None:
    from core.text import is_hatnote

    note = ("Halla Lund (album)", "\"For the Nobel Prize-winning Icelandic author, see Halla "
                                  "Lund\"")
    assert is_hatnote(note[1]) and not is_hatnote("For years he lived in Oslo, see above.")
    people = (("Gold Mann", "Gold Mann (27 March 1909 – 7 April 1994) was a historian."),
              ("Halla Lund", "Halla Lund (23 April 1902 – 8 February 1998) was an Icelandic "
                             "writer."))
    assert _decided("Who was born first, Gold Mann or Halla Lund?", people[0], note,
                    people[1]) == "Halla Lund"
    summary = await _summary(embedder, 630, "Who was born first, Gold Mann or Halla Lund?",
                             note, *people)
    assert summary.startswith("Halla Lund"), summary


async def test_a_go_between_of_the_named_things_own_name_is_reached(embedder: Any) -> None:
    """"The film Ed Wood is about a filmmaker who died when?": the filmmaker's passage has
    the film's name, yet is another thing than the film the question names."""
    film = ("Eddo Wald (film)", "Eddo Wald is a 1994 American biographical comedy-drama film "
            "directed by Tom Barton, starring Jon Dapp as cult filmmaker Eddo Wald. The film "
            "concerns the period in Wald's life when he made his best-known films.")
    man = ("Eddo Wald", "Edward Davis Wald Jr. (October 10, 1924 – December 10, 1978) was an "
           "American filmmaker, actor and writer.")
    summary = await _summary(embedder, 640, "The 1994 Tom Barton film Eddo Wald is about a cult "
                             "filmmaker who died on what date?", film, man)
    assert "December 10, 1978" in summary, summary
    # a noun before the name with a word between is no kind of it: "the co-creator of X"
    from core.answer.synthesis.extractive import _another_of_its_name

    show = _page(642, "Good Evening, Tampa", "Good Evening, Tampa is a sitcom that ran from "
                 "2002 to 2004 on NBC.")
    assert not _another_of_its_name(" good evening tampa ", show, "When was the co-creator of "
                                    "Good Evening, Tampa born?")
    assert _another_of_its_name(" good evening tampa ", show, "The film Good Evening, Tampa is "
                                "about a sitcom that ran on which network?")
    # ... and only a passage that is the go-between asked of: not a novel of a film's name
    # for "the movie ... directed by a man born when?"
    novel = _page(643, "Glass Road", "Glass Road is a 1950 novel by Anne Taft (born 1921).")
    assert not _another_of_its_name(" glass road ", novel, "The movie Glass Road was "
                                    "directed by a man born in what year?")
    summary = await _summary(embedder, 644, "The movie Glass Road was directed by a man born "
                             "in what year?",
                             ("Glass Road (film)", "Glass Road is a 1962 American drama film "
                              "directed by Carl Benn and starring Ann Roy."),
                             ("Glass Road", "Glass Road is a 1950 novel by Anne Taft (born "
                              "1921), set in Ohio."),
                             ("Carl Benn", "Carl Benn (born 1930) is an American film "
                              "director."))
    assert "1930" in summary and "1921" not in summary, summary


def test_both_from_a_country_is_no_when_the_one_passage_found_is_from_another() -> None:
    italian = ("Hour to Kill (1989 film)", "Hour to Kill is a 1989 Italian drama film starring "
               "Nico Cage.")
    assert _decided("Are Hour to Kill (1989) and Happen to Me (1994) both American films?",
                    italian) == "No"
    assert _decided("Are Hour to Kill (1989) and Happen to Me (1994) both Italian films?",
                    italian) is None  # the other is not known
    # names not read apart ("Hour", "Kill"): no one thing's answer, neither Yes nor No
    assert _decided("Are Hour to Kill and Happen to Me both Italian films?", italian) is None
    # an opening that names two countries, or a joined nationality, is no other country
    for opening in ("Tom Harl is a Mexican-American actor.",
                    "Tom Harl (born 1960 in Toronto, Canada) is an American actor.",
                    "Tom Harl is a Canadian and American actor."):
        assert _decided("Are Tom Harl and Dana Vick both American actors?",
                        ("Tom Harl", opening)) is None


def test_the_fourteenth_sets_descriptions_are_read_where_they_say_what_a_thing_is() -> None:
    # the opening's own kind: "a drama film", though a later sentence names "animated films"
    fritz = ("Fritz the Dog", "Fritz the Dog is a 1972 American adult animated comedy film.")
    crazy = ("Cool and the Mad", "Cool and the Mad is a 1994 American drama film written and "
             "directed by Ralf Bask. The film was Bask's first live-action film, he being "
             "known as a director of animated films.")
    assert _decided("Are Fritz the Dog and Cool and the Mad both animated films?", fritz,
                    crazy) is None  # not Yes; nor No, which "a drama film" does not say
    hiphop = (("Psy Realm", "The Psy Realm is an American hip hop group from Los Angeles. "
                            "Their rap lyrics are political."),
              ("Mad Fangs", "Mad Fangs is an American rap group from Detroit."))
    assert _decided("Psy Realm and Mad Fangs, are they both rap groups?", *hiphop) != "No"
    assert _decided("Are Mingo Sar and Kez Peak both part of the Karakoram mountain range?",
                    ("Mingo Sar", "Mingo Sar is a mountain in the Shimshal valley. The mountain, "
                                  "located in the Karakoram mountain range, is 6050 m high."),
                    ("Kez Peak", "Kez Peak is a mountain in the Karakoram mountain range.")) \
        == "Yes"
    assert _decided("Are Fritz the Dog and Cool and the Mad both American films?", fritz,
                    crazy) == "Yes"
    # said, and denied
    sages = (("Salvia rubra", "Salvia rubra is a species of flowering plant in the genus "
                              "Salvia, known as sages."),
             ("Leucon texana", "Leucon texana is an evergreen shrub in the figwort family. "
                               "Although commonly known as Texas sage, it is not a true sage."))
    assert _decided("Are Salvia rubra and Leucon texana both true sages?", *sages) == "No"
    assert _decided("Is Leucon texana a true sage?", sages[1]) == "No"
    # a player of the instrument: "the bassist", "the bass guitarist"
    players = (("Dyl Keef", "Dyl Keef (born 1970) is the bassist of the rock band Marcy Park."),
               ("Glen Matt", "Glen Matt (born 1956) is an English musician best known as the "
                             "bass guitarist of the punk band the Sex Dolls."))
    assert _decided("Did Dyl Keef and Glen Matt both play bass?", *players) == "Yes"
    assert _decided("Did Dyl Keef and Glen Matt both play drums?", *players) == "No"


def test_the_fourteenth_sets_forms_are_read() -> None:
    # a name its passage gives as "better known as"
    assert _decided("Are Kyuhan and Divya Menn singers of the same nationality?",
                    ("Cho Kyuhan", "Cho Kyu-han (born 1988), better known mononymously as "
                                   "Kyuhan, is a South Korean singer."),
                    ("Divya Menn", "Divya Menn (born 1987) is an Indian singer from Kerala.")) \
        == "No"
    # "sub-range" for "subranges"
    assert _decided("Are Hisar Muz and Yengi both subranges of the Karakoram?",
                    ("Hisar Muz", "Hisar Muz is a sub-range of the Karakoram mountain range."),
                    ("Yengi", "The Yengi range is a Chinese subrange of the Karakoram.")) == "Yes"


def test_names_with_an_ampersand_are_one_name() -> None:
    assert detect_intent("Which chain was founded first, A&V Restaurants or Pickwick "
                         "Pub?").entities == ["A&V Restaurants", "Pickwick Pub"]
    assert _decided("Which chain was founded first, A&V Restaurants or Pickwick Pub?",
                    ("A&V Restaurants", "A&V Restaurants is a chain of fast-food restaurants. "
                                        "Frank Wills founded the first A&V restaurant in 1923."),
                    ("Pickwick Pub", "Pickwick Pub was a chain of casual dining restaurants. The "
                                     "first Pickwick Pub was opened in 1950.")) == "A&V Restaurants"


def test_one_shortfall_is_a_technicality_two_are_low() -> None:
    """An answer whose passages reach what is asked, short only of a passage about a name the
    question gives in passing ("on Night Watch"), is Medium; short of that and of a second
    document for two names, Low."""
    show = _page(650, "Moonbase (TV series)", "Moonbase is an American animated comedy series "
                 "starring Jill Bellamy and Keith Lane.")
    actress = _page(651, "Jill Bellamy", "Jill Bellamy (born April 18, 1984) is an American "
                    "actress, comedian and screenwriter from Las Vegas. She began her career in "
                    "improvised comedy. She had a recurring role as Jillian on the series Night "
                    "Watch.")
    question = "Moonbase starred the actress who had a recurring role as whom on Night Watch?"
    graded = _graded_answer(question, [show, actress])
    assert graded.evidence is not None and graded.evidence.about < graded.evidence.names
    assert graded.confidence == Confidence.MEDIUM
    # one document for both names, one of them without a passage: two shortfalls
    graded = _graded_answer("Did Jill Bellamy play Jillian on Night Watch and Sunday Shift?",
                            [actress])
    assert graded.confidence in (Confidence.LOW, Confidence.INSUFFICIENT)


def test_the_fourteenth_sets_rules_stop_short_of_a_wrong_answer() -> None:
    """A review of this step's rules found each of these answered wrongly; each now is right
    or left unsettled."""
    # a rank only as the head of what the opening says the subject is
    moths = (("Arla vell", "Arla vell is a moth of the family Noctuidae."),
             ("Borra tann", "Borra tann is a moth of the family Erebidae."))
    assert _decided("Are Arla vell and Borra tann both moth species?", *moths) != "No"
    assert _decided("Are Corvo lin and Pica dorn both bird species?",
                    ("Corvo lin", "Corvo lin is a passerine bird in the crow family Corvidae."),
                    ("Pica dorn", "Pica dorn is a species of bird in the crow family.")) != "No"
    # a denial of the subject itself, not of another or of a time
    assert _decided("Is Farnley a city?", ("Farnley", "Farnley is a city in Kent. Farnley was "
                                                      "not a city until 1921.")) != "No"
    assert _decided("Are Farnley and Mork both cities?",
                    ("Farnley", "Farnley is a city in Kent. It borders Mork, which is not a "
                                "city."),
                    ("Mork", "Mork is a city in Essex.")) != "No"
    # part of a range: the whole name, where the subject is in it
    assert _decided("Are Vell Peak and Orr Peak both part of the Rocky Mountains?",
                    ("Vell Peak", "Vell Peak is a volcano in the Cascade Range, 400 km west of "
                                  "the Rocky Mountains."),
                    ("Orr Peak", "Orr Peak is a mountain in the Rocky Mountains.")) != "Yes"
    # "known as" a name, not the start of a longer one
    assert _decided("Who was born first, Madonna Vell or Prince?",
                    ("Madonna Vell", "Madonna Vell (born 1958) is an American singer."),
                    ("Prince Philip", "Philip Mountbatten (1921 – 2021), known as Prince Philip, "
                                      "was the husband of a queen.")) != "Prince"
    # a birthplace is the opening's, not the parents'
    assert _decided("Were Tom Harl and Dana Vick both born in the United States?",
                    ("Tom Harl", "Tom Harl (born 1960) is an American actor. His parents were "
                                 "born in Naples, Italy."),
                    ("Dana Vick", "Dana Vick (born 1962 in Boston, United States) is an "
                                  "actress.")) != "No"
    # a name its passage opens as the start of a longer one is another thing
    assert _decided("Which came first, Dallas or Dynasty?",
                    ("Dallas Cowboys", "The Dallas Cowboys, often known as Dallas, are a "
                                       "professional American football team founded in 1960."),
                    ("Dynasty", "Dynasty is an American prime time television soap opera that "
                                "aired from 1981 to 1989.")) is None
    # a vague relation ("connected to") is no No where each passage names the thing
    assert _decided("Were Mugs Bogs and Ayla Walk both connected to the Charlotte Stingers?",
                    ("Mugs Bogs", "Mugs Bogs (born 1965) is an American retired basketball "
                                  "player. He later served as head coach of the Charlotte "
                                  "Stingers."),
                    ("Ayla Walk", "Ayla Walk (born 1979) is an American basketball player. She "
                                  "signed with the Charlotte Stingers in 2004.")) is None
    # a continent asked of a passage that names countries instead is no No
    asia = "Are Pteros and Dregia both native to Asia?"
    assert _decided(asia, ("Pteros", "Pteros hispa is a species of flowering plant in the family "
                                     "Styracaceae, native to China and Japan."),
                    ("Dregia", "Dregia is a genus of plants native to China.")) is None
    assert _decided(asia, ("Pteros", "Pteros is a genus of flowering plants native to Asia."),
                    ("Dregia", "Dregia is a genus of plants native to the Andes.")) == "No"


# ---- the fifteenth set: makers listed, a go-between not reached, breeds -------------------

def test_makers_are_read_as_the_whole_list_a_passage_gives() -> None:
    # "share a screenwriter": one name in common among three
    films = (("Harrow Gate", "Harrow Gate is a 2017 fantasy film directed by Ivo Brandt and "
                             "written by Brandt, Lena Corr and Mats Velling."),
             ("Salt Road", "Salt Road is an upcoming adventure film directed by Ada Kress and "
                           "written by Lena Corr, Paul Dorne, and Ida Sefton."))
    assert _decided("Do Harrow Gate and Salt Road share a screenwriter?", *films) == "Yes"
    # no name in common: No; a surname alone in common: unsettled
    other = ("Salt Road", "Salt Road is a film written by Paul Dorne and Ida Sefton.")
    assert _decided("Do Harrow Gate and Salt Road share a screenwriter?",
                    films[0], other) == "No"
    namesake = ("Salt Road", "Salt Road is a film written by Ivo Brandt and Ida Sefton.")
    assert _decided("Do Harrow Gate and Salt Road share a screenwriter?",
                    films[0], namesake) is None
    # what the maker is, before its name, is not the maker: "American" in both
    songs = (("Mill Lane", '"Mill Lane" is a song written by Ola Berg and Tim Hale, and '
                           "recorded by American country music artist Wes Dunn."),
             ("River Bend", '"River Bend" is a song written by Ola Berg, and recorded by '
                            "American country music group Pine Creek."))
    assert _decided("Were the songs Mill Lane and River Bend recorded by the same artist?",
                    *songs) == "No"
    # "directed by A and starring B": A alone directed it
    directed = (("Lanes at Dusk", "Lanes at Dusk is a 1943 film directed by Georg Arvo and "
                                  "starring Will Bode."),
                ("Campus Nights", "Campus Nights is a 1938 film directed by Georg Arvo, "
                                  "featuring Betty Gale."))
    assert _decided("Were Lanes at Dusk and Campus Nights directed by the same person?",
                    *directed) == "Yes"


def test_a_weighed_name_may_follow_what_it_is() -> None:
    people = (("Dana Holm", "Dana Holm (born May 16, 1966) is an American singer."),
              ("Jiro Sato", "Jiro Sato (born November 18, 1957) is a Japanese American actor."))
    assert _decided("Is Dana Holm older than actor Jiro Sato?", *people) == "No"
    assert _decided("Is Jiro Sato older than singer Dana Holm?", *people) == "Yes"
    # "before or after" asks which, not whether
    assert _decided("Was Dana Holm born before or after Jiro Sato?", *people) is None


def test_the_same_breed_is_the_most_particular_kind_each_passage_names() -> None:
    question = "Are Rusty Dawg and Fred Hollis the same breed of dog?"
    rusty = ("Rusty Dawg", 'Rusty Dawg is a cartoon character. An adult basset hound, he is '
                           "the enemy of a rooster.")
    assert _decided(question, rusty, ("Fred Hollis", "Fred Hollis is a comic strip about a "
                                                     "male basset hound.")) == "Yes"
    assert _decided(question, rusty, ("Fred Hollis", "Fred Hollis is a comic strip about a "
                                                     "beagle.")) == "No"
    # a dog of no named breed: unsettled
    assert _decided(question, rusty, ("Fred Hollis", "Fred Hollis is a comic strip about a "
                                                     "talking dog.")) is None


async def test_an_answer_short_of_the_go_between_says_so_and_is_low(embedder: Any) -> None:
    from core.answer.synthesis.extractive import stops_short

    director = _page(700, "Tom Arlen", "Tom Arlen (March 2, 1880 – May 9, 1930) was an American "
                     "film director. He directed the 1921 film Harbor Winds. He was married to "
                     "the actress Vera Lund.")
    actress = _page(701, "Vera Lund", "Vera Lund (November 19, 1884 – 1950) was an American "
                    "stage and film actress.")
    # asked of by a clause or by a participle
    for asked in ("who was born on what date?", "born on what date?"):
        question = ("The man who directed the 1921 film Harbor Winds was married to an "
                    f"actress {asked}")
        short = await _answer(embedder, question, [director])
        assert stops_short(short.notes) and "actress" in short.notes[0]
        verified = verify_citations(short, [director])
        graded = grade(verified, [director], detect_intent(question), [], only_local=True,
                       question=question, notes=short.notes)
        assert graded.confidence == Confidence.LOW
        reached = await _answer(embedder, question, [director, actress])
        assert "November 19, 1884" in reached.summary and not stops_short(reached.notes)


def test_an_option_may_be_followed_by_what_it_is() -> None:
    question = ("Who is older, Jan Mroz, the first Pole on the moon, or Luc Brel, the first "
                "Frenchman on the moon?")
    assert either_or(question, detect_intent(question)) == ["Jan Mroz", "Luc Brel"]
    assert _decided(question, ("Jan Mroz", "Jan Mroz (born September 15, 1941) is a Polish "
                                           "cosmonaut."),
                    ("Luc Brel", "Luc Brel (born 20 August 1938) is a French cosmonaut.")
                    ) == "Luc Brel"


async def test_a_go_between_described_in_a_neighbouring_word_is_reached(embedder: Any) -> None:
    from core.answer.synthesis.extractive import stops_short

    # "an English actor" is the actress asked of; "a rock group" the band; "a sitcom" the
    # series
    for question, named, reached in (
            ("Tom Hale is married to an actress born on what date?",
             ("Tom Hale", "Tom Hale (born 1950) is an English director. He is married to Ann "
                          "Lee."),
             ("Ann Lee", "Ann Lee (born March 3, 1970) is an English actor and producer.")),
            ("Bob Kerr played guitar in a band formed in 1985 in what city?",
             ("Bob Kerr", "Bob Kerr (born 1962) is an English guitarist. He played in Kestrel "
                          "Lane."),
             ("Kestrel Lane", "Kestrel Lane were an English rock group formed in Leeds in "
                              "1985.")),
            ("Ann Vell starred in a series that was created by which writer?",
             ("Ann Vell", "Ann Vell (born 1970) is an American actress. She starred in Hollow "
                          "Pines."),
             ("Hollow Pines", "Hollow Pines is an American sitcom created by Sam Hill.")),
            # "first" is no kind of thing
            ("The 1974 film Vell's Dream is based on a novel first published in what year?",
             ("Vell's Dream", "Vell's Dream is a 1974 film based on the novel Ash Garden by "
                              "Ida Orr."),
             ("Ash Garden", "Ash Garden is a 1940 novel by Ida Orr, first published in "
                            "1940."))):
        sources = [_page(730 + n, title, text) for n, (title, text) in enumerate((named,
                                                                                 reached))]
        draft = await _answer(embedder, question, sources)
        assert not stops_short(draft.notes), (question, draft.summary)


def test_the_fifteenth_sets_rules_stop_short_of_a_wrong_answer() -> None:
    # a suffix, a legal form or a place in a list after "by" is no maker the two share
    assert _decided("Were Dark Tide and Long Fall written by the same screenwriter?",
                    ("Dark Tide", "Dark Tide is a 1990 film written by Rob Hale, Jr. and "
                                  "starring Ann Lee."),
                    ("Long Fall", "Long Fall is a 1992 film written by Tom Kemp, Jr. and "
                                  "starring Bo Dahl.")) == "No"
    assert _decided("Were Salt Cove and Iron Bell published by the same publisher?",
                    ("Salt Cove", "Salt Cove is a novel published by Carl Brandt's Sons, New "
                                  "York."),
                    ("Iron Bell", "Iron Bell is a novel published by Harlow and Brothers, New "
                                  "York.")) == "No"
    assert _decided("Were Ridge Runner and Sky Rail developed by the same company?",
                    ("Ridge Runner", "Ridge Runner is a 1995 game developed by Kestrel Soft, "
                                     "Inc. and published by Vanta."),
                    ("Sky Rail", "Sky Rail is a 1996 game developed by Hale Interactive, Inc. "
                                 "and published by Orvo.")) == "No"
    # a maker whose name holds a nationality's word is a maker
    assert _decided("Were Vale Road and Sons of Tarn directed by the same person?",
                    ("Vale Road", "Vale Road is a 1944 western film directed by John English "
                                  "and starring Roy Vell."),
                    ("Sons of Tarn", "Sons of Tarn is a 1942 western film directed by Jo Kane "
                                     "and starring Roy Vell.")) == "No"
    # two full names sharing a surname are two people
    assert _decided("Were Red Dune and Blue Mile directed by the same person?",
                    ("Red Dune", "Red Dune is a 1971 film directed by Luca Ferri."),
                    ("Blue Mile", "Blue Mile is a 1974 film directed by Marco Ferri.")) == "No"
    # words after "than" or "after" that are no description of the second name
    banks = (("Kelso Bank", "Kelso Bank is a bank founded in 1850. In 1921 it merged with the "
                            "Dunmore Trust."),
             ("Dunmore Trust", "Dunmore Trust is a bank founded in 1810."))
    assert _decided("Was Kelso Bank founded before merging with Dunmore Trust?", *banks) is None
    bands = (("Kestrel Lane", "Kestrel Lane is an English rock band formed in Leeds in 2001."),
             ("Hollow Pines", "Hollow Pines was an English rock band formed in Sheffield in "
                              "1990. The band broke up in 2005."))
    assert _decided("Was Kestrel Lane formed after breakup of Hollow Pines?", *bands) is None
    assert _decided("Was Kestrel Lane formed after members of Hollow Pines?", *bands) is None
    # two breeds sharing their kind's word are two breeds
    assert _decided("Are Rex and Max the same breed of dog?",
                    ("Rex", "Rex was a Golden Retriever who starred in films."),
                    ("Max", "Max was a Labrador Retriever owned by a senator.")) == "No"
    assert _decided("Are Rex and Bella the same breed of dog?",
                    ("Rex", "Rex was a German Shepherd police dog. He worked alongside a "
                            "beagle named Sam."),
                    ("Bella", "Bella was a beagle owned by a senator.")) is None
    # a place after a comma is no option; nor is a list of three
    teams = "Which team is based in Dunmore, Ohio, the Kelso Hawks or the Marwick Rams?"
    assert either_or(teams, detect_intent(teams)) == ["Kelso Hawks", "Marwick Rams"]
    films = "Which film came out first, Kestrel Road, the 1998 film, or The Lost Road?"
    assert "1998 film" not in either_or(films, detect_intent(films))
    # a first name that is also an occupation's word stays part of the name
    assert detect_intent("Taylor Vell's debut album was released in what year?"
                         ).entities[:1] == ["Taylor Vell"]
    assert detect_intent("Harper Lund's novel was adapted by which director?"
                         ).entities[:1] == ["Harper Lund"]
    assert detect_intent("Charles Hastings Vell served as Chamberlain to which king?"
                         ).entities[:1] == ["Charles Hastings Vell"]


def test_the_sixteenth_sets_makers_are_read_as_passages_write_them() -> None:
    # an initial is part of a maker's name: "R. K. Dutt" is not the "Dutt" of "Amit Dutt"
    directed = (("Mela Nights", "Mela Nights is a 2009 Bollywood film. The movie was directed "
                                "by Amit Dutt and starred Ravi Kohli."),
                ("Monsoon Road", "Monsoon Road is an Indian drama film written and directed "
                                 "by R. K. Dutt, produced by Asha Rai."))
    assert _decided("Were the Ravi Kohli films Mela Nights and Monsoon Road directed by the "
                    "same person?", *directed) == "No"
    # a list of what else the maker did before "by"
    assert _decided("Were Cold Harbor and Grey Mile directed by the same person?",
                    ("Cold Harbor", "Cold Harbor is a 2011 drama film directed, co-written, "
                                    "and produced by Nils Berg."),
                    ("Grey Mile", "Grey Mile is a 2008 war film. It was directed by Nils "
                                  "Berg, a former pilot.")) == "Yes"
    # the maker named before the two ("Did the same composer write the scores for A and
    # B?"), in the role's own words ("The composer B wrote the score")
    scores = (("Iron Reef", "Iron Reef is a 1991 action film directed by Tom Vale. The "
                            "original score composed by Lars Oden won an award."),
              ("Sand Crown", "Sand Crown is a 1986 adventure film directed by Ed Moss. The "
                             "composer Lars Oden wrote the score."))
    assert _decided("Did the same composer write the scores for Iron Reef and Sand Crown?",
                    *scores) == "Yes"
    # merely named beside the role is not making it
    assert _decided("Did the same composer write the scores for Iron Reef and Sand Crown?",
                    scores[0], ("Sand Crown", "Sand Crown is a 1986 adventure film directed "
                                              "by Ed Moss, who once worked with composer "
                                              "Lars Oden.")) is None
    # what both are based on, by whom
    based = ("Quiet Verdict", "Quiet Verdict is a 1991 legal drama film based on the 1988 "
                              "novel of the same name by Ada Stone.")
    assert _decided("Were Quiet Verdict and Night Brief based on novels by the same author?",
                    based, ("Night Brief", "Night Brief is a 1994 thriller based on the novel "
                                           "of the same name by Carl Ren.")) == "No"
    assert _decided("Were Quiet Verdict and Night Brief both based on stories by the same "
                    "writer?", based,
                    ("Night Brief", "Night Brief is a 1994 thriller. The film is based on an "
                                    "original story by Ada Stone written for its star.")
                    ) == "Yes"


def test_the_sixteenth_sets_sides_are_the_things_the_question_calls_them() -> None:
    # an album after a comma is the album; a title with "and" and a year in brackets
    assert _decided("Are the Mira Dale songs Glass and Paper Moon from the same album?",
                    ("Glass (song)", '"Glass" is a song by English singer Mira Dale from her '
                                     'second studio album, "Tidal" (2012).'),
                    ("Paper Moon (song)", '"Paper Moon" is a song by English singer Mira '
                                          'Dale from her second studio album, "Tidal" '
                                          '(2012).')) == "Yes"
    assert _decided("Were Ruth and the Sea Captain (1950) and The Keeper and I (1962) directed "
                    "by the same person?",
                    ("Ruth and the Sea Captain (film)", "Ruth and the Sea Captain is a 1950 "
                                                        "drama film directed by Ann Ford."),
                    ("The Keeper and I (1962 film)", "The Keeper and I is a 1962 musical "
                                                     "film directed by Bo Lind.")) == "No"
    # "the songs Belle and Evermore": the song, not the character of the same name
    assert _decided("Do the Vell songs Marta and Always share the same lyricist?",
                    ("Marta (Vell)", "Marta is a fictional character who appears in Vell "
                                     "Pictures' animated film with lyrics everywhere."),
                    ("Marta (Vell song)", '"Marta" is a song written by composer Al Moss and '
                                          'lyricist Hal Ash.'),
                    ("Always (Vell song)", '"Always" is a song written by composer Al Moss '
                                           'and lyricist Tim Roe.')) == "No"
    # a band by what passages call it: "the punk trio B" and "the band B"
    assert _decided("Were Rob Tell and Dev Orr members of the same band?",
                    ("Rob Tell", "Rob Tell is an English musician, best known for his part in "
                                 "UK punk trio Glass Owls, who formed in 2003."),
                    ("Dev Orr", "Dev Orr (born 1984) is a British singer. From 2003 to 2006, "
                                "Orr was a member of the band Glass Owls.")) == "Yes"
    # a surname that names a country is no nationality
    assert _decided("Are Tom Holland and Ray Cole both Australian boxers?",
                    ("Tom Holland (boxer)", "Tom Holland (born 1972 in Bendigo) is an "
                                            "Australian professional welterweight boxer."),
                    ("Ray Cole", "Ray Cole (born 1956 in Perth) is an Australian professional "
                                 "middleweight boxer.")) == "Yes"


def test_the_seventeenth_sets_places_parts_and_numbers_are_read() -> None:
    # a part of a place before it: "the downtown area of B, C", "the town of B"
    assert _decided("Are the Vell Farm College and the Vell Owls based in the same city?",
                    ("Vell Farm College", "The Vell Farm College is the oldest farm school in "
                                          "Canada. It is located in Vell, Ontario."),
                    ("Vell Owls", "The Vell Owls are a baseball team based in the downtown "
                                  "area of Vell, Ontario.")) == "Yes"
    assert _decided("Are St Ann's Church and Abbey Green located in the same town?",
                    ("St Ann's Church", "St Ann's Church is a church situated in the centre of "
                                        "the town of Tarnley in the county of Wessex."),
                    ("Abbey Green", "Abbey Green is a public park in the town of Tarnley in "
                                    "the county of Wessex.")) == "Yes"
    assert _decided("Are the Orme Building and the Kell Tower in the same city?",
                    ("Orme Building", "The Orme Building is an office building located at 35 "
                                      "Main Street in the Douglas community area of Chicago, "
                                      "Illinois."),
                    ("Kell Tower", "The Kell Tower is a building located at 12 Fifth Avenue in "
                                   "the borough of Manhattan, New York City.")) == "No"
    # a name's number is part of it: "Flight 185" crashed in 2004, "Flight 9446" in 2003
    assert _decided("Did Vell Air Flight 185 crash before Orme Air Flight 9446?",
                    ("Vell Air Flight 185", "Vell Air Flight 185 was a cargo flight. On "
                                            "August 13, 2004, the flight crashed on approach."),
                    ("Orme Air Flight 9446", "Orme Air Flight 9446 was a repositioning flight. "
                                             "On August 26, 2003 the plane crashed into "
                                             "water.")) == "No"
    # "World War I" and "World War II" are two wars; "Major League Baseball" is no league of
    # its own beside "the American League"
    assert _decided("Did Tom Vell and Ari Orme fly in the same world war?",
                    ("Tom Vell", "Tom Vell (1895 – 1923) was an English World War I flying "
                                 "ace."),
                    ("Ari Orme", "Ari Orme (1914 – 1999) was a fighter pilot who flew in World "
                                 "War II (1939–45).")) == "No"
    assert _decided("Do the Vell Owls and the Orme Hawks play in the same league?",
                    ("Vell Owls", "The Vell Owls are a baseball team who compete in Major "
                                  "League Baseball as a member club of the American League "
                                  "(AL)."),
                    ("Orme Hawks", "The Orme Hawks are a baseball team who compete in Major "
                                   "League Baseball as a member club of the National League "
                                   "(NL).")) == "No"


def test_the_seventeenth_sets_makers_and_works_are_read() -> None:
    # one maker of both
    works = (("Iron Gate", "Iron Gate is a children's novel, co-written by Ada Stone and her "
                           "brother Tom Webb."),
             ("Ash Road", "Ash Road is a series of novels by Ada Stone."))
    assert _decided("Did Ada Stone write both Iron Gate and Ash Road?", *works) == "Yes"
    assert _decided("Did Tom Webb write both Iron Gate and Ash Road?", *works) == "No"
    # "made by B" said by another verb of making, not by "an album by B"
    made = ("Quay Street", "Quay Street is a British drama series. It was produced by Ann Moss "
                           "and directed by Tim Vell for Harbour Television on ITV.")
    assert _decided("Were Quay Street and Low Tide both made by Harbour Television?", made,
                    ("Low Tide", "Low Tide is a British crime series produced by Harbour "
                                 "Television, first broadcast in 2004.")) == "Yes"
    # the second named as what it is ("the 1956 film B"), based on a possessive's work
    assert _decided("Are the 1988 film Vell and the 1956 film Orme based on operas by the same "
                    "composer?",
                    ("Vell (1988 film)", "Vell is a 1988 film of an opera. It is based on "
                                         "Carlo Rossi's \"Vell\"."),
                    ("Orme (1956 film)", "Orme is a 1956 musical film. It is based on the "
                                         "opera \"Orme\" by Carlo Rossi.")) == "Yes"
    # "Sugarland's Stay": the passage its title sets apart by the owner
    stays = (("Stay (Vell song)", '"Stay" is a song by pop act Vell, released in 1992.'),
             ("Stay (Orme song)", '"Stay" is a song recorded by country duo Orme. It was '
                                  'released in 2007.'))
    assert _decided("Were Orme's Stay and Vell's Stay released in the same year?",
                    *stays) == "No"
    # a novel by its short and its whole title may be one novel: not a No
    assert _decided("Are Rossi's Manon and Vell's Manon based on the same novel?",
                    ("Manon (Rossi)", 'Manon is an opera by Carlo Rossi. The story is based on '
                                      'the 1731 novel "The History of Manon" by Jean Abbe.'),
                    ("Manon (Vell)", 'Manon is an opera by Vell, based on the novel "Manon" '
                                     'by Jean Abbe.')) is None


async def test_a_comparison_its_passages_settle_is_not_refused_for_words_said_otherwise(
        embedder: Any) -> None:
    from core.answer.grading import ANSWERING_COVERAGE

    # "members of the same political party" of "an Irish Fine Gael politician": the party
    # each is of, said without the question's words
    question = "Are Tom Ashe and Ann Rell members of the same political party?"
    sources = [_page(760, "Tom Ashe", "Tom Ashe (born 16 August 1955) is an Irish Fine Gael "
                                      "politician and medical doctor."),
               _page(761, "Ann Rell", "Ann Rell (born 1 August 1950) is an Irish Fine Gael "
                                      "politician who has served as a minister since 2016.")]
    draft = await _answer(embedder, question, sources)
    assert draft.summary.startswith("Yes: ")
    verified = verify_citations(draft, sources)
    graded = grade(verified, sources, detect_intent(question), [], only_local=True,
                   question=question, notes=draft.notes)
    assert graded.evidence is not None and graded.evidence.coverage < ANSWERING_COVERAGE
    assert graded.confidence == Confidence.MEDIUM


def test_the_eighteenth_sets_forms_are_read_as_both() -> None:
    # "Is A made with vodka, like B?" and "Was A directed by the same person as B?"
    lakes = (("Lake Vell", "Lake Vell is a lake located in Manitoba, Canada."),
             ("Lake Orme", "Lake Orme is a lake located in Minnesota, United States."),
             ("Lake Hale", "Lake Hale is a lake located in Ontario, Canada."))
    assert _decided("Is Lake Vell located in Canada, like Lake Orme?", *lakes) == "No"
    assert _decided("Is Lake Vell located in Canada, like Lake Hale?", *lakes) == "Yes"
    films = (("Lane of Ash", "Lane of Ash is a 2014 French comedy film directed by Alain Vell "
                             "in his final feature."),
             ("Orme mon amour", "Orme mon amour is a 1959 drama film directed by French film "
                                "director Alain Vell."))
    assert _decided("Was Lane of Ash directed by the same person as Orme mon amour?",
                    *films) == "Yes"
    # "than B, the Irish footballer": what B is, after B
    assert _decided("Is Sam Vell older than Paul Orme, the Northern Irish footballer?",
                    ("Sam Vell", "Sam Vell (born 12 July 1967) is a former footballer."),
                    ("Paul Orme (footballer)", "Paul Orme (born 8 September 1965) is a retired "
                                               "Northern Irish footballer.")) == "No"
    # one player in both, a Yes only where each cast names them
    cast = (("Ash Code", "Ash Code is a 1995 crime film directed by Ian Vell and starring Tom "
                         "Orme, Ann Hale and Ray Dunn."),
            ("Glass Tomb", "Glass Tomb is a 2001 action film featuring the character Lara "
                           "Vane portrayed by Ann Hale."))
    assert _decided("Did Ann Hale appear in both Ash Code and Glass Tomb?", *cast) == "Yes"
    assert _decided("Did Tom Orme appear in both Ash Code and Glass Tomb?", *cast) is None


def test_the_eighteenth_sets_values_are_read_where_passages_give_them() -> None:
    # of two passages titled alike, the one that gives it: the film, not the man
    assert _decided("Were Grab and Ed Vell directed by the same person?",
                    ("Ed Vell", "Ed Vell (1924 – 1978) was an American filmmaker."),
                    ("Grab (film)", "Grab is a 2000 British crime film written and directed "
                                    "by Guy Orme."),
                    ("Ed Vell (film)", "Ed Vell is a 1994 American film directed and produced "
                                       "by Tim Hale.")) == "No"
    # what one is known for a passage may say otherwise or not at all: never a No
    assert _decided("Are Tara Vell and Yuri Orme both known for voice work?",
                    ("Tara Vell", "Tara Vell (born 1973) is a Canadian actress who has done "
                                  "voice work for numerous animations."),
                    ("Yuri Orme", "Yuri Orme (born 1971) is an American actor known chiefly "
                                  "for his voice work in anime.")) is None
    # "released in 1994 on B by the band C": the label, the band after "by" aside
    assert _decided("Were Ungo and Cold Wire released on the same record label?",
                    ("Ungo", "Ungo is the debut album released in 1994 on Columbia Records by "
                             "the American rock band Vell."),
                    ("Cold Wire", "Cold Wire is the debut album from American rock band Orme. "
                                  "It was released in 1988 on Atlantic Records.")) == "No"


def test_the_eighteenth_sets_rules_stop_short_of_a_wrong_answer() -> None:
    # a league's nationality is part of its name; both wars in one sentence settle nothing
    assert _decided("Do the Vell Owls and the Orme Hawks play in the same league?",
                    ("Vell Owls", "The Vell Owls are a team who played in the American "
                                  "Football League (AFL)."),
                    ("Orme Hawks", "The Orme Hawks are a team who play in the Australian "
                                   "Football League (AFL).")) == "No"
    assert _decided("Did Hugh Vell and Ron Orme fight in the same war?",
                    ("Hugh Vell", "Hugh Vell (1890 – 1960) was an English officer who served "
                                  "in World War I and World War II."),
                    ("Ron Orme", "Ron Orme (1915 – 1990) was an English officer who served in "
                                 "World War II.")) is None
    # a surname naming a country is removed only where it ends the name
    assert _decided("Are Tom Ireland and Sean Vell from the same country?",
                    ("Tom Ireland", "Tom Ireland (born 1990 in Cork, Ireland) is a footballer "
                                    "who played in France."),
                    ("Sean Vell", "Sean Vell (born 1988) is an Irish footballer.")) == "Yes"
    # the band named so before a trio of another kind; a comedy trio is no band
    band = ("Dev Orr", "Dev Orr (born 1984) is a British singer, a member of the band Velvet "
                       "Arcade.")
    assert _decided("Were Rob Tell and Dev Orr members of the same band?",
                    ("Rob Tell", "Rob Tell is an English producer, a member of the production "
                                 "trio The Nightshift, and the lead singer of the band Velvet "
                                 "Arcade."), band) == "Yes"
    assert _decided("Were Rob Tell and Dev Orr members of the same band?",
                    ("Rob Tell", "Rob Tell is an English comedian, a member of the comedy "
                                 "trio Velvet Arcade."), band) is None
    # one town name in two states is two towns
    assert _decided("Are the Vell Block and the Orme House located in the same city?",
                    ("Vell Block", "The Vell Block is a building in the town of Springfield, "
                                   "Oregon."),
                    ("Orme House", "The Orme House is a house in Springfield, Illinois, United "
                                   "States.")) == "No"
    # distributing is not making; "based on the novel B and directed by C" names no author
    assert _decided("Were Harbor Nine and Low Tide both made by Orme Pictures?",
                    ("Harbor Nine", "Harbor Nine is a film produced by Vell Entertainment and "
                                    "distributed by Orme Pictures."),
                    ("Low Tide", "Low Tide is a film produced by Orme Pictures.")) != "Yes"
    assert _decided("Were Dark Harbor and Cold Light based on novels by the same author?",
                    ("Dark Harbor (film)", "Dark Harbor is a 1998 film based on the novel "
                                           "Night Tide and directed by Ron Vell."),
                    ("Cold Light (film)", "Cold Light is a 2001 film based on the novel "
                                          "Winter Kill and directed by Ron Vell.")) is None
    # a year in brackets picks the passage of that year
    assert _decided("Were Romeo and Juliet (1968) and Hamlet (1990) directed by the same "
                    "person?",
                    ("Romeo and Juliet (1936 film)", "Romeo and Juliet is a 1936 film "
                                                     "directed by George Vell."),
                    ("Romeo and Juliet (1968 film)", "Romeo and Juliet is a 1968 film "
                                                     "directed by Franco Orme."),
                    ("Hamlet (1990 film)", "Hamlet is a 1990 film directed by Franco "
                                           "Orme.")) == "Yes"
    # "than B, the Irish footballer" of a passage about another B settles nothing
    assert _decided("Is Colin Vell older than Paul Orme, the Irish footballer?",
                    ("Colin Vell", "Colin Vell (born 1960) is an Irish footballer."),
                    ("Paul Orme", "Paul Orme (born 1955) is an Australian singer.")) is None
    # a surname alone may be another's; of two passages titled alike, either one's maker
    works = (("Carrow", "Carrow is a 1990 film written by Lou Cole, based on Stephen Vell's "
                        "novel."),
             ("Carrow (novel)", "Carrow is a 1985 novel by Stephen Vell."),
             ("The Burning Year", "The Burning Year is a 1988 novel by Stephen Vell."))
    assert _decided("Did Stephen Vell write both Carrow and The Burning Year?", *works) == "Yes"
    assert _decided("Did John Orme compose both Iron Sky and Low Road?",
                    ("Iron Sky", "Iron Sky is a 1965 film score composed by John Orme."),
                    ("Low Road", "Low Road is a 1970 song composed by Orme, a Welsh session "
                                 "musician.")) is None
    # a cast is who stars, not who a film is dedicated to or whose songs it plays
    cast = ("Red Line", "Red Line is a 2004 action film starring Chris Vell.")
    for other in ("Big Live is a TV special. Its soundtrack features tracks played by Chris "
                  "Vell on his radio show.",
                  "Big Live is a 2005 film starring Brad Orme, and dedicated to Chris Vell.",
                  "Big Live is a 2005 film. Chris Vell was originally cast but withdrew."):
        assert _decided("Did Chris Vell appear in both Red Line and Big Live?", cast,
                        ("Big Live", other)) is None, other
    # likening or weighing against a thing that is no name
    assert _decided("Was Marta Vell born in a European capital, like Paris?",
                    ("Marta Vell", "Marta Vell (born 1970 in Lyon) is a French singer."),
                    ("Paris", "Paris is the capital of France.")) is None
    assert _decided("Was Marnie released by the same studio as Vertigo's sequel?",
                    ("Marnie", "Marnie is a 1964 film released by Vell Studios."),
                    ("Vertigo", "Vertigo is a 1958 film released by Orme Pictures.")) is None


def test_a_province_gives_its_country() -> None:
    assert _decided("Are Vell International Airport and Orme Airport located in the same "
                    "country?",
                    ("Vell International Airport", "Vell International Airport is the "
                                                   "primary airport serving the city of Vellore "
                                                   "in Tamil Nadu."),
                    ("Orme Airport", "Orme Airport is a major Australian regional airport.")
                    ) == "No"


async def test_a_thing_of_the_same_name_is_the_go_between(embedder: Any) -> None:
    # "a video game based on the 2004 film of the same name": the film's passage is the
    # second hop, though both passages are titled alike
    question = "Who directed the film on which the Vell video game is based?"
    sources = [_page(770, "Vell (video game)", "Vell is an action video game based on the "
                                               "2004 film of the same name."),
               _page(771, "Vell (film)", "Vell is a 2004 American action film directed by "
                                         "Ann Orme.")]
    draft = await _answer(embedder, question, sources)
    verified = verify_citations(draft, sources)
    graded = grade(verified, sources, detect_intent(question), [], only_local=True,
                   question=question, notes=draft.notes)
    assert "Ann Orme" in f"{draft.summary} {draft.detail}"
    assert graded.confidence != Confidence.INSUFFICIENT, graded.limitations
