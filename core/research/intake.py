"""Intake: validate a question and read its intent with heuristics (no model needed)."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

from core.answer.lexicon import is_word, lexicon
from core.countries import (
    countries_in,
    home_nations_in,
    is_nationality,
    is_region,
    region_after,
)
from core.errors import InvalidQuestionError
from core.models import ConversationTurn, Depth, QueryIntent, QuestionType, TimeConstraint
from core.text import CAPITAL, LEGAL_FORMS, STOPWORDS, terms, unstorable_characters

MAX_QUESTION_CHARS = 2000
MAX_CONTEXT_CHARS = 2000


def validate_question(text: str, max_chars: int = MAX_QUESTION_CHARS,
                      what: str = "question") -> str:
    """The question (or other text the user typed, named by `what`), trimmed;
    InvalidQuestionError (with a message for the user) otherwise."""
    if "\x00" in text or "\ufffd" in text or _mostly_unprintable(text):
        raise InvalidQuestionError(
            f"The {what} contains binary data, not text. Please type it as plain text."
        )
    question = validate_text(text, what).strip()
    if not question:
        raise InvalidQuestionError(f"The {what} is empty. Please type something.")
    if len(question) > max_chars:
        raise InvalidQuestionError(
            f"The {what} is {len(question):,} characters long; the limit is {max_chars:,}. "
            "Please shorten it."
        )
    controls = sorted({f"U+{ord(c):04X}" for c in question if _is_control(c)})
    if controls:
        raise InvalidQuestionError(
            f"The {what} contains control characters ({', '.join(controls[:5])}). "
            "Please remove them and ask again."
        )
    if not any(c.isalnum() for c in question):
        raise InvalidQuestionError(f"The {what} has no words in it. Please type something.")
    return re.sub(r"[ \t]+", " ", question)


def validate_context(text: str) -> str:
    """What the person said of their needs or constraints, checked like a question but
    allowed to be empty ("" when it is only blanks); InvalidQuestionError otherwise."""
    if not text.strip():
        return ""
    return validate_question(text, MAX_CONTEXT_CHARS, what="context")


def validate_text(text: str, what: str = "text") -> str:
    """`text` as it is when every store and the tokenizer can take it; InvalidQuestionError
    naming the characters otherwise (a lone surrogate, which JSON can spell as `\\ud800`;
    NUL). Checked before a job exists, so no stored row holds what cannot be read back."""
    refused = unstorable_characters(text)
    if refused:
        raise InvalidQuestionError(
            f"The {what} contains characters that are not text ({', '.join(refused[:5])}). "
            "Please type it again as plain text."
        )
    return text


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf") and char not in "\n\t\r\u200d"


def _mostly_unprintable(text: str) -> bool:
    if not text:
        return False
    odd = sum(1 for c in text if unicodedata.category(c) in ("Cc", "Co", "Cs", "Cn"))
    return odd / len(text) > 0.1 and odd > 3


_COMPARISON = re.compile(
    r"\b(vs\.?|versus|compare[sd]?|comparison|difference(s)? between|differ(s)? from|"
    r"better than|worse than|faster than|slower than|pros and cons|similarities)\b",
    re.I,
)
# "Which was founded first, the Louvre or the Prado?", "Are A and B both American?", "What
# do A and B have in common?": two named things weighed.
_EITHER = re.compile(r"\b(?:or|both|in common|same|different)\b", re.I)
_CURRENT = re.compile(
    r"\b(latest|newest|today|tonight|yesterday|this (week|month|year)|right now|currently|"
    r"recent(ly)?|breaking|news|upcoming|so far this)\b",
    re.I,
)
_EXPLANATION = re.compile(
    r"^\s*(why|how (does|do|did|is|are|can|would)|explain|what (causes|happens|is the reason)|"
    r"in what way)\b|\b(explain|mechanism|works?)\b",
    re.I,
)
# the words of the question's form, not of what it asks about: "how many", "have in
# common"; no passage need hold them ("what type of" stays: dropping it too let more
# evidence-removed questions be answered, measured)
_FORM = re.compile(r"\bhow (long|many|much|often|far|old)\b|\bin common\b", re.I)
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
# a capitalised word ("O'Rourke" one word; one that owns the next capitalised word goes with
# it: "Children's Day", "Schindler's List"), an abbreviation ("F.C.", "U.S."), or an initial
# or short title before a name ("H. G. Wells", "St. Jude Medical")
_WORD = (rf"[{CAPITAL}](?:\.[{CAPITAL}])+\.?|[{CAPITAL}][a-z]{{0,2}}\.(?=\s+[{CAPITAL}])|"
         rf"[{CAPITAL}][\w+#-]*(?:&[{CAPITAL}][\w+#-]*)*"  # "A&W", "AT&T"
         rf"(?:'[{CAPITAL}][\w+#-]*|['’]s(?=\s+[{CAPITAL}]))?")
# "the King who made ...": a word of the language naming the go-between, not a name
_ROLE_FOLLOWS = re.compile(r"\s+(?:who|whom|whose|that|which)\b", re.I)
# the small words inside names: "Bank of America", "José Echegaray y Eizaguirre",
# "Rogier van der Weyden", "Battle Beyond the Sun"
_INSIDE = (r"(?:of\s+the\s+|the\s+|vs?\.\s+|(?:of|with|for|to)\s+an?\s+|(?<=About\s)an?\s+|"
           r"(?:(?:of|de|y|van|von|da|del|der|du|di|la|le)\s+){0,2})")  # "Portrait of a Lady",
# "About a Boy"
_ENTITY = re.compile(
    # quoted; a single quote opens and closes outside a word, not as in "Suicide's ... brand's"
    r"\"([^\"]{2,80})\"|(?<!\w)'([^']{2,80})'(?!\w)|`([^`]{1,80})`|"
    r"\b([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(\))?|[A-Za-z_]\w*\(\))|"  # code-like
    # capitalised runs: "Craig v. Boren", "Paramount Pictures, Inc."
    rf"\b((?:{_WORD})(?:\s+{_INSIDE}(?:{_WORD}))*(?:,?\s+(?:Inc|Ltd|Corp|LLC|plc)\b\.?)?"
    # and its number: "Air Tahoma Flight 185", "Apollo 11" (not a year after a name)
    r"(?:\s+(?!(?:1\d{3}|20\d{2})\b)\d{1,4}(?![\d,.:'’%-]*\w)(?!\s*(?:st|nd|rd|th)\b)"
    r"(?!\s+(?:feet|foot|ft|inches|metres|meters|m|km|kg|lb|lbs|pounds|miles|years|year|days|"
    r"months|hours|minutes|seconds|times|people|points|goals|games|percent|million|billion|"
    r"thousand|hundred)\b))?)"
)
# a number before a name, where a name starts: "Are 11 Harrowhouse and ...", "..., 30 Rock or"
_NUMBERED = re.compile(r"(?:^\W*(?:is|are|was|were|do|does|did|has|have|had)"
                       r"|\b(?:and|or|both|than)|,)"
                       r"\s+(?!(?:1\d{3}|20\d{2})\s)(\d[\d,.]*)\s+$", re.I)  # not a year
_WEIGHING = re.compile(r"^\W*(?:is|are|was|were|do|does|did|has|have|had)\b|\s(?:or|than)\s",
                       re.I)
_NAME_FOLLOWS = re.compile(rf"'s\b|\s+(?:and|or)\s+[{CAPITAL}]")
_LANGUAGE_WORDS = {
    "fr": {"le", "la", "les", "est", "une", "des", "pourquoi", "comment", "quel", "quelle"},
    "de": {"der", "die", "das", "ist", "und", "warum", "wie", "nicht", "ein", "eine"},
    "es": {"el", "los", "las", "es", "una", "por", "qué", "cómo", "cuál", "del"},
}


def detect_intent(question: str, now: datetime | None = None) -> QueryIntent:
    year_now = (now or datetime.now(UTC)).year
    time_constraint = _time_constraint(question, year_now)
    entities = _entities(question)
    if _COMPARISON.search(question) or (_EITHER.search(question) and len(entities) >= 2):
        question_type = QuestionType.COMPARISON
    elif _CURRENT.search(question) or (
        time_constraint is not None and (time_constraint.end_year or 0) >= year_now
    ):
        question_type = QuestionType.CURRENT_EVENT
    elif _EXPLANATION.search(question):
        question_type = QuestionType.EXPLANATION
    else:
        question_type = QuestionType.FACTUAL
    return QueryIntent(
        question_type=question_type,
        entities=entities,
        key_terms=list(dict.fromkeys(terms(_FORM.sub(" ", question)))),
        time_constraint=time_constraint,
        language=_language(question),
    )


def _time_constraint(question: str, year_now: int) -> TimeConstraint | None:
    years = sorted(int(y) for y in _YEAR.findall(question))
    recent = bool(_CURRENT.search(question))
    if not years and not recent:
        return None
    if re.search(r"\b(since|after|from)\s+(1[5-9]\d\d|20\d\d)\b", question, re.I) and years:
        return TimeConstraint(start_year=years[0], end_year=None, recent=recent)
    if re.search(r"\b(before|until|prior to)\s+(1[5-9]\d\d|20\d\d)\b", question, re.I) and years:
        return TimeConstraint(start_year=None, end_year=years[-1], recent=recent)
    if years:
        return TimeConstraint(start_year=years[0], end_year=years[-1], recent=recent)
    return TimeConstraint(start_year=year_now - 1, end_year=year_now, recent=True)


# prepositions that the stop words do not hold, which may open a question before a name
# and its comma ("Like Yazoo, is ...?"; not the title "Unlike Anyone Else")
_PREPOSITIONS = frozenset({"like", "unlike", "besides", "beside", "alongside", "including",
                           "excluding", "despite", "regarding", "concerning", "considering",
                           "except"})


# the kinds of person an occupation is ("songwriter", "actress", "footballer"), and the
# words for a person that English writes as titles before a name ("General Motors",
# "Queen Elizabeth", "Doctor Who"): an occupation opening a question is no part of the name
_OCCUPIED = ("creator", "performer", "entertainer", "athlete", "communicator", "scientist",
             "leader")
_TITLES_OF_ADDRESS = frozenset({
    "king", "queen", "prince", "princess", "duke", "duchess", "lord", "lady", "sir", "dame",
    "saint", "pope", "president", "general", "captain", "colonel", "major", "admiral", "chief",
    "governor", "senator", "judge", "emperor", "empress", "count", "countess", "baron", "earl",
    "bishop", "cardinal", "father", "mother", "sister", "brother", "doctor", "professor",
    "sultan", "tsar", "czar", "emir", "sheikh", "rabbi", "imam", "reverend", "lieutenant",
    "sergeant", "marshal", "commander", "mayor", "chancellor", "premier", "minister", "master",
    "uncle", "aunt", "coach", "elder", "dean", "consul", "khan", "shah", "raja", "maharaja"})


# the last words of a company's or a group's name: "Drummer Boy Records" is one name
_BODIES = LEGAL_FORMS | {"records", "band", "entertainment", "productions", "studios", "music",
                         "films", "pictures", "press", "books", "orchestra", "choir",
                         "ensemble", "society", "trio", "quartet"}


def _occupation(word: str) -> bool:
    """Whether `word` names an occupation, as occupations end ("songwriter", "actress",
    "physicist", "comedian"), and not a title of address or a given name a dictionary files
    under one ("Charles" of Ray Charles)."""
    folded = word.casefold()
    return folded not in _TITLES_OF_ADDRESS and _OCCUPATION_ENDING.search(folded) is not None \
        and is_word(word) and any(lexicon().is_kind_of(folded, kind) for kind in _OCCUPIED)


_OCCUPATION_ENDING = re.compile(r"(?:er|or|ist|ess|ian|ant|ent|ete)$")


def _entities(question: str) -> list[str]:
    found: list[str] = []
    joined_to = 0  # where a place's name that took in its region ends
    # a place named with its region is one side of a comparison ("Are Marion, Arkansas and
    # West Memphis, Arkansas ...?"); a question that asks through the place ("the county
    # where East Lempster, New Hampshire is") may reach its answer through the region too
    weighing = bool(_WEIGHING.search(question))
    for match in _ENTITY.finditer(question):
        if match.start() < joined_to:
            continue  # the region of "Marion, Arkansas": part of the name before it
        index = next(n for n, g in enumerate(match.groups()) if g)
        entity = match.groups()[index].strip(" ?.!,")
        first_word, _, others = entity.partition(" ")
        if index == 4 and match.start() == len(question) - len(question.lstrip()) and (
                first_word.casefold() in STOPWORDS or (
                    first_word.casefold() in _PREPOSITIONS
                    and question[match.start():].startswith(f"{entity},")) if others
                else is_word(first_word) and not _NAME_FOLLOWS.match(question, match.end())):
            # A capital at the start of a sentence is not a name when it is a word of the
            # language ("Which", "Are", "Born on ..."): drop it. "SuperMansion starred ..."
            # keeps its name, and so do a word that owns something or stands with another
            # name ("Suicide's album", "Lunaria and Aethionema are ...") and a dictionary
            # word that opens a longer name ("Salisbury Woodland Gardens", "Henry Hall").
            entity = others
        elif index == 4 and len(others.split()) >= 2 \
                and match.start() == len(question) - len(question.lstrip()) \
                and _occupation(first_word) and others.split()[-1].casefold() not in _BODIES:
            # "Songwriter Janna Allen's sister ...": what she is, then her name of two words
            # or more (not "Taylor Swift", "Harper Lee")
            entity = others
        before = question[:match.start()].casefold()
        if index == 4 and " " not in entity and is_word(entity) and (
                (before.endswith("the ") and _ROLE_FOLLOWS.match(question, match.end()))
                or re.search(r"\b(?:what|which)\s+$", before)):
            continue  # "the King who made ...", "is what Nationality?": not names
        numbered = _NUMBERED.search(question[:match.start()])
        if index == 4 and numbered and entity == match.groups()[index].strip(" ?.!,"):
            entity = f"{numbered.group(1)} {entity}"  # a title that opens with a number
        head, _, last = entity.rpartition(" ")
        if index == 4 and head and is_nationality(last):  # "... Neil Jordan American?"
            found += [e for e in (head, last) if e not in found]
            continue
        first, _, rest = entity.partition(" ")
        if index == 4 and " " in rest and is_nationality(first):  # "Mexican Alejandro Springall"
            found += [e for e in (first, rest) if e not in found]
            continue
        if index == 4 and " " in rest and _kind_of_work(first) and re.search(
                r"\b(?:1\d{3}|20\d{2})\s+$", question[:match.start()]):
            entity = rest  # "the 1946 Western Song of Arizona": a kind of work, then its title
        elif index == 4 and rest and first in _RECORDS and re.search(
                r"\b(?:the|an?|his|her|its|their)\s+$", question[:match.start()], re.I) \
                and _MUSIC.search(question):
            entity = rest  # "the EP Songs from the Laundry Room": a kind of record, its title
        end = match.start() + match.group(0).find(entity) + len(entity)
        region = region_after(question[end:]) if index == 4 and entity and weighing \
            and not is_region(entity) else None  # not "Germany, France or ..."
        if region is not None:  # "Marion, Arkansas": one place's name
            entity = f"{entity}, {region}"
            joined_to = end + question[end:].find(region) + len(region)
        if entity and entity.lower() not in STOPWORDS and entity not in found:
            found.append(entity)
    return _editions(question, _titles_with_in(question, _subtitled(question, found)))


def _subtitled(question: str, found: list[str]) -> list[str]:
    """A title and its subtitle after a colon are one name: "Illuminati: New World Order",
    "Elasund: The First City"."""
    joined: list[str] = []
    for entity in found:
        if joined and f"{joined[-1]}: {entity}" in question:
            joined[-1] = f"{joined[-1]}: {entity}"
        else:
            joined.append(entity)
    return joined


_YEARS_BEFORE = re.compile(r"\bthe\s+(1\d{3}|20\d{2})(?:\s+and\s+(?:the\s+)?(1\d{3}|20\d{2}))?"
                           r"\s+$", re.I)  # not "between 1970 and 1980 Tarn Harbour"


def _editions(question: str, found: list[str]) -> list[str]:
    """A name the question gives two years of is two names, one a year: "the 1998 ICC
    KnockOut Trophy and the 2000 ICC KnockOut Trophy", "the 1987 and 1988 Georgia Tech
    Yellow Jackets football teams" weigh two editions, which their passages title so."""
    editions: list[str] = []
    for entity in found:
        years = []
        for at in (m.start() for m in re.finditer(rf"\b{re.escape(entity)}\b", question)):
            before = _YEARS_BEFORE.search(question[:at])
            if before:
                years += [y for y in before.groups() if y]
        years = list(dict.fromkeys(years))
        editions += [f"{year} {entity}" for year in years] if len(years) >= 2 else [entity]
    return editions


