"""Sources that disagree: the detector on hand-written passages, and through the research
pipeline (embedded default, no model) the answer's limitations name the disagreement with
both values and their reference numbers, and the confidence is capped at Low."""

from pathlib import Path
from typing import Any

import pytest

from bot.wiring import build_jobs, build_research, local_sources
from core.answer.citations import verify_citations
from core.answer.conflicts import Passage, disagreements
from core.answer.grading import Grade, grade
from core.answer.synthesis.base import Draft
from core.config import PipelineSettings
from core.models import Citation, Confidence, ResearchRequest, Source, SourceMetadata
from core.research.intake import detect_intent
from tests.support.job_client import JobClient

pytestmark = pytest.mark.unit


def _found(*passages: tuple[str, str]) -> list[Any]:
    return disagreements([Passage(f"p{n}", title, text)
                          for n, (title, text) in enumerate(passages, 1)])


def test_two_founding_years_for_one_college_disagree() -> None:
    found = _found(
        ("Harwick College", "Harwick College is a college in Vermont. It was founded in 1713."),
        ("Harwick College", "Harwick College, a private school, was founded in 1731."))
    assert len(found) == 1
    assert found[0].disputed == "the year Harwick College was founded"
    assert found[0].values == (("1713", ("p1",)), ("1731", ("p2",)))


@pytest.mark.parametrize(("first", "second", "disputed"), [
    ("Ilse Marendt (born 4 March 1962) is a German cellist.",
     "Ilse Marendt was born on March 14, 1962 in Leipzig.", "the date Ilse Marendt was born"),
    ("The Kessler Tower is 212 metres tall.", "The Kessler Tower is 187 metres tall.",
     "the height of Kessler Tower"),
    ("The Kessler Tower is 150 m tall.", "The Kessler Tower is 620 feet tall.",
     "the height of Kessler Tower"),
    ("Night Orchard is a 1998 thriller directed by Paul Brennan.",
     "Night Orchard was directed by Simon Achterberg.", "who directed Night Orchard"),
    ("Porto Vell has a population of 1.4 million.", "Porto Vell has a population of 2.1 million.",
     "the population of Porto Vell"),
])
def test_different_values_of_one_attribute_disagree(first: str, second: str,
                                                     disputed: str) -> None:
    title = second.split(" was ")[0].split(" is ")[0].split(" has ")[0].removeprefix("The ")
    found = _found((title, first), (title, second))
    assert [d.disputed for d in found] == [disputed]


@pytest.mark.parametrize(("first", "second"), [
    # the same value written differently
    ("Ilse Marendt (born 4 March 1962) is a cellist.", "Ilse Marendt was born on March 4, 1962."),
    ("Millbrook has a population of 2184.", "Millbrook has a population of 2,184."),
    ("Porto Vell has a population of 1.2 million.", "Porto Vell has a population of 1,200,000."),
    ("The Varda River is 412 km long.", "The Varda River is 412,000 metres long."),
    ("The Kessler Tower is 212 metres tall.", "The Kessler Tower is 696 feet tall."),
    # rounding and hedges
    ("The population was 3,677 at the 2010 census.",
     "At the 2010 census, the town had a population of about 3,700."),
    ("Tomas Aldana was born in 1938.", "Tomas Aldana (born 17 October 1938) is a poet."),
    # another attribute, another census, a release elsewhere, a span
    ("Tomas Aldana was born in 1938.", "Tomas Aldana died in 2009."),
    ("The population was 2,184 at the 2010 census.",
     "The population was 2,530 at the 2020 census."),
    ("The Salt Road was released on 3 June 2004 in Japan.",
     "The Salt Road was released in 2005 in the United States."),
    ("The bridge was built between 1931 and 1936.", "The bridge was completed in 1936."),
    # someone else in the sentence
    ("Clara Voss was born in 1972.", "Clara Voss's daughter Mira was born in 2001."),
    ("Marguerite Oswin was born in 1881.", "Marguerite Oswin married Henry Blake, who was born "
     "in 1875."),
    ("Harwick College was founded in 1713.", "The library at Harwick College was founded in "
     "1850."),
    # what real paragraphs say of their subject beside the attribute (errors once made on the
    # HotpotQA paragraphs): a year after the opening "Born in ...,", what the subject founded
    # or released, a later release or one on DVD, the end of a span
    ("Clara Voss (born 3 May 1972) is a painter.",
     "Born in Kyoto, Clara Voss joined the academy in 1990."),
    ("Clara Voss was founded in 1972.", "Clara Voss later founded the Voss Gallery in 2000."),
    ("Clara Voss released their first album on 3 March 2011.",
     "Clara Voss was released on 4 May 2010."),
    ("The Salt Road was released on 3 June 2004.",
     "The Salt Road was released on DVD on 5 May 2005."),
    ("The Salt Road was published in 1936.", "The Salt Road was later published in 1951."),
    ("The Salt Road was published in 1985.",
     "The Salt Road was published by a society from 1985 to 1989."),
])
def test_agreeing_or_different_things_do_not_disagree(first: str, second: str) -> None:
    assert _found(("Subject", first), ("Subject", second)) == []


def test_namesakes_and_longer_names_are_other_things() -> None:
    assert _found(("John Carver (footballer)", "John Carver (born 16 January 1965) is a coach."),
                  ("John Carver (politician)", "John Carver (born 2 August 1948) is a senator.")
                  ) == []
    assert _found(("Warren Haldane", "Warren Haldane (born 1930) is an investor."),
                  ("Howard Warren Haldane", "Howard Warren Haldane (born 1983) is a professor.")
                  ) == []
    assert _found(("Zephyr OS", "Zephyr OS 1 was released in 2009."),
                  ("Zephyr OS", "Zephyr OS 2 was released in 2011.")) == []


