from datetime import UTC, datetime

import pytest

from core.errors import InvalidQuestionError
from core.models import QuestionType
from core.research.intake import detect_intent, validate_question

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("x" * 2001, "2,001 characters"),
        ("what is\x07this", "control characters"),
        ("what\x00is", "binary"),
        ("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        ("?!?!", "no words"),
        ("\ud800 cats", r"not text \(U\+D800\)"),  # JSON's "\ud800": no UTF-8 text holds it
        ("why do \udc00 cats \udbff purr", r"not text \(U\+DC00, U\+DBFF\)"),
    ],
)
def test_bad_questions_get_a_clear_message(text: str, message: str) -> None:
    with pytest.raises(InvalidQuestionError, match=message):
        validate_question(text)


def test_a_good_question_is_trimmed() -> None:
    assert validate_question("  How long do cats   sleep?\n") == "How long do cats sleep?"
    assert validate_question("x" * 2000) == "x" * 2000


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How long do cats sleep?", QuestionType.FACTUAL),
        ("asyncio.gather vs TaskGroup", QuestionType.COMPARISON),
        ("What is the difference between green tea and black tea?", QuestionType.COMPARISON),
        ("Why does the GIL exist?", QuestionType.EXPLANATION),
        ("What is the latest news on the Linux kernel?", QuestionType.CURRENT_EVENT),
    ],
)
def test_question_types(question: str, kind: QuestionType) -> None:
    assert detect_intent(question).question_type == kind


def test_entities_time_and_language() -> None:
    now = datetime(2026, 11, 21, tzinfo=UTC)
    intent = detect_intent('Compare PostgreSQL and MySQL releases since 2020', now)
    assert intent.entities == ["PostgreSQL", "MySQL"]
    assert intent.time_constraint is not None and intent.time_constraint.start_year == 2020
    assert intent.time_constraint.end_year is None
    assert detect_intent('What does "os.path.join" do?').entities == ["os.path.join"]
    assert detect_intent("Pourquoi le ciel est-il bleu ?").language == "fr"
    assert detect_intent("What happened in 2026?", now).question_type == QuestionType.CURRENT_EVENT
    assert "long" not in detect_intent("How long do cats sleep?").key_terms


def test_a_name_opening_the_question_is_kept_and_a_trailing_nationality_split_off() -> None:
    from core.research.intake import detect_intent

    assert detect_intent("Korvatind and Storhorn are both in which range?").entities[:1] == [
        "Korvatind"]
    assert detect_intent("Which Italian painter was born first?").entities == ["Italian"]
    assert detect_intent("Are both Anna Lindqvist and Pierre Dufresne American?").entities == [
        "Anna Lindqvist", "Pierre Dufresne", "American"]
    assert detect_intent("Who governed the Bank of England?").entities == ["Bank of England"]


def test_a_name_keeps_its_initials() -> None:
    from core.research.intake import detect_intent

    assert detect_intent("Were Tomas H. Berglund and Anna Lindqvist of the same "
                         "nationality?").entities == ["Tomas H. Berglund", "Anna Lindqvist"]


def test_names_keep_their_apostrophes_and_small_inner_words() -> None:
    question = "Who was born first, Inés Molinar y Ortega or P. J. O'Donnell?"
    assert detect_intent(question).entities == ["Inés Molinar y Ortega", "P. J. O'Donnell"]
    assert detect_intent("Was Pieter van der Hoeven older than Jan van Aalst?").entities == [
        "Pieter van der Hoeven", "Jan van Aalst"]
    assert detect_intent("Is Bram's parser faster?").entities == ["Bram"]  # a possessive


def test_a_kind_of_record_before_a_title_is_not_part_of_it() -> None:
    question = "In which city was the band that released the EP Songs from the Attic formed?"
    assert detect_intent(question).entities[0] == "Songs"
    assert detect_intent("Is EP Daily a show?").entities == ["EP Daily"]  # a name's own word


def test_an_occupation_opening_the_question_is_no_part_of_the_name() -> None:
    assert detect_intent("Songwriter Janna Vell's sister Sara dated which singer?"
                         ).entities[:1] == ["Janna Vell"]
    assert detect_intent("Footballer Joe Marsk plays for which team?").entities == ["Joe Marsk"]
    # a title of address, or a word for a person that opens a name, stays
    assert detect_intent("General Motors was founded when?").entities == ["General Motors"]
    assert detect_intent("Queen Elizabeth II was born when?").entities == ["Queen Elizabeth II"]
    assert detect_intent("Boy George was born where?").entities == ["Boy George"]


def test_a_title_with_a_or_an_inside_is_one_name() -> None:
    # "About a Boy", "Portrait of a Lady", "Girl with a Pearl Earring"; not "Obama a Democrat"
    assert "About a Tide" in detect_intent(
        "The singer who made the soundtrack album About a Tide was born in which town?").entities
    assert detect_intent("Who wrote The Portrait of a Vell?").entities == ["The Portrait of a Vell"]
    assert detect_intent("Was Girl with a Pearl Orme painted by Vell?").entities == [
        "Girl with a Pearl Orme", "Vell"]
    assert detect_intent("Is Vell a Democrat?").entities == ["Vell", "Democrat"]