def _titles_with_in(question: str, found: list[str]) -> list[str]:
    """A title that a kind of work introduces, whose first word is a word of the language,
    then "in" and a name ("the play Made in Britain", "the film Lost in the Fog") is one
    name; "Is Nice in France?", "Mount Kenya in Kenya" and "Queen in London" stay two."""
    joined: list[str] = []
    for entity in found:
        last = joined[-1] if joined else ""
        title = re.search(rf"\b{re.escape(last)}\s+in\s+(?:the\s+)?{re.escape(entity)}\b",
                          question) if last and " " not in last else None
        before = question[:title.start()].split() if title else []
        # the word opens the title, after the kind of work: "the play Made in Britain"
        opens = bool(before) and before[-1][:1].islower() \
            and _kind_of_work(before[-1], (*_WORKS, "writing", "music"))
        if title and opens and is_word(last) and last.casefold() not in STOPWORDS \
                and not countries_in(last) and not home_nations_in(last):
            joined[-1] = title.group(0)
        else:
            joined.append(entity)
    return joined


_WORKS = ("film", "broadcast", "book")
_RECORDS = frozenset({"EP", "LP"})  # kinds of record written as capitals, before a title
# a question about music, where "the EP ..." is a record, not "the EP Committee"
_MUSIC = re.compile(r"\b(?:released|band|album|single|songs?|singer|recorded|track|label)\b",
                    re.I)