def test_a_person_and_a_film_with_years_are_not_one_thing() -> None:
    assert _found(("Ann Lee", "Ann Lee (born 5 May 1950) is a Norwegian film director."),
                  ("Blue Moon", "Blue Moon is a 1990 film directed by Ann Lee. It was released "
                   "in 1990.")) == []


def test_what_the_question_names_comes_first() -> None:
    found = disagreements([
        Passage("a", "Kingsmere station", "Kingsmere station opened in 1874."),
        Passage("b", "Kingsmere station", "Kingsmere station opened in 1847."),
        Passage("c", "Harwick College", "Harwick College was founded in 1713."),
        Passage("d", "Harwick College", "Harwick College was founded in 1731."),
    ], question="When was Harwick College founded?")
    assert [d.subject for d in found] == ["Harwick College", "Kingsmere station"]


def _graded(cited: list[Source], found: list[Source], question: str) -> Grade:
    """The grade of an answer citing `cited` (passage markers in their order) among `found`."""
    numbers = {s.id: n for n, s in enumerate(found, 1)}
    verified = verify_citations(Draft(summary=" ".join(
        f"{s.content} [{numbers[s.id]}]." for s in cited), citations=[
        Citation(claim=s.content, source_id=s.id, quote=s.content[:20]) for s in cited]),
        found)
    return grade(verified, found, detect_intent(question), [], only_local=True,
                 question=question)


def _kb(*pages: tuple[str, str, str]) -> list[Source]:
    return [Source(id=f"s{n}", title=title, path=f"/kb/{document}.md", content=text,
                   document_id=document, metadata=SourceMetadata(relevance=0.8))
            for n, (document, title, text) in enumerate(pages, 1)]


def test_only_the_documents_the_answer_cites_are_weighed() -> None:
    question = "When was Harwick College founded?"
    found = _kb(("a", "Harwick College", "Harwick College in Vermont was founded in 1713."),
                ("b", "Harwick College", "Harwick College, a Vermont school, was founded in 1731."),
                ("c", "Harwick College", "Harwick College in Vermont admits about 900 students."))
    both = _graded([found[0], found[1]], found, question)
    assert "Sources disagree on the year Harwick College was founded: 1713 [1] vs 1731 [2]." \
        in both.limitations
    assert both.confidence == Confidence.LOW and both.trace()["disagreements"] == 1
    one = _graded([found[0], found[2]], found, question)  # the 1731 passage is not cited
    assert not any("disagree" in line for line in one.limitations)


def test_two_passages_of_one_document_are_not_sources_disagreeing() -> None:
    question = "When was Harwick College founded?"
    found = _kb(("a", "Harwick College", "Harwick College in Vermont was founded in 1713."),
                ("a", "Harwick College", "Harwick College, a Vermont school, was founded in 1731."),
                ("c", "Harwick College", "Harwick College in Vermont was founded in 1713."))
    graded = _graded(found, found, question)
    assert not any("disagree" in line for line in graded.limitations)


DISAGREEING = {
    "history.md": "# Harwick College\n\nHarwick College is a small liberal arts college in "
    "Vermont. Harwick College was founded in 1713 by the merchant John Harwick, and its "
    "library holds his letters.\n",
    "guide.md": "# Harwick College\n\nHarwick College, a liberal arts college in Vermont, was "
    "founded in 1731. Harwick College admitted its first women students in 1969.\n",
}


async def _ask(tmp_path: Path, knowledge_base: Any, engine: Any, embedder: Any,
               documents: dict[str, str], question: str) -> Any:
    folder = tmp_path / "kb"
    folder.mkdir()
    for name, text in documents.items():
        (folder / name).write_text(text)
    await knowledge_base.index([folder], "t1")
    research = build_research(local_sources(knowledge_base, PipelineSettings()), embedder,
                              PipelineSettings())
    client = JobClient(build_jobs(research, engine, progress_interval_s=0.0))
    return await client.run(ResearchRequest(question=question, tenant="t1"))


async def test_an_answer_from_disagreeing_documents_says_so_and_is_low(
    tmp_path: Path, knowledge_base: Any, sqlite_engine: Any, embedder: Any
) -> None:
    result = await _ask(tmp_path, knowledge_base, sqlite_engine, embedder, DISAGREEING,
                        "When was Harwick College founded?")
    numbers = {Path(ref.where.split(" (")[0]).name: ref.number for ref in result.references}
    assert set(numbers) == {"history.md", "guide.md"}
    wanted = (f"Sources disagree on the year Harwick College was founded: "
              f"1713 [{numbers['history.md']}] vs 1731 [{numbers['guide.md']}].")
    wanted_other_way = (f"Sources disagree on the year Harwick College was founded: "
                        f"1731 [{numbers['guide.md']}] vs 1713 [{numbers['history.md']}].")
    assert wanted in result.answer.limitations or wanted_other_way in result.answer.limitations
    assert result.answer.confidence == Confidence.LOW


async def test_agreeing_documents_raise_no_disagreement(
    tmp_path: Path, knowledge_base: Any, sqlite_engine: Any, embedder: Any
) -> None:
    agreeing = {**DISAGREEING, "guide.md": DISAGREEING["guide.md"].replace(
        "founded in 1731", "founded in 1713")}
    result = await _ask(tmp_path, knowledge_base, sqlite_engine, embedder, agreeing,
                        "When was Harwick College founded?")
    assert len(result.references) == 2
    assert not any("disagree" in line for line in result.answer.limitations)
    assert result.answer.confidence != Confidence.LOW
