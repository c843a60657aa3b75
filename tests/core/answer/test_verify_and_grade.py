import pytest

from core.answer.citations import verify_citations
from core.answer.grading import grade
from core.answer.synthesis.base import Draft
from core.models import Citation, Confidence, Source, SourceFailure, SourceMetadata
from core.research.intake import detect_intent

pytestmark = pytest.mark.unit


def _source(n: int, text: str, document: str, relevance: float = 0.7) -> Source:
    return Source(id=f"s{n}", title=f"Doc {document}", path=f"/kb/{document}.md",
                  location="Intro", content=text, document_id=document,
                  metadata=SourceMetadata(relevance=relevance, provider="local"))


SOURCES = [
    _source(1, "Cats sleep 12 to 16 hours a day.", "a"),
    _source(2, "Kittens sleep even longer than adult cats.", "b"),
    _source(3, "Cats are crepuscular.", "c"),
]


def test_markers_are_renumbered_and_unknown_ones_removed() -> None:
    draft = Draft(
        summary="Cats sleep 12 to 16 hours a day [1].",
        detail="Kittens sleep even longer [2, 9]. Cats fly [7].",
        citations=[
            Citation(claim="a", source_id="s1", quote="Cats sleep 12 to 16 hours a day."),
            Citation(claim="b", source_id="s2", quote="Kittens sleep even longer"),
            Citation(claim="c", source_id="invented", quote="Cats fly"),
        ],
    )
    verified = verify_citations(draft, SOURCES)
    assert verified.summary == "Cats sleep 12 to 16 hours a day [1]."
    assert verified.detail == "Kittens sleep even longer [2]. Cats fly."
    assert [r.source_id for r in verified.references] == ["s1", "s2"]
    assert [r.number for r in verified.references] == [1, 2]
    assert verified.unknown_markers_removed == 3  # [9], [7] and the invented source id
    assert [c.source_id for c in verified.citations] == ["s1", "s2"]


def test_numbering_follows_first_use_and_unsupported_quotes_are_removed() -> None:
    draft = Draft(
        summary="Crepuscular [3].", detail="Long sleep [1].",
        citations=[Citation(claim="x", source_id="s3", quote="Cats are crepuscular."),
                   Citation(claim="y", source_id="s1", quote="Cats sleep all week.")],
    )
    verified = verify_citations(draft, SOURCES)
    assert verified.summary == "Crepuscular [1]." and verified.detail == "Long sleep [2]."
    assert [r.source_id for r in verified.references] == ["s3", "s1"]
    assert verified.unsupported_citations_removed == 1


def test_confidence_follows_the_evidence() -> None:
    question = "How long do kittens and cats sleep?"
    intent = detect_intent(question)
    two = verify_citations(Draft(summary="A [1]. B [2].", citations=[
        Citation(claim="a", source_id="s1", quote="Cats sleep"),
        Citation(claim="b", source_id="s2", quote="Kittens sleep")]), SOURCES)
    graded = grade(two, SOURCES, intent, [], only_local=True, question=question)
    assert graded.confidence == Confidence.HIGH

    one = verify_citations(Draft(summary="A [1].", citations=[
        Citation(claim="a", source_id="s1", quote="Cats sleep")]), SOURCES)
    graded = grade(one, SOURCES, intent, [], only_local=True, question=question)
    confidence, limitations = graded.confidence, graded.limitations
    assert confidence == Confidence.MEDIUM
    assert any("single document" in item for item in limitations)
    # "kittens" is a common word: Medium, not High, without a limitation naming it
    assert not any("kittens" in item for item in limitations)

    weak = [_source(1, "Cats sleep.", "a", relevance=0.36)]
    low = verify_citations(Draft(summary="A [1].", citations=[]), weak)
    graded = grade(low, weak, intent, [], only_local=True, question=question)
    assert graded.confidence == Confidence.LOW

    nothing = verify_citations(Draft(summary="No answer."), SOURCES)
    failure = SourceFailure(source="web", query="q", reason="timed out after 10 s",
                            kind="timeout")
    graded = grade(nothing, SOURCES, intent, [failure], only_local=False)
    confidence, limitations = graded.confidence, graded.limitations
    assert confidence == Confidence.INSUFFICIENT
    assert "Web did not answer in time, so its results are missing from this answer." \
        in limitations


def test_two_named_people_each_with_a_passage_are_not_low_for_a_loose_match() -> None:
    question = "Who was born first, Ilse Varga or Tomas Edberg?"
    people = [
        Source(id="s1", title="Ilse Varga", path="/kb/varga.md", document_id="varga",
               content="Ilse Varga (born 3 May 1950) is a Hungarian painter.",
               metadata=SourceMetadata(relevance=0.33, provider="local")),
        Source(id="s2", title="Tomas Edberg", path="/kb/edberg.md", document_id="edberg",
               content="Tomas Edberg (born 9 June 1961) is a Swedish sailor.",
               metadata=SourceMetadata(relevance=0.31, provider="local"))]
    cited = verify_citations(Draft(summary="Ilse Varga [1] [2].", citations=[
        Citation(claim="a", source_id="s1", quote="Ilse Varga (born 3 May 1950)"),
        Citation(claim="b", source_id="s2", quote="Tomas Edberg (born 9 June 1961)")]), people)
    graded = grade(cited, people, detect_intent(question), [], only_local=True,
                   question=question)
    assert graded.confidence == Confidence.MEDIUM
    # one of them only: the loose match stays Low
    one = verify_citations(Draft(summary="Ilse Varga [1].", citations=[
        Citation(claim="a", source_id="s1", quote="Ilse Varga (born 3 May 1950)")]), people)
    graded = grade(one, people, detect_intent(question), [], only_local=True,
                   question=question)
    assert graded.confidence in (Confidence.LOW, Confidence.INSUFFICIENT)


def test_a_lifes_dates_in_brackets_say_when_it_began_and_ended() -> None:
    from core.answer.grading import weigh

    question = "When did the author of The Quiet Room die?"
    cited = [
        Source(id="s1", title="The Quiet Room", path="/kb/room.md", document_id="room",
               content="The Quiet Room is a one-act play by American playwright Ed Albin.",
               metadata=SourceMetadata(relevance=0.6, provider="local")),
        Source(id="s2", title="Ed Albin", path="/kb/albin.md", document_id="albin",
               content="Ed Albin (March 12, 1928 – September 16, 2016) was an American "
                       "playwright.", metadata=SourceMetadata(relevance=0.6, provider="local"))]
    assert "die" not in weigh(cited, detect_intent(question), question).missing_words
    # a single year in brackets is no life: the death is not given
    cited[1] = cited[1].model_copy(update={"content": "Ed Albin (born 1928) is a playwright."})
    assert "die" in weigh(cited, detect_intent(question), question).missing_words