def _kind_of_work(word: str, kinds: tuple[str, ...] = _WORKS) -> bool:
    """Whether a word names a kind of film, show or book in WordNet ("Western", "Musical",
    "Sitcom", "Novel"), or of the other `kinds`, not a word that begins a name ("Republican
    National Convention", "Drama Desk Award", "Rock and Roll Hall of Fame")."""
    return any(lexicon().is_kind_of(word.casefold(), kind) for kind in kinds)


def _language(question: str) -> str:
    words = set(re.findall(r"\w+", question.lower()))
    best, hits = "en", 0
    for language, markers in _LANGUAGE_WORDS.items():
        score = len(words & markers)
        if score > hits and score >= 2:
            best, hits = language, score
    return best


_REFERRING_TEXT = """it its it's they them their theirs this that these those he him his she
    her hers one ones there then also too instead else same"""
_REFERRING = frozenset(_REFERRING_TEXT.split())
_CONTINUING = re.compile(r"^\s*(and|but|so|also|what about|how about|why|why not|"
                         r"what else|anything else|more|then)\b", re.I)


def standalone_question(question: str, history: list[ConversationTurn]) -> str:
    """A follow-up searched alone loses what it refers to ("and in dogs?"): when it leans on
    the conversation (a referring word, a continuing opener, or fewer than three content
    words), the previous question is carried along in brackets."""
    if not history:
        return question
    words = re.findall(r"[\w']+", question.casefold())
    content = [w for w in words if w not in STOPWORDS]
    leans = (any(w in _REFERRING for w in words) or bool(_CONTINUING.match(question))
             or len(content) < 3)
    return f"{question} ({history[-1].question})" if leans else question


_DEEP = re.compile(r"\b(in[- ]depth|comprehensive|thorough(ly)?|exhaustive|literature review|"
                   r"systematic review|state of the art|survey of)\b", re.I)


def choose_depth(requested: Depth, question: str, intent: QueryIntent, platform: str) -> Depth:
    """`auto`: quick for a short factual question, deep when asked for thoroughness (never in
    chat, where people wait for the answer), standard otherwise."""
    if requested != Depth.AUTO:
        return requested
    if _DEEP.search(question):
        return Depth.DEEP if platform == "cli" else Depth.STANDARD
    if intent.question_type == QuestionType.FACTUAL and len(question.split()) <= 12:
        return Depth.QUICK
    return Depth.STANDARD
