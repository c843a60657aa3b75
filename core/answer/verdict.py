"""Yes/no and either-or questions decided by code from the passages about each thing named,
for the answer's first word: "No: Ian Brown is an English musician [1]; Dee Snider is an
American singer [2]." or "Terry Richardson: ... (born 1965) [2] ... (born 1970) [1]".

What is decided, and from what:

- "Who is older, A or B?", "Which was founded first, ...", "... died first": the years in the
  passages about A and B (a person's birth or death from the dates after the name; an event's
  first year);
- "Which has more members / is higher, A or B?": the number next to that word, or a height;
- another either-or ("Which film was Oscar nominated, A or B?"): the side whose passage holds
  more of the question's other words, when one clearly does;
- "Are A and B both American?" / "of the same nationality?": the countries in the opening of
  each passage;
- "Are A and B by the same director?" / "the same number of acts?": the name after "directed
  by" or the number before "acts" in each;
- "Were A and B both founded before 1950?": each passage's first year;
- "Are A and B both documentaries?": whether each passage holds the words the question says
  of both;
- "Was A born before B?", "Is A from the same country as B?": the years (the days, for one
  year) or the countries of their passages;
- "Is A a Japanese manga artist?", "Was A directed by B?", "Was A born in France?": the
  passage about A, its words (as written, in another form or sense), the nationality and the
  maker its opening gives, where it says A was born.

Nothing is decided when a side has no passage about it or the passages do not give the
value: the answer then says that the sources do not settle it.
"""

from __future__ import annotations

import calendar
import difflib
import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache
from typing import TypeVar

from core.answer.lexicon import lexicon
from core.answer.values import dates_in
from core.countries import (
    countries_in,
    home_nations_in,
    is_country_name,
    is_nationality,
    is_region,
    province_countries_in,
    provinces_in,
    states_in,
    us_states_in,
    weighed,
)
from core.models import QueryIntent, Source
from core.text import (
    CAPITAL,
    LEGAL_FORMS,
    NAME,
    STOPWORDS,
    all_words,
    extends_name,
    folded_words,
    is_hatnote,
    opening_subject,
    phrase,
    same_phrase,
    sentences,
    terms,
    title_subject,
)

V = TypeVar("V")


class Basis(StrEnum):
    """What a Yes or No rests on when the passages do not say it in the question's words."""

    ABSENCE = "absence"  # a No because a passage lacks the question's words
    OTHERWISE = "otherwise"  # a No because a passage gives another value than the question
    LOOSE = "loose"  # a Yes from passages that say all but the question's verb
    BROAD = "broad"  # a Yes from a passage that names the asked noun, not which kind of it


@dataclass(frozen=True)
class Verdict:
    answer: str  # "Yes", "No", or the option that wins
    reasons: list[tuple[int, str]]  # (source index, the sentence that decides it), in order
    basis: Basis | None = None  # what it rests on, when less than passages saying it


_CLOSED = re.compile(r"^\W*(?:is|are|was|were|do|does|did|has|have|had|can|could)(?:n't)?\b",
                     re.I)
_EARLIER = re.compile(r"\b(?:older|oldest|first|earlier|earliest|sooner)\b", re.I)
_LATER = re.compile(r"\b(?:younger|youngest|later|latest|last|more recent|most recent|newer|"
                    r"newest)\b", re.I)
_MORE = re.compile(r"\b(?:more|most|larger|largest|bigger|biggest|greater|higher|highest|"
                   r"taller|tallest)\b", re.I)
_FEWER = re.compile(r"\b(?:fewer|fewest|less|least|smaller|smallest|lower|lowest|shorter|"
                    r"shortest)\b", re.I)
_HEIGHT = re.compile(r"\b(?:higher|highest|taller|tallest|lower|lowest|shorter|shortest)\b",
                     re.I)
_AREA = re.compile(r"\b(?:larger|largest|bigger|biggest|smaller|smallest)\b(?!\s+\w+s\b)",
                   re.I)
_YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_QUANTITY = re.compile(r"(\d[\d,]*(?:\.\d+)?|" + "|".join(_NUMBER_WORDS) + r")", re.I)
_AGENTS = {"director": "directed", "writer": "written", "author": "written",
           "songwriter": "written", "lyricist": "written", "screenwriter": "written",
           "filmmaker": "directed", "composer": "composed", "producer": "produced",
           "publisher": "published", "creator": "created", "founder": "founded",
           "developer": "developed", "designer": "designed", "architect": "designed",
           "owner": "owned"}


# "the director of", "the band whose", "the island on which": the question asks about
# something it reaches through what it names
_GO_BETWEEN = re.compile(r"\bthe\s+(?:[\w'-]+\s+){0,3}?(?:of|who|that|whose|which|where|"
                         r"containing|starring|featuring)\b",
                         re.I)
# "the island of Vilsandi", "the city of Paris": the named thing itself, by its kind
_ITSELF = re.compile(r"the\s+(?:city|cities|town|towns|village|villages|island|islands|state|"
                     r"states|province|provinces|county|counties|borough|municipality|parish|"
                     r"kingdom|republic|genus|genera)\s+of", re.I)
_ASKS_FOR = re.compile(r"^\W*(?:what|who|which)\s+(?:is|was|are|were)\s+$", re.I)


def through_another(question: str, names: list[str]) -> bool:
    """Whether the question asks about a go-between of what it names ("where was the
    director of Casablanca born?"), not about the named thing's own attribute ("what is the
    capital of France?", where the phrase is what is asked for)."""
    between = [m for m in _GO_BETWEEN.finditer(question) if not _ITSELF.fullmatch(m.group(0))
               or not question[m.end():].lstrip()[:1].isupper()]
    spans = [m.span() for m in between]
    # a name inside the go-between's own words is its noun ("the EP that ..."), not what
    # the question names
    first = min((at for at, n in ((question.find(n), n) for n in names if n in question)
                 if not any(start < at and at + len(n) <= end for start, end in spans)),
                default=-1)  # not "Out of Place" of "the documentaries Out of Place"
    return first > 0 and any(not _ASKS_FOR.match(question[:m.start()])
                             for m in between if m.end() <= first)


def shared(question: str) -> bool:
    """Whether the question asks what two named things are alike in, a description of both
    ("What profession do A and B have in common?", "A and B are both what?"), not a thing
    both name ("Both A and B embrace what campaign?")."""
    return bool(_SHARED.search(question)) and bool(_DESCRIPTION.search(question))


def weighing_words(question: str, intent: QueryIntent) -> list[str]:
    """The words an either-or question weighs its options by ("first", "older", "larger"):
    what the answer decides, which no passage says of either."""
    if not either_or(question, intent):
        return []
    return [m.group(0) for pattern in (_EARLIER, _LATER, _MORE, _FEWER)
            for m in pattern.finditer(question)]


def weighed_subjects(question: str, intent: QueryIntent) -> list[str]:
    """The two things a yes/no question weighs ("Were A and B both decided by the Supreme
    Court?": A and B, not the court), or none when it does not name two."""
    return _subjects(_asked_plainly(question), intent)[0] if closed(question) else []


def closed(question: str) -> bool:
    """Whether the question is answered yes or no: it opens with an auxiliary verb ("Are
    both ... American?", "Did ... win?"), perhaps after the things it asks about ("A and B,
    are they both American?")."""
    return bool(_CLOSED.match(_asked_plainly(question)))


# "A and B, are they both Italian films?" asks "Are A and B both Italian films?"
# "A and B, are both of them in C?" and "A and B both had hits; are both acts American?" ask
# "Are A and B both ...?"
_NAMED_FIRST = re.compile(
    r"^\s*(?P<things>[^,;:?]+?\s(?:and|&)\s[^,;:?]+?)(?:\s*[,:]|(?P<stated>\s+(?:both\s+)?"
    r"(?-i:[a-z])[^;?]*;))\s*(?P<verb>are|were|do|did|have|had)\s+(?:(?:they|these|those|"
    r"the\s+two)(?:\s+(?P<all>both|all))?|(?P<both>both|each)(?:\s+of\s+them)?)"
    r"(?:\s+(?P<noun>(?-i:[a-z]+s))(?=\s+\w))?\s+(?P<rest>.+)$", re.I)


def _named_after(found: re.Match[str]) -> str:
    """The question a `_NAMED_FIRST` match asks, its things after its verb."""
    both = found.group("all") or found.group("both") or ""
    rest = " ".join(filter(None, [found.group("noun"), found.group("rest")]))
    return f"{found.group('verb')} {found.group('things')} {both} {rest}".replace("  ", " ")


# "Is A, like B, a documentary film?" asks "Are A and B both a documentary film?"
_LIKE = re.compile(r"^\s*(?P<verb>is|was|does|did|has)\s+(?P<first>[^,;:?]+?),\s+(?:like|as\s+is|"
                   r"just\s+like)\s+(?P<second>[^,;:?]+?),\s+(?P<rest>.+)$", re.I)
_PLURAL = {"is": "are", "was": "were", "does": "do", "did": "did", "has": "have"}


# a thing's name: capitalised words and the small words between them ("Man of Steel")
_THING = (r"(?:the\s+)?(?-i:[A-Z0-9\"“])[\w'’\".:-]*(?:\s+(?:(?:of|the|and|in|on|a|an|de|du|"
          r"la|for|to)\s+)*(?-i:[A-Z0-9\"“])[\w'’\".:-]*)*")
# "Is A made with vodka, like B?" asks "Are A and B both made with vodka?"
# (what it is or was, not what it did or where it was born: "Did A star in B, like C?" is
# about B's cast, "born in a capital, like Paris" likens a city to a person)
_LIKE_AFTER = re.compile(rf"^\s*(?P<verb>is|was)\s+(?P<first>{_THING})\s+"
                         r"(?P<rest>(?!born\b)(?-i:[a-z])[^,;:?]*?),\s+(?:like|as\s+is|just\s+like)\s+"
                         r"(?P<second>[^,;:?]+?)\s*[?.!]*$", re.I)
# "Was A directed by the same person as B?" asks "Were A and B directed by the same person?"
_SAME_AS = re.compile(rf"^\s*(?P<verb>is|was|does|did|has)\s+(?P<first>{_THING})\s+"
                      r"(?P<rest>(?-i:[a-z])[^,;:?]*?\bsame\b[^,;:?]*?)\s+as\s+"
                      r"(?P<second>(?![^,;:?]*['’]s\s+(?-i:[a-z]))[^,;:?]+?)\s*[?.!]*$",
                      re.I)  # B a name: not "as Vertigo's sequel"


def _asked_plainly(question: str) -> str:
    """The question with the things it names after its verb, where it names them first;
    and with both things it likens together ("Is A, like B, ...?", "Is A made with vodka,
    like B?", "Was A directed by the same person as B?")."""
    for form, both in ((_LIKE, " both"), (_LIKE_AFTER, " both"), (_SAME_AS, "")):
        told = form.match(question)
        if told:
            return (f"{_PLURAL[told.group('verb').casefold()].capitalize()} "
                    f"{told.group('first')} and {told.group('second')}{both} "
                    f"{told.group('rest').rstrip('?.! ')}?")
    named = _NAMED_FIRST.match(question)
    return _named_after(named) if named else question


def decide(question: str, intent: QueryIntent, sources: Sequence[Source]) -> Verdict | None:
    """The answer to a yes/no or either-or question when the passages settle it; None when
    they do not or the question is neither."""
    named = _NAMED_FIRST.match(question)
    if named and named.group("stated"):  # "A and B both had hits called "Stay"; are both
        return None  # acts American?": what the clause says of them is not read
    if _RELATION_OR_OTHER.search(question):  # "born before or after B?" asks which, not
        return None  # whether: Yes or No answers neither
    question = _asked_plainly(question)
    options = either_or(question, intent)
    if options:
        return _choose(question, options, sources)
    if closed(question):
        return _yes_or_no(question, intent, sources)
    if _SHARED.search(question):
        return _shared(question, intent, sources)
    if _BOTH.search(question):
        return _shared_value(question, intent, sources)
    return None


# ---- what two things share ------------------------------------------------------------------

# what a passage's opening says its subject is: "What are both A and B?", "A and B are both
# what?", "What profession do A and B have in common?", "What do A and B have in common?",
# "A and B are both genera of which type of plants?"
_DESCRIBED = (r"^\W*what\s+(?:are|were|is|was)\s+both\b|\bboth\s+what\W*$|"
              r"^\W*what\s+(?:do|did|does)\b.*\bhave in common\W*$")
_DESCRIBING_NOUNS = (r"(?:profession|occupation|job|career|trade|nationality|genre|kind|type|"
                     r"role)s?\b")
_SHARED = re.compile(
    _DESCRIBED + rf"|^\W*(?:what|which)\s+{_DESCRIBING_NOUNS}.*\b(?:in common|both|share)\b|"
    # "A and B are both genuses of which type of plants?", "... both what kind of film?"
    r"\bboth\b[^?]*?\b(?:what|which)\b(?!\s+(?:year|date|century|decade|day|month|time|"
    r"number|percentage|age)s?\b)(?!.*\bor\b)", re.I)
# of those, the ones asking for a description, not a thing both name ("what campaign?")
_DESCRIPTION = re.compile(_DESCRIBED + rf"|\b(?:what|which)\s+(?:sorts?\b|{_DESCRIBING_NOUNS})",
                          re.I)
_TOKEN = re.compile(r"[^\W\d_][\w']*|\d+")
_DESCRIBES = re.compile(r"\s(?:is|was|are|were|became)\s", re.I)
# where the description ends and another clause begins: "the defending champion, but did
# not take part", "a singer who ..."
_CLAUSE_END = re.compile(r",?\s+(?:but|who|which|whose|while|although|though)\s|;")


def _shared(question: str, intent: QueryIntent, sources: Sequence[Source]) -> Verdict | None:
    """What the openings of the passages about two named things say of both ("What
    profession do A and B have in common?": "American musician, singer and songwriter"):
    the longest run of words the two opening sentences share, one that holds a noun and
    none of the question's names. None when they share no such run."""
    two = _two_sides(question, intent, sources)
    if two is None:
        return None
    names, sides = two
    openings = [(sentences(_text(sources[n])) or [""])[0] for n in sides]
    # what each opening says its subject is, after "is" / "was": not what happened to it
    # ("Casal did not participate this year" and "Orantes did not participate this year")
    described = []
    for opening in openings:
        verb = _DESCRIBES.search(opening)
        if verb is None:
            return None
        described.append(_CLAUSE_END.split(opening[verb.end():], maxsplit=1)[0])
    said = _common_run(described[0], described[1], set(terms(" ".join(names))))
    if said is None:
        return None
    return Verdict(f"Both are described as {said}", list(zip(sides, openings, strict=True)))


def _two_sides(question: str, intent: QueryIntent, sources: Sequence[Source]
               ) -> tuple[list[str], list[int]] | None:
    """The names a question weighs and the two passages about its first two, or None when
    either has none or both have the same."""
    names = weighed([e for e in intent.entities if e in question])
    found = [_about(name, sources) for name in names[:2]]
    sides = [n for n in found if n is not None]
    if len(sides) < 2 or sides[0] == sides[1]:
        return None
    return names, sides


# a question asking what two named things both have: "What is the main flavor of both
# soft drinks, A and B?", "Which tournament have A and B both been finalists in?"
_BOTH = re.compile(r"^\W*(?:what|which)\b.*\b(?:both|in common)\b", re.I)


def _shared_value(question: str, intent: QueryIntent, sources: Sequence[Source]
                  ) -> Verdict | None:
    """What the passages about two named things both say in sentences that hold the
    question's other words ("orange" of "Solo is an orange-flavoured soft drink" and
    "Sunkist is a brand of orange flavored soft drinks" for "the main flavor of both"):
    the longest run of words the two sentences share that the question does not hold. None
    when no pair of such sentences shares one."""
    two = _two_sides(question, intent, sources)
    if two is None:
        return None
    names, sides = two
    asked = set(terms(question))
    named = set(terms(" ".join(names)))
    wanted = asked - named  # what the question says of both, besides their names
    best: tuple[int, int, str, str, str] | None = None
    for first in sentences(_text(sources[sides[0]])):
        held = len(wanted & set(terms(first)))
        if not held:
            continue
        for second in sentences(_text(sources[sides[1]])):
            other = len(wanted & set(terms(second)))
            said = _common_run(first, second, asked) if other else None
            if said is None or not (_beside(said, first, wanted)
                                    and _beside(said, second, wanted)):
                continue  # "family" of "the Fagaceae family" and "the verbena family"
            rank = (min(held, other), len(terms(said)), said, first, second)
            if best is None or rank[:2] > best[:2]:
                best = rank
    if best is None:
        return None
    said, first, second = best[2:]
    return Verdict(said[:1].upper() + said[1:], [(sides[0], first), (sides[1], second)])


def _beside(said: str, sentence: str, wanted: set[str]) -> bool:
    """Whether `said` stands within a few words of one of the `wanted` words in the
    sentence ("orange" in "orange-flavoured" for "flavor")."""
    words = [re.escape(w) for w in _TOKEN.findall(said)]
    at = re.search(r"\b" + r"\W+".join(words) + r"\b", sentence, re.I) if words else None
    if at is None:
        return False
    before = _TOKEN.findall(sentence[:at.start()])[-3:]
    after = _TOKEN.findall(sentence[at.end():])[:3]
    return bool(wanted & set(terms(" ".join(before + after))))


def _common_run(first: str, second: str, named: set[str]) -> str | None:
    """The longest run of words `first` and `second` share (by its content words, stop
    words trimmed from its ends) that holds a noun and none of the `named` words, as
    `first` writes it."""
    spans = list(_TOKEN.finditer(first))
    words = [m.group(0).casefold() for m in spans]
    other = [m.group(0).casefold() for m in _TOKEN.finditer(second)]
    best: tuple[int, int, int] | None = None  # (content words, first word, last word)
    for block in difflib.SequenceMatcher(None, words, other, autojunk=False
                                         ).get_matching_blocks():
        start, end = block.a, block.a + block.size
        while start < end and words[start] in STOPWORDS:
            start += 1
        while end > start and words[end - 1] in STOPWORDS:
            end -= 1
        run = words[start:end]
        content = [w for w in run if w not in STOPWORDS and not w.isdigit()]
        if not content or named & set(terms(" ".join(run))) \
                or not any(lexicon().is_noun(w) for w in content):
            continue
        if best is None or len(content) > best[0]:
            best = (len(content), start, end - 1)
    if best is None:
        return None
    return first[spans[best[1]].start():spans[best[2]].end()]


# ---- either-or ------------------------------------------------------------------------------

def either_or(question: str, intent: QueryIntent) -> list[str]:
    """The two things an either-or question weighs ("Who is older, A or B?"); [] for any
    other question."""
    body = question.strip().rstrip("?.! ")
    if re.match(r"^\W*(?:how|why|where|when)\b", body, re.I):
        return []  # "How do I install or upgrade it?" asks how, not which
    between = re.search(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?:,|\s+(?:which|who|what)\b|$)",
                        body, re.I)
    if between and not re.search(r"\s+or\s+", body):
        body = f"{between.group(1)} or {between.group(2)}"
    left, sep, right = body.rpartition(" or ")
    if not sep:
        return []
    parts = [p.strip() for p in re.split(r",|:|--|—|–|\bbetween\b", left.rstrip(" ,"))]
    left = parts[-1]
    if len(parts) > 2 and re.match(r"(?-i:the|an?)\s+(?-i:[a-z])", left) \
            and parts[-2] in intent.entities:
        left = parts[-2]  # "Who is older, A, the first Pole in space, or B, ...?"
    elif body.rpartition(" or ")[0].rstrip().endswith(","):
        return []  # "A, B, or C": more than two
    named = [e for e in intent.entities if left.endswith(e)]
    if named and not _titled(left):  # "The City in History" is one title, not "History"
        left = max(named, key=len)
    elif len(left.split()) > 4 and not _titled(left):
        return []
    right = re.split(r",(?!\s*(?:Inc|Ltd|Co|Corp|Jr|Sr)\b)|\?", right)[0].strip()  # not ", Inc."
    starting = [e for e in intent.entities if right.startswith(e)]
    # "SQLite for production" is SQLite; not "Le Médecin" of "Le Médecin volant or Le
    # Médecin malgré lui", whose name the other option opens with too
    if starting and not _titled(right) and not left.startswith(max(starting, key=len)):
        right = max(starting, key=len)
    # "novelist Allison Winn Scotch": the name after the words of what the option is
    ending = [e for e in intent.entities if right.endswith(e)
              and re.fullmatch(r"(?:[a-z][\w-]*\s+){1,2}", right[:len(right) - len(e)])
              and all(lexicon().is_person(w) and not lexicon().is_adjective(w)
                      for w in right[:len(right) - len(e)].split())]  # not "metropolitan"
    if ending:
        right = max(ending, key=len)
    options = [re.sub(r"^(?:the|a|an)\s+", "", o, flags=re.I).strip() for o in (left, right)]
    options = [re.sub(r"^(?:who|which|what)\s+(?:is|was|are|were)\s+\w+\s+", "", o,
                      flags=re.I) for o in options]
    return options if all(plain(o) for o in options) else []


_TITLE_WORDS = frozenset({"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or",
                          "the", "to", "with", "v.", "vs.", "&", "+", "×"})


# one of them, the longest first ("and" before "an"), read as written ("v." is not "vs")
_SMALL_WORD = "|".join(re.escape(w) for w in sorted(_TITLE_WORDS, key=lambda w: (-len(w), w)))


def _titled(text: str) -> bool:
    """Whether `text` is written as a title: capitalised words, with small words between
    them ("The Mark on the Wall", "Love and Pain and the Whole Damn Thing")."""
    words = text.split()
    return 2 <= len(words) <= 10 and words[0][:1].isupper() and words[-1][:1].isupper() \
        and all(w[:1].isupper() or w[:1].isdigit() or w in _TITLE_WORDS for w in words) \
        and any(w in _TITLE_WORDS for w in words[1:-1])


def _choose(question: str, options: list[str], sources: Sequence[Source]) -> Verdict | None:
    verdict = _chosen(question, options, sources)
    if verdict is None or verdict.answer not in options:
        return verdict
    # the winner as the question writes it: "The Mark on the Wall", not "Mark on the Wall"
    titled = re.search(r"\b(?:The|A|An)\s+" + re.escape(verdict.answer), question)
    return replace(verdict, answer=titled.group(0)) if titled else verdict


def _chosen(question: str, options: list[str], sources: Sequence[Source]) -> Verdict | None:
    options = [_whole_option(question, o, sources) for o in options]
    found = [_about(o, sources) for o in options]
    if any(n is None for n in found):
        return None
    sides = [(o, n) for o, n in zip(options, found, strict=True) if n is not None]
    asked = question.casefold()
    for option in options:  # "The Last Harvest" asks for no latest
        asked = asked.replace(option.casefold(), " ")
    if _EARLIER.search(asked) or _LATER.search(asked):
        earliest = bool(_EARLIER.search(asked)) and not (
            "younger" in asked or "youngest" in asked)
        return _by_value(sides, _ordered_in_time(question, sides, sources, options),
                         lowest=earliest)
    if _MORE.search(asked) or _FEWER.search(asked):
        return _by_value(sides, _each(sides, sources, lambda s: _amount(question, s)),
                         lowest=not _MORE.search(asked))
    if any(lexicon().is_graded(w) for w in re.findall(r"[a-z]+", asked)):
        return None  # "lasted longer": a measure this code does not read
    return _by_support(question, options, sides, sources)


def _whole_option(question: str, option: str, sources: Sequence[Source]) -> str:
    """The option as the title of a passage that holds it and that the question writes whole
    ("LaLee's Kin: The Legacy of Cotton", cut at its colon to "The Legacy of Cotton"; "Hello,
    Dolly!" cut at its comma), when no passage is about the option as cut; else the option."""
    if _about(option, sources) is not None:
        return option
    cut = all_words(option)
    asked = question.casefold()
    for source in sources:
        title = title_subject(source.title)
        words = all_words(title)
        if len(words) > len(cut) and title.casefold() in asked and cut and (
                words[-len(cut):] == cut or words[:len(cut)] == cut):
            return title
    return option


def _by_value(sides: list[tuple[str, int]], known: list[tuple[float, str, int]] | None,
              lowest: bool) -> Verdict | None:
    """The option with the lowest (or highest) value, unless they tie."""
    if known is None:
        return None
    option = {n: o for o, n in sides}
    ranked = sorted(known, key=lambda item: item[0], reverse=not lowest)
    if ranked[0][0] == ranked[1][0]:
        return None
    return Verdict(option[ranked[0][2]], [(n, said) for _, said, n in ranked])


def _by_support(question: str, options: list[str], sides: list[tuple[str, int]],
                sources: Sequence[Source]) -> Verdict | None:
    """The option whose passage holds more of what the question says of it ("Oscar
    nominated", "sing with Frankie Valli"), when one holds clearly more."""
    named = set(terms(" ".join(options)))
    # what an apposition says of the last option describes it, not what is asked: "Gimme
    # Shelter, the 1970 Rolling Stones documentary"
    last = question.find(options[-1])
    after = re.match(r"\s*,\s*(?:the|a|an)\s+(.+)$", question[last + len(options[-1]):]) \
        if last >= 0 else None
    described = set(terms(after.group(1))) - set(terms(question[:max(last, 0)])) \
        if after else set()
    wanted = set(terms(question)) - named - _QUESTION_WORDS - described
    if not wanted:
        return None
    scores = []
    asked = [w for w in re.findall(r"[a-z][\w'-]+", question) if set(terms(w)) & wanted]
    for option, n in sides:
        text = _text(sources[n])
        opening = _opening_words(sentences(text))
        kinds = {t for w in asked if _kind_in(opening, w) for t in terms(w)}  # an actress
        held = wanted & (set(terms(text)) | kinds)
        best = max(sentences(text) or [text], key=lambda s: len(wanted & set(terms(s))))
        scores.append((len(held), option, n, best))
    scores.sort(key=lambda item: -item[0])
    if scores[0][0] - scores[1][0] < 1 or scores[0][0] < max(1, len(wanted) // 2):
        return None
    # the other side's opening after the deciding sentence: what it is instead
    other = [(n, (sentences(_text(sources[n])) or [_text(sources[n])])[0])
             for _, _, n, _ in scores[1:2]]
    return Verdict(scores[0][1], [(scores[0][2], scores[0][3]), *other])


_QUESTION_WORDS = frozenset(terms("who which what whom whose when where how also"))


# ---- yes or no -----------------------------------------------------------------------------

def _yes_or_no(question: str, intent: QueryIntent, sources: Sequence[Source]) -> Verdict | None:
    if _NEGATED.search(question):
        return None  # "Isn't A ...?", "Was A not ...?": left to the passages quoted
    relative = _relative(question, intent, sources) or _same_first(question, sources)
    if relative is not None:  # "Was A published before B?", whatever else B's name holds
        return relative
    cast = _CAST_IN_BOTH.match(question)
    if cast is not None and cast.group("who") in intent.entities:
        return _in_both(cast.group("who"), cast.group("things"), sources)
    maker = _MAKER_OF_BOTH.match(question)
    making = _making(maker.group("verb")) if maker is not None else None
    if maker is not None and making is not None and maker.group("who") in intent.entities:
        return _made_both(maker.group("who"), making, maker.group("things"), sources)
    subjects, predicate = _subjects(question, intent)
    split = _split_titles(question, sources)
    if split is not None:  # "Are A and B and the C both ...?", "Were A and B released
        # ...?" whose names split a title: each side a passage's subject
        subjects, predicate = split
    one = _one_subject(question, intent)

    def holds_both(part: str) -> bool:
        return all(phrase(re.sub(r"^the\s+", "", s, flags=re.I)) in phrase(part)
                   for s in subjects)

    # the two in the one thing's name, or in what the question says of it
    joined = one is not None and not _TWO.search(question) \
        and (holds_both(one[0]) or holds_both(one[1])) and _about(one[0], sources) is not None
    if len(subjects) < 2 or joined:
        # one thing, or one whose name joins two ("Tweedledum and Tweedledee", "Fire and
        # Ice"), as a passage is about it; or one said to be in a place whose name joins
        # two ("Is A located in Dumfries and Galloway?")
        if one is not None and not joined and _TWO.search(question) is not None \
                and _JOINED.search(one[0]) is not None:
            return None  # "both" of two names not read apart ("Are Hour to Kill and Happen
            # to Me both ...?"): not one thing's question
        return _single(question, intent, sources)
    kind = _kind_named_before(question, subjects[0]) if subjects else None
    found = [_about_as(s, kind, sources) for s in subjects]
    if any(n is None for n in found) or len(set(found)) < len(found):
        # a passage for each, and not one for two; but "both American films?" is No when
        # the one passage found gives its subject another country
        alone = [n for n in dict.fromkeys(found) if n is not None]
        if not alone and one is not None and not _JOINED.search(one[0]):
            # the one the question names first, where its names were not read apart
            alone = [n for n in [_about(one[0], sources)] if n is not None]
        # (not where the names split a title: "Pride" and "Prejudice", "and Zombies ...")
        split_title = re.match(r"\W*(?:and|&|or)\b", predicate) is not None
        return _one_from_elsewhere(predicate, alone, sources) \
            if len(alone) == 1 and not split_title else None
    sides = [(s, n) for s, n in zip(subjects, found, strict=True) if n is not None]
    own = _own_predicates(question, subjects)
    if own is not None:  # "Is A a magazine and B a newspaper?"
        return _each_described(own, sides, sources, question)
    made = re.search(r"\b(\w+)\s+by\s+the\s+same\b", predicate, re.I)
    if made and lexicon().participle_base(made.group(1)):  # "directed by the same person"
        verb = made.group(1).casefold()
        # "created by the same author": who wrote each, where a passage does not say who
        # created it; "made by the same filmmaker": who directed it
        maker = re.search(r"\bsame\s+(?:[\w-]+\s+){0,2}?(\w+?)s?\W*$", predicate)
        agent = _AGENTS.get(maker.group(1).casefold()) if maker else None
        if maker is not None and agent is not None:  # "by lyricist Tim Rice"
            named = _compare(sides, sources,
                             functools.partial(_role_named, maker.group(1).casefold()))
            if named is not None:
                return named
        # one relation for both where each passage gives it, else each its own
        relations = [verb] if agent is None or agent == verb else [verb, agent]
        for relation in relations:
            uniform = _same_maker(sides, sources, functools.partial(_agent, relation))
            if uniform is not None:
                return uniform
        return _same_maker(sides, sources, lambda s: next(
            (by for by in (_agent(r, s) for r in relations) if by is not None), None))
    same = re.search(r"\bsame\s+(.+)$", _as_same(predicate), re.I)
    if same and re.search(r"\bbased\s+on\b[^,;]*\bby\s+the\s+same\b", predicate):
        # "based on novels by the same author": whom each names after what it is based on
        return _same_maker(sides, sources, _based_on)
    if same:
        alike = _same(same.group(1), sides, sources, question)
        done = re.search(r"\b([a-z]+)\s+(on|in|at|for|from|with|by)\s+the\s+same\b", predicate)
        if alike is None and done and not _PLACE_NOUN.search(same.group(1)):
            # "aired on the same network": "aired on CBS"; not of places, where "formed in
            # London" and "formed in Camden, London" may be one city
            return _compare(sides, sources,
                            functools.partial(_done_with, done.group(1), done.group(2)))
        return alike
    period = _period(predicate)
    if period is not None:  # "both formed in the 1990s", "in the 20th century"
        # the year of one event; "active in the 1990s" is not read from a first year
        return _within(period, question, sides, sources) if _EVENT.search(predicate) else None
    when = re.search(r"\b(before|after|since|until|in)\s+(1[0-9]{3}|20[0-9]{2})\b", predicate)
    if when:
        return _dated(when.group(1), int(when.group(2)), question, sides, sources)
    states = states_in(predicate)
    if states and _PLACED_IN.match(_plain_state(re.sub(r"^(?:endemic|native)\s+to\s+", "in ",
                                                         predicate))):
        in_state = _in_state(states, sides, sources)
        if in_state is not None:
            return in_state
    elif countries_in(_without_named(predicate)):
        return _from(predicate, sides, sources)
    played = _played(predicate, sides, sources)
    if played is not None:
        return played
    return _described(predicate, sides, sources, question)


# "Did B write both A and C?", "Did B help write A and C?": one maker of two things
_MAKER_OF_BOTH = re.compile(rf"^\W*(?i:did|has|have|had)\s+(?P<who>{NAME.pattern})\s+"
                            r"(?:(?i:help|helped)\s+|co-)?(?P<verb>[a-z]+)\s+(?:both\s+)?"
                            r"(?P<things>(?:the\s+)?[A-Z\"“].+?)[?.!]*$")


# "Did B appear in both A and C?": one player in two things
_CAST_IN_BOTH = re.compile(rf"^\W*(?i:did|has|have|had)\s+(?P<who>{NAME.pattern})\s+"
                           r"(?i:appear|star|act|perform|play)(?:ed)?\s+in\s+(?:both\s+)?"
                           r"(?P<things>(?:the\s+)?[A-Z\"“].+?)[?.!]*$")


def _in_both(who: str, things: str, sources: Sequence[Source]) -> Verdict | None:
    """Yes when each thing's passage names `who` in a sentence of its cast ("starring ...
    B", "portrayed by B"); None otherwise (a cast a passage leaves out is no No)."""
    sides = _split_at_and(things, sources)
    if sides is None:
        return None

    def cast_of(source: Source) -> tuple[str, str] | None:
        said = sentences(_text(source))
        return next(((who, _quote(said, k)) for k, sentence in enumerate(said)
                     if named_in_cast(sentence)), None)

    def named_in_cast(sentence: str) -> bool:
        # "starring A, B and C" (the names right after it, not "... and dedicated to B"),
        # "portrayed by B", "B starred in ..."
        for cast in _STARRING.finditer(sentence):
            names = []
            for piece in re.split(r",\s*(?:and\s+)?|\s+and\s+", sentence[cast.end():]):
                whole = NAME.match(piece.strip())
                if whole is None:
                    break
                names.append(whole.group(0))
                if whole.end() < len(piece.strip()):
                    break  # the list ends within this piece
            if any(same_phrase(name, who) for name in names):
                return True
        return re.search(rf"\b(?:portrayed|voiced)\s+by\s+{re.escape(who)}(?![\w'-])|"
                         rf"{re.escape(who)}\s+(?:co-?)?star(?:s|red)\s+(?:as|in)\b",
                         sentence) is not None

    known = _each(sides, sources, cast_of)
    return None if known is None else Verdict("Yes", [(n, said) for _, said, n in known])


_STARRING = re.compile(r"\b(?:starring|co-starring|stars|starred)\s+")


def _making(verb: str) -> str | None:
    """The participle `_agent` reads of a verb of making ("write": "written"), else None."""
    return next((made for made in dict.fromkeys(_AGENTS.values())
                 if lexicon().participle_base(made) == verb.casefold()), None)


def _made_both(who: str, made: str, things: str, sources: Sequence[Source]) -> Verdict | None:
    """Yes when each thing's passage names `who` among its makers (of passages titled alike,
    "Carrow" the film and "Carrow (novel)", any one), No when each names makers and one names
    others; None when the two are not two passages', a passage names no maker or names
    only a surname (which may be another person's)."""
    sides = _split_at_and(things, sources)
    if sides is None:
        return None
    named, surname = _maker_named(who), who.split()[-1].casefold()
    reasons, lacking = [], []
    for _, n in sides:
        known = [(k, found) for k in _titled_alike(n, sources)
                 if (found := _agent(made, sources[k])) is not None]
        if not known:
            return None
        by_them = next(((k, said) for k, (makers, said) in known if named in makers), None)
        if by_them is not None:
            reasons.append(by_them)
            continue
        if any(m.split() == [surname] for _, (makers, _) in known for m in makers):
            return None  # "composed by Barry": maybe them, maybe another Barry
        lacking.append((known[0][0], known[0][1][1]))
    if not lacking:
        return Verdict("Yes", reasons)
    return Verdict("No", [*lacking, *reasons], basis=Basis.OTHERWISE)


def _played(predicate: str, sides: list[tuple[str, int]], sources: Sequence[Source]
            ) -> Verdict | None:
    """Whether each side plays the instrument "play bass" asks of both, by the players its
    opening names ("the bassist", "a bass guitarist"); None when a side names none, or the
    predicate asks no instrument."""
    asked = re.fullmatch(r"(?:play|plays|played)\s+(?:the\s+)?([a-z]+)\W*", predicate.strip())
    if asked is None:
        return None
    instrument = lexicon().lemma(asked.group(1)).base or asked.group(1)
    player = next((p for p in (f"{instrument}ist", f"{instrument}er", f"{instrument}mer")
                   if lexicon().is_kind_of(p, "instrumentalist")), None)
    known = _each(sides, sources, _players_of) if player else None
    if known is None:
        return None
    plays = all(player in v for v, _, _ in known)
    return Verdict("Yes" if plays else "No", [(n, sentence) for _, sentence, n in known],
                   basis=None if plays else Basis.OTHERWISE)


# "share a director", "have a director in common": the same director
_SHARE = re.compile(r"^(?:share|shared|have\s+in\s+common)\s+(?:an?|the)\s+(?P<what>[^,;]+)$"
                    r"|^(?:have|had)\s+(?:an?|the)\s+(?P<common>[^,;]+?)\s+in\s+common$", re.I)


def _as_same(predicate: str) -> str:
    """"share a director" or "have a director in common" said as "the same director"."""
    shared = _SHARE.match(predicate)
    return f"have the same {shared.group('what') or shared.group('common')}" if shared \
        else predicate


def _without_named(text: str) -> str:
    """The text without the names that open with a country's ("the Georgia Writers Hall of
    Fame", "Japan Airlines"): they name an institution, not a place the thing is in."""
    def kept(name: re.Match[str]) -> str:
        first, _, rest = name.group(0).partition(" ")
        state = all(w.casefold() in _STATE_WORDS for w in rest.split())  # "Czech Republic"
        return "" if rest and countries_in(first) and not countries_in(rest) and not state \
            else name.group(0)
    return NAME.sub(kept, text)


# the words after a country's adjective in its own name: "Czech Republic", "Soviet Union"
_STATE_WORDS = frozenset({"republic", "union", "empire", "kingdom", "federation", "islands",
                          "emirates", "states", "confederation", "commonwealth", "dominion",
                          "free", "state", "reich", "sultanate", "caliphate", "khanate", "of",
                          "the", "democratic", "people's", "socialist", "federal"})


_TWO = re.compile(r"\b(?:both|same|each|either|neither|different)\b", re.I)  # two things
_RELATION_OR_OTHER = re.compile(r"\b(?:before|after|earlier|later|older|younger)\s+or\s+"
                                r"(?:before|after|earlier|later|older|younger)\b", re.I)
_JOINED = re.compile(r"\s(?:and|&)\s")  # two names in one: "Hour to Kill and Happen to Me"
# "not" and "never" as words of the question, not of a title ("Punk's Not Dead")
_NEGATED = re.compile(r"^\W*\w+n't\b|(?-i:\b(?:not|never|NOT|NEVER)\b)", re.I)
# what stands between two names that one question weighs against the other: "Was A born
# before B?", "Is A older than B?", "Is A from the same country as B?"
_RELATION = (r"\b(?:(?P<order>older|younger|earlier|later)\s+than"
             r"|(?P<degree>(?:more|fewer|less|larger|bigger|greater|higher|taller|smaller|"
             r"lower|shorter)(?:\s+[\w-]+){0,2}?)\s+than"
             r"|(?P<time>before|after)"
             r"|same\s+(?P<same>[\w ]{2,30}?)\s+as)\s+"
             # what the second one is, before its name: "than the actor B", "than actor B"
             r"(?:(?:the\s+)?(?:(?!(?:or|and|both|either|neither|not|after|before|of|with|in|"
             r"on|at|by|for|from|to|into)\b|[a-z]+ing\b)(?-i:[a-z][\w-]*\s+)){1,2}|the\s+)?")
_BETWEEN = re.compile(_RELATION + "$", re.I)  # all that stands between the two names
_BETWEEN_OPEN = re.compile(_RELATION, re.I)  # followed by the second thing


def _relative(question: str, intent: QueryIntent, sources: Sequence[Source]
              ) -> Verdict | None:
    """A yes/no question that weighs one named thing against another: "Was A born before
    B?", "Is A older than B?" (the years in their passages, as "Who was born first?"), "Is
    A from the same country as B?" (as "of the same nationality")."""
    names = sorted((n for n in weighed([e for e in intent.entities if e in question])),
                   key=question.find)
    for first, second in itertools.pairwise(names):
        start = question.find(first) + len(first)
        end = question.find(second, start)
        relation = _BETWEEN.search(question[start:end])
        # "Did A die before B was born?" weighs two kinds of year: not here; a beginning
        # against a beginning does ("established before B was first published")
        rest = question[end + len(second):].strip(" ?.!")
        # "than B, the Irish footballer": what B is, which the passage weighed must say
        described = re.fullmatch(r",\s*(?:the|a|an)\s+([^,;]+)", rest)
        if described:
            rest = ""
        if relation is not None and (not rest or _both_begun(
                question[start:start + relation.start()], rest)
                or (relation.group("degree") and _WHEN_MEASURED.fullmatch(rest))):
            weighed_pair = _weigh_pair(
                question, [_whole_title(question, first, sources), second], relation, sources)
            firsts = {_about(first, sources)}
            if weighed_pair is not None and described and not any(
                    set(terms(described.group(1))) <= set(terms(" ".join(
                        sentences(_text(sources[n]))[:2])))
                    for n, _ in weighed_pair.reasons if n not in firsts):
                return None  # the passage weighed is about another B
            return weighed_pair
    for first in names:  # the second a title its names split: "before Freud and Philosophy"
        start = question.find(first) + len(first)
        relation = _BETWEEN_OPEN.search(question, start)
        if relation is not None:
            second = question[relation.end():].strip(" ?.!")
            if re.match(r"[a-z]", second):  # "after members of B", "than half of B"
                continue
            # or a passage's title with small words ("Književni jug")
            if _titled(second) or second in names or _titles(second, sources):
                return _weigh_pair(question, [first, second], relation, sources)
    return None


# when a measure is taken, after the two names: "... than B at the 2010 census", "in 2015"
_WHEN_MEASURED = re.compile(r"(?:at|in|as\s+of|according\s+to|during|by)\s+(?:the\s+)?"
                            r"(1[0-9]{3}|20[0-9]{2})(?:\s+census)?", re.I)


# the verbs of a thing's beginning: "was founded", "was first published", "established"
_BEGUN = re.compile(r"(?:(?:was|were|is|are)\s+)?(?:first\s+)?(?:founded|established|formed|"
                    r"launched|created|started|opened|published|released|built|begun)\b",
                    re.I)


def _both_begun(first: str, second: str) -> bool:
    """Whether what the question says after each name is its beginning alone: "(magazine)
    established" and "was first published"; not "'s first album released" (the thing's own
    beginning is not its album's)."""
    first = re.sub(r"^[a-z]+\s+(?=\S)", "", first.strip())  # a kind before the verb
    return bool(_BEGUN.fullmatch(first) and _BEGUN.fullmatch(second))


def _whole_title(question: str, name: str, sources: Sequence[Source]) -> str:
    """The title the question's first name is the end of, from the question's verb on,
    when a passage is about that title and none about the name ("Woman on the Edge of
    Time" of "Was Woman on the Edge of Time published before Vida?", whose names are
    "Woman" and "Edge of Time"); else the name."""
    asked = _CLOSED.match(question)
    end = question.find(name) + len(name)
    if asked is None or _about(name, sources) is not None:
        return name
    title = re.sub(r"^the\s+", "", question[asked.end():end].strip(), flags=re.I)
    return title if _titled(title) and _about(title, sources) is not None else name


def _weigh_pair(question: str, pair: list[str], relation: re.Match[str],
                sources: Sequence[Source]) -> Verdict | None:
    found = [_about(name, sources) for name in pair]
    if found[0] is None or found[1] is None or found[0] == found[1]:
        return None
    sides = [(pair[0], found[0]), (pair[1], found[1])]
    if relation.group("same"):
        return _same(relation.group("same"), sides, sources, question)
    if relation.group("degree"):  # "Is A taller than B?", "... a larger population than B?"
        amounts = _each(sides, sources, lambda s: _amount(question, s))
        if amounts is None or amounts[0][0] == amounts[1][0]:
            return None
        return _yes_if((amounts[0][0] > amounts[1][0]) == bool(
            _MORE.search(relation.group("degree"))), amounts)
    known = _ordered_in_time(question, sides, sources, pair)
    if known is None or known[0][0] == known[1][0]:
        return None
    sooner = (relation.group("order") or relation.group("time")).casefold() in (
        "older", "earlier", "before")
    return _yes_if((known[0][0] < known[1][0]) == sooner, known)


def _single(question: str, intent: QueryIntent, sources: Sequence[Source]) -> Verdict | None:
    """A yes/no question about one named thing ("Is A a Japanese manga artist?", "Was A
    directed by B?", "Is the genus A endemic to Madagascar?"). No when the passage about it
    gives another value than the question does: a nationality in its opening ("an American
    actress" of an Israeli one), a country or US state it is in ("Is A in Zambia?" of a
    mountain in Malawi), who made it ("written by B" of a novel by C, who the passage never
    names); Yes when one sentence of the passage holds every word the question says of it
    (as written or as a form of the same word: "won" for "win"; or a kind of it in its
    opening: "singer" for "musician"); otherwise not decided."""
    found = _one_subject(question, intent)
    if found is None:
        return None
    subject, predicate = found
    n = _about(subject, sources)
    epithet = re.match(r"([a-z][\w-]+)\s+(.+)$", predicate)
    if epithet and epithet[1] not in STOPWORDS and _titles(f"{subject} {epithet[1]}", sources):
        # not "in" of "A in Alberta", which the phrase leaves out
        # a species its passage titles: "Silene latifolia", not the genus Silene
        subject, predicate = f"{subject} {epithet[1]}", epithet[2]
        n = _about(subject, sources)
    wanted = [w for w in re.findall(r"[\w'-]+", _plain_state(predicate))
              if w.casefold() not in STOPWORDS and terms(w)]
    if n is None or not wanted:
        return None
    said = sentences(_text(sources[n])) or [_text(sources[n])]
    contradicted = _contradicted(predicate, sources[n], said)
    if contradicted is not None:
        return Verdict("No", [(n, contradicted)], basis=Basis.OTHERWISE)
    born = _birth_asked(predicate)
    if born:  # "a French-born director", "born in Lyon, France"
        birth = next((k for k, sentence in enumerate(said) if born & set(_born_in(sentence))),
                     None)
        if birth is not None:
            return Verdict("Yes", [(n, _quote(said, birth))])
    made = _MADE_BY.match(predicate)
    if made:  # made by the one asked, as the opening says it, or nothing decided
        by = next((k for k, sentence in enumerate(said[:2]) if any(
            _made_so(made.group(1), sentence[:m.start()]) for m in re.finditer(
                r"\bby\s+" + re.escape(made.group(2)) + r"\b", sentence))), None)
        return Verdict("Yes", [(n, _quote(said, by))]) if by is not None else None
    denial = _denied(re.findall(r"[\w'-]+", predicate), said, subject)
    if denial is not None:  # "it is not a true sage"
        return Verdict("No", [(n, denial)], basis=Basis.OTHERWISE)
    opening = _opening_words(said)
    for k, whole in enumerate(said):
        sentence = _RANKED.sub(" ", whole)  # "the second-tallest" is not "the tallest"
        if all(_says(w, sentence) or (k < 2 and _kind_in(opening, w)) for w in wanted):
            return Verdict("Yes", [(n, _quote(said, k))])
    return None


def _made_so(verb: str, before: str) -> bool:
    """Whether "by <maker>" after `before` says the thing was made as `verb` says: "a short
    story by B", "written by B" or "written and directed by B" for "written by B", not
    "directed by B"."""
    done = re.search(r"([\w'-]+)(?:\s+and\s+([\w'-]+))?\s*$", before)
    made = {lexicon().participle_base(w) for w in done.groups() if w} - {None} if done else set()
    return not made or lexicon().participle_base(verb) in made


def _says(word: str, text: str, senses: bool = True) -> bool:
    """Whether the text says `word`: as written, in another form of it ("won" for "win") or,
    with `senses`, in another word of the same sense ("situated" for "located", "movie" for
    "film": for one sentence; over a whole passage some word shares a sense with almost
    any)."""
    if set(terms(word)) <= set(terms(text)) | set(terms(" ".join(
            w.replace("-", "") for w in re.findall(r"\w+(?:-\w+)+", text)))):  # "sub-range"
        return True
    parts = [p for p in word.casefold().split("-") if p]
    if len(parts) > 1 and _in_a_row(parts, text):  # "medium-sized" as "a medium size breed"
        return True
    written = {w for w in re.findall(r"[a-z][\w'-]*", text) if w not in STOPWORDS}
    return bool(_forms(word) & {form for w in written for form in _forms(w)}) or (
        senses and not lexicon().is_graded(word)
        and any(lexicon().synonyms(word, other) for other in written if len(other) > 3))


def _in_a_row(parts: list[str], text: str) -> bool:
    """Whether the text has a form of each part one after another, hyphenated or not."""
    said = re.findall(r"[^\W_]+", text.casefold())
    wanted = [_forms(p) for p in parts]
    return any(all(wanted[k] & _forms(said[at + k]) for k in range(len(parts)))
               for at in range(len(said) - len(parts) + 1))


_RANKED = re.compile(r"\b(?:second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
                     r"\d+(?:st|nd|rd|th)|one of the)[\s-]+[\w-]+", re.I)


@lru_cache(maxsize=8192)
def _forms(word: str) -> frozenset[str]:
    """The word's base forms: "won" -> {"won", "win"}, "geckos" -> {"geckos", "gecko"}; and
    the verb a noun of the one it is done to is made from ("inductee" -> "induct")."""
    base = lexicon().participle_base(word)
    lemma = lexicon().lemma(word).base
    made = [verb for verb in _made_from(lemma) if lexicon().is_verb(verb)][:1]
    return frozenset({word.casefold(), lemma, *([base] if base else []), *made})


def _made_from(noun: str) -> list[str]:
    """The verb a noun in "-ee" may be made from ("inductee", "employee"); not one in "-ion",
    whose verb is often another word ("edition", "version", "station")."""
    return [noun[:-2]] if len(noun) > 5 and noun.endswith("ee") else []


def _one_subject(question: str, intent: QueryIntent) -> tuple[str, str] | None:
    """The name a closed question asks about, right after its verb and at most two words of
    what kind it is ("Is the genus Stapelianthus ..."), and the rest it says of it (with those
    words: "genus endemic to Madagascar")."""
    asked = _CLOSED.match(question)
    if asked is None:
        return None
    # quotes around a title say nothing of it: "Is "Aiken Drum" a Scottish folk song?"
    rest = re.sub(r"[\"“”]", "", question[asked.end():]).strip()
    best: tuple[int, int, str, str] | None = None
    for entity in intent.entities:
        name = re.sub(r"^the\s+", "", entity, flags=re.I)  # "the Sussex"
        # "the 1949 film A Kiss for Corliss": a year and a kind before the name
        at = re.match(r"(?:[Tt]he\s+)?(?:(?:1\d{3}|20\d{2})\s+)?((?:[a-z][\w-]*\s+){0,2})"
                      + re.escape(name) + r"(?!\w)", rest)
        if at and (best is None or (len(at.group(1)), -len(name)) < (best[0], best[1])):
            best = (len(at.group(1)), -len(name), name, at.group(1) + rest[at.end():])
    # a title the names of the question split ("Woman on the Edge of Time written by ...")
    word = r"(?:[A-Z0-9][\w'.:-]*|" + _SMALL_WORD + r")(?!\w)"
    titled = re.match(rf"(?:[Tt]he\s+)?(?:(?:1\d{{3}}|20\d{{2}})\s+"
                      rf"(?P<kind>(?:[a-z][\w-]*\s+){{1,2}}))?({word}(?:\s+{word})*)", rest)
    if titled:
        kind = len(titled.group("kind") or "")  # "the 1949 film A Kiss for Corliss"
        words = titled.group(2).split()
        while words and words[-1] in _TITLE_WORDS:
            words.pop()
        title = " ".join(words)
        # not "Anna Lindqvist a Swedish painter": an article or a nationality ends a name
        plain_title = not any(w in ("a", "an") or is_nationality(w) for w in words[1:])
        said_of = rest[titled.start(2) + len(title):].strip(" ,?.!")  # "Lakeport in Ohio?"
        if _titled(title) and plain_title and said_of and (
                best is None or (best[0] == kind and len(title) > -best[1])):
            best = (kind, -len(title), title, rest[titled.start(2) + len(title):])
    if best is None:
        return None
    return best[2], best[3].strip(" ,?.!")


# the participles that only say where a thing is: "located in Chicago", "based in Leeds"
_PLACED = r"(?:located|situated|based|headquartered|found|held)"
_PLACING = re.compile(rf"\b{_PLACED}\s+(in|at|on|near)\b", re.I)
# where a thing is, or where it comes from: "located in", "from", "originate in"
_PLACED_IN = re.compile(rf"^(?:(?:{_PLACED}|originat(?:e|es|ed)|comes?|came)\s+)?(?:in|from)\s",
                        re.I)


def _birth_asked(predicate: str) -> set[str]:
    """The countries a "born in <country>" predicate asks about; empty for any other."""
    return set(countries_in(predicate)) if re.match(r"^born\s+in\s", predicate, re.I) \
        else set()


def _born_in(sentence: str) -> list[str]:
    """The countries a sentence says someone was born in: "born in Jaroslaw, Poland", "a
    French-born American director"."""
    places = [*_BIRTHPLACE.findall(sentence), *_BORN_ADJECTIVE.findall(sentence)]
    return [country for place in places for country in countries_in(place)]


_BORN_ADJECTIVE = re.compile(rf"\b([{CAPITAL}][\w'-]+)-born\b")
# "born in Jaroslaw, Poland", "born 3 May 1901 in Lyon, France": the place's names
_BIRTHPLACE = re.compile(rf"\bborn\s+(?:[\w,]+\s+){{0,4}}?in\s+"
                         rf"((?:[{CAPITAL}][\w'-]*,?\s*){{1,5}})")
# "directed by B", "film directed by B" (what kind of thing it is, before)
_MADE_BY = re.compile(r"^(?-i:[a-z][\w-]*\s+){0,2}?(written|directed|produced|created|composed|"
                      r"designed|developed|published|founded|built)\s+by\s+(.+)$", re.I)


def _contradicted(predicate: str, source: Source, said: list[str]) -> str | None:
    """The sentence of a passage that gives its subject another value than `predicate`
    does (see `_single`), or None."""
    text = " ".join(said)
    # a nationality ("an American actress") is the one the passage's opening gives, whatever
    # other countries it names later ("studied under a French painter")
    nationality = countries_in(" ".join(w for w in re.findall(r"[\w'-]+", predicate)
                                        if is_nationality(w)))
    # where a thing is ("in Zambia", "located in Ohio"); never "born in France": one's
    # nationality says nothing of where one was born
    place = _PLACED_IN.match(predicate)
    for asked, found_in, anywhere in (
            (nationality, countries_in, False),
            (countries_in(predicate) if place else [], countries_in, True),
            (us_states_in(predicate) if place else [], us_states_in, True),
            (provinces_in(predicate) if place else [], provinces_in, True)):
        opening = _first_named(found_in, said) if asked else None
        if opening is not None:  # a place named anywhere in the passage may be where it is
            given = found_in(text if anywhere else opening[1])
            if not set(asked) & set(given):
                return opening[1]
    born = _birth_asked(predicate)
    if born and not born & set(countries_in(text)):
        # where one was born, as the passage says it ("born in Jaroslaw, Poland"), and the
        # asked-for country named nowhere in it
        birth = next((s for s in said if _born_in(s) and not born & set(_born_in(s))),
                     None)
        if birth is not None:
            return birth
    made = _MADE_BY.match(predicate)
    if made:
        verb = made.group(1).casefold()
        maker = phrase(made.group(2))
        # the one the opening says made it ("a 1937 film directed by C"): someone else, and
        # the asked one named nowhere ("a novel by C") or only as another's maker ("the first
        # film of the story, directed by B")
        agent = rf"\b{verb}\s+by\s+({NAME.pattern})" if maker in phrase(text) \
            else rf"\b(?:{verb}\s+)?by\s+({NAME.pattern})"
        for sentence in said[:2]:
            named = re.search(agent, sentence)
            # the one named as the maker is someone else, whoever else the sentence names
            # ("directed by C and written by B" for "directed by B")
            if named is not None:
                if maker not in phrase(named.group(1)):
                    return sentence
                break
    return _kind_otherwise(predicate, said) or _reframed(predicate, said, text)


def _reframed(predicate: str, said: list[str], text: str) -> str | None:
    """The opening sentence that places the subject in another city of the US state the
    question names: "a concert in Nashville, Tennessee" for "held in Memphis, Tennessee?";
    None when the passage names the question's city anywhere. Only a city beside its state
    is weighed: "in the Lyngen Alps" says nothing against "in Sweden", nor "from
    Southampton" against "from England"."""
    asked = re.search(rf"({NAME.pattern}),\s+({NAME.pattern})$", predicate)
    if asked is None or not us_states_in(asked.group(2)) \
            or phrase(asked.group(1)) in phrase(text):
        return None
    state = re.escape(asked.group(2))
    for sentence in said[:2]:
        other = re.search(rf"({NAME.pattern}),\s+{state}\b", sentence)
        if other is not None and phrase(other.group(1)) != phrase(asked.group(1)):
            return sentence
    return None


def _split_titles(question: str, sources: Sequence[Source]) -> tuple[list[str], str] | None:
    """The two things of "Are A and B both ...?" when a title holds "and" ("The Palace and
    the Fortress and The Scarlet Flower"): the split at an "and" where each side is a
    passage's subject (by its title, else its first words), and what is said of both.
    Without "both" ("Were A and B released in the same year?"), the second thing ends where
    the longest run of words a passage titles does ("Inventory", not "Inventory released")."""
    asked = re.match(r"^\W*\w+\s+(.+?)\s+both\s+(.+?)[?.!]*$", question)
    if asked is None:
        return _titled_pair(question, sources)
    sides = _split_at_and(asked.group(1), sources)
    return None if sides is None else ([name for name, _ in sides], asked.group(2))


def _split_at_and(span: str, sources: Sequence[Source]) -> list[tuple[str, int]] | None:
    """The two things "A and B" names, each with the passage about it, split at the "and"
    where each side is a passage's subject, by its title if one can be; None where no split
    makes two."""
    splits = []
    for joint in re.finditer(r"\s+and\s+", span):
        # not the kind the question calls them first ("the bands A and B")
        sides = [re.sub(r"^(?:the\s+)?(?:(?-i:[a-z][\w-]*)\s+)*", "", side, flags=re.I)
                 for side in (span[:joint.start()], span[joint.end():])]
        first, second = (_about(side, sources) for side in sides)
        if first is not None and second is not None and first != second:
            pair = [(sides[0], first), (sides[1], second)]
            titled = sum(same_phrase(title_subject(sources[n].title), side) for side, n in pair)
            splits.append((-titled, pair))
    return min(splits, key=lambda split: split[0])[1] if splits else None


# "Did the same director make A and B?", "Did the same composer write the scores for A and
# B?": what the two share, named before them
_SAME_FIRST = re.compile(r"^\W*(?i:is|are|was|were|do|does|did|has|have|had)\s+(?i:the\s+)?"
                         r"(?i:same)\s+(?P<same>[a-z]+(?:\s+[a-z]+)?)\s+[a-z]+\s+(?:both\s+)?"
                         r"(?:(?:the|a|an)\s+[a-z]+\s+(?:for|of|to|in|on)\s+(?:both\s+)?)?"
                         r"(?P<things>(?:the\s+(?:[a-z]+\s+)?)?[A-Z\"“].+?)[?.!]*$")


def _same_first(question: str, sources: Sequence[Source]) -> Verdict | None:
    """"Did the same director make A and B?" read as "Were A and B made by the same
    director?"; None when the question is not so, or A and B are not two passages'."""
    asked = _SAME_FIRST.match(question)
    sides = _split_at_and(asked.group("things"), sources) if asked else None
    if asked is None or sides is None:
        return None
    return _same(asked.group("same"), sides, sources, question)


# "both", "each" or "all" after the two things: it says both, not what is said of them
_EACH = re.compile(r"^(?:both|each|all)\s+", re.I)


def _titled_pair(question: str, sources: Sequence[Source]) -> tuple[list[str], str] | None:
    """"Were (the films) A and B released in the same year?" split where a passage titles
    the longest run of words right before "and" and one the longest run right after it; the
    rest is what the question says of both."""
    asked = _CLOSED.match(question)
    if asked is None:
        return None
    rest = question[asked.end():].strip().rstrip("?.! ")

    def title(words: list[str]) -> str:  # with its year, which `_about` reads
        return re.sub(r"^the\s+", "", " ".join(words), flags=re.I)

    def titled(words: list[str]) -> int | None:  # word for word, short words too
        return _about_dated(title(words), sources, lambda name, s: all_words(
            title_subject(s.title)) == all_words(name))

    for joint in re.finditer(r"\s+and\s+", rest):
        before, after = rest[:joint.start()].split(), rest[joint.end():].split()
        # a side is a whole name: not "Harbour" of "Tin Harbour", nor "Tin Harbour" of "Tin
        # Harbour Blues"
        first_at = next((start for start in range(len(before))
                         if not (start and before[start - 1][:1].isupper())
                         and titled(before[start:]) is not None), None)
        if first_at is None:
            continue
        first, first_n = title(before[first_at:]), titled(before[first_at:])
        # what the question calls the second first: "the 1956 film Tosca", "the album B"
        called = next((k for k, word in enumerate(after) if not re.fullmatch(
            r"(?-i:[a-z][\w-]*)|1[0-9]{3}|20[0-9]{2}", word)), 0)
        for start in dict.fromkeys((0, called)):
            for end in range(len(after) - 1, start, -1):  # something must be said of both
                n = titled(after[start:end])
                if n is not None and n != first_n and not after[end][:1].isupper():
                    return [first, title(after[start:end])], _EACH.sub(
                        "", " ".join(after[end:]))
    return None


def _own_predicates(question: str, subjects: list[str]) -> list[str] | None:
    """What "Is A a play and B an opera?" says of each thing, when it says one of each: ["a
    play", "an opera"]; else None."""
    first, second = subjects[:2]
    each = re.search(re.escape(first) + r"\s+((?:a|an)\s+[^,?]+?),?\s+and\s+(?:the\s+)?"
                     + re.escape(second) + r"\s+((?:a|an)\s+[^?]+?)[?.!]*$", question)
    if each is None or any(_TWO.search(part) or _BETWEEN_OPEN.search(part)
                           for part in each.groups()):
        return None  # "... a song from the same year?" weighs the two: not one of each
    return [each.group(1), each.group(2)]


def _each_described(predicates: list[str], sides: list[tuple[str, int]],
                    sources: Sequence[Source], question: str) -> Verdict | None:
    """Yes when each passage says what the question says of its thing (see `_described`),
    No when one does not; the side a No rests on is quoted first."""
    found = [_described(predicate, [side], sources, question)
             for predicate, side in zip(predicates, sides, strict=True)]
    settled = [v for v in found if v is not None]
    nos = [v for v in settled if v.answer == "No"]
    if nos:
        return Verdict("No", [r for v in [*nos, *(v for v in settled if v.answer != "No")]
                              for r in v.reasons], basis=nos[0].basis)
    if len(settled) < len(found):
        return None
    basis = next((v.basis for v in settled if v.basis is not None), None)
    return Verdict("Yes", [r for v in settled for r in v.reasons], basis=basis)


def _subjects(question: str, intent: QueryIntent) -> tuple[list[str], str]:
    """The two things a yes/no question asks about ("Are A and B both ...") and what it says
    of them (the words after the second)."""
    # not a name in brackets after another: "USS New Jersey (BB-62)" is one ship
    bracketed = " ".join(re.findall(r"\(([^()]*)\)", question))
    names = weighed([e for e in intent.entities if e in question and e not in bracketed])
    for first, second in itertools.pairwise(names):
        joined = re.search(re.escape(first) + r"(?:\s*\([^()]{1,40}\))?"
                           r"(?:\s+[\w-]+){0,3}?[\"”']?\s*,?\s+and\s+"
                           r"(?:the\s+)?(?:\w+\s+){0,2}?[\"“']?" + re.escape(second), question)
        if joined:
            rest = question[joined.end():].strip(" ,?.!")
            rest = _EACH.sub("", rest)
            return [first, second], rest
    return [], ""


def _same(attribute: str, sides: list[tuple[str, int]], sources: Sequence[Source],
          question: str = "") -> Verdict | None:
    asked = attribute.casefold()
    named = [name for name, _ in sides]
    if re.fullmatch(r"(?:\w+\s+)?year", asked):  # "established in the same year"
        return _compare(sides, sources, lambda s: _year(question, s, named))
    if re.fullmatch(r"(?:\w+\s+)?(?:day|date)", asked):  # "born on the same day": one date
        known = _ordered_in_time(question, sides, sources, named)
        if known is None or any(float(value).is_integer() for value, _, _ in known):
            return None  # a year alone, or two years: not said which day, or not one day
        return _yes_if(len({value for value, _, _ in known}) == 1, known)
    span = {"decade": 10, "century": 100}.get(asked.split()[-1] if asked.split() else "")
    if span:  # "formed in the same decade": the years' decades (centuries as counted)
        def part(source: Source) -> tuple[int, str] | None:
            year = _year(question, source, named)
            return None if year is None else (int(year[0] - (span == 100)) // span, year[1])
        return _compare(sides, sources, part)
    if re.fullmatch(r"(?:\w+\s+)?(?:profession|occupation|job|career|line of work)", asked):
        return _same_role(sides, sources)
    if re.fullmatch(r"(?:playing\s+|field\s+)?positions?(?:\s+(?:in|on|at)\s+.+)?", asked):
        # goalkeeper, defender; "the same position in American football"
        return _overlap(sides, sources, _positions_of)
    if re.fullmatch(r"(?:political\s+)?part(?:y|ies)", asked):  # Labor, Australian Democrats
        return _same_party(sides, sources)
    if re.fullmatch(r"(?:kind\s+of\s+|type\s+of\s+)?sports?", asked):  # tennis, football
        return _overlap(sides, sources, _sports_of)
    if re.fullmatch(r"(?:musical\s+)?instruments?", asked):  # bassist and guitarist
        return _overlap(sides, sources, _players_of)
    if re.search(r"\b(?:nationality|country|countries|national)\b", asked):
        # a Scottish and an English manager are not of one nationality; a British one is
        # not known to be either
        nations = _each(sides, sources, _home_nation)
        if nations is not None and any(v in _NATIONS for v, _, _ in nations):
            return _yes_if(len({v for v, _, _ in nations}) == 1, nations)
        return _compare(sides, sources, _country)
    state = _STATE_ASKED.fullmatch(asked)
    if state and (not state.group(1) or countries_in(state.group(1).capitalize())):
        # "the same state", "the same Canadian province": the first one each opening names
        return _compare(sides, sources, _state)
    if re.fullmatch(r"(?:home\s*)?(?:city|town)", asked):
        return _same_city(sides, sources, question)
    counted = re.search(r"\bnumber of (\w+)", asked)
    if counted:
        noun = counted.group(1)
        return _compare(sides, sources, lambda s: _count_of(noun, s))
    role = next((noun for noun in _AGENTS if re.search(rf"\b{noun}s?\b", asked)), None)
    if role is not None:  # "lyricist Tim Rice", else who wrote it
        return _compare(sides, sources, functools.partial(_role_named, role)) \
            or _same_maker(sides, sources, lambda s: _agent(_AGENTS[role], s)
                           or _role_making(role, s))
    if re.fullmatch(r"(?:publication\s+|release\s+)?(?:frequency|schedule)", asked):
        return _compare(sides, sources, _frequency_of)
    bred = re.fullmatch(r"breeds?(?:\s+of\s+([a-z]+?)s?)?", asked)
    if bred:  # "the same breed of dog": "a basset hound" and "a male basset hound"
        return _overlap(sides, sources, functools.partial(_breeds, bred.group(1) or "animal"))
    graded = re.fullmatch(r"([a-z]+)\s+of\s+(?:an?\s+|the\s+)?([a-z]+?)s?", asked)
    if graded:  # "the same level of city": "a prefecture-level city", "a county-level city"
        grade, kind = graded.groups()
        found = _compare(sides, sources, lambda s: _graded(grade, kind, s))
        if found is not None:
            return found
    # the noun asked: "division" of "division of the American League"
    noun = asked.split(" of ")[0].split()[-1] if asked.split() else ""
    if noun in _NUMBERED_PARTS:  # "the same season": which one, by its number
        numbered = _compare(sides, sources, functools.partial(_numbered, noun))
        if numbered is not None:
            return numbered
    work = lexicon().lemma(noun).base or noun  # "albums": "album"
    if work in _WORKS:  # "the same Shakespeare play": its title
        maker = " ".join(w for w in attribute.split()[:-1] if w[:1].isupper())
        titles = _each(sides, sources, functools.partial(_work_titled, work, maker))
        if titles is not None:
            if any(a != b and a in b for a, b in itertools.permutations(t for t, _, _ in titles)):
                return None  # "Manon Lescaut" and "L'histoire ... de Manon Lescaut": maybe one
                # work by its short and its whole title
            return _yes_if(len({title for title, _, _ in titles}) == 1, titles)
    if noun == "family":  # "in the borage family, Boraginaceae", "in the pink family"
        families = _each(sides, sources, _family_of)
        if families is not None:
            return _same_family(families)
    if lexicon().is_noun(noun):  # "the same plant family": the name each opening gives it
        return _compare(sides, sources, lambda s: _named_as(noun, s, asked))
    return None


def _breeds(kind: str, source: Source) -> tuple[frozenset[str], str] | None:
    """The most particular kinds of `kind` ("dog") the passage's first sentences name
    ("basset", not "hound", of "an anthropomorphic basset hound"), and that sentence."""
    said = sentences(_text(source))
    for at, sentence in enumerate(said[:3]):
        words = re.findall(r"[A-Za-z][a-z-]{2,}", sentence)
        kinds = {w.casefold() for w in words if w.casefold() != kind
                 and lexicon().is_noun(w) and lexicon().is_kind_of(w.casefold(), kind)}
        particular = {w for w in kinds if not any(
            other != w and lexicon().is_kind_of(other, w) for other in kinds)}
        # a breed named with a capitalised word before its kind: "a Golden Retriever" is
        # not "a Labrador Retriever"
        named = {f"{m.group(1)} {m.group(2)}".casefold() for m in re.finditer(
            r"(?<=\s)(?=([A-Z][a-z]+)\s+([A-Z][a-z]+)\b)", sentence)
            if m.group(2).casefold() in particular}
        particular = {w for w in particular if not any(n.endswith(f" {w}") for n in named)}
        if particular or named:
            return frozenset(particular | named), _quote(said, at)
        if re.search(rf"\b{re.escape(kind)}s?\b", sentence):
            return None  # the kind said without a breed: "a German Shepherd police dog"
    return None


# a family's scientific name ends so (plants -aceae, animals -idae); a common one is the word
# before "family": "the pink family", "the mint family, Lamiaceae"
_FAMILY_NAME = re.compile(r"(?<![\w-])([A-Z][a-z]+aceae)\b|\bfamily,?\s+([A-Z][a-z]+idae)\b")
_COMMON_FAMILY = re.compile(r"\bthe\s+((?-i:[a-z][a-z-]+))\s+family\b")
_LIVING_KIND = re.compile(r"\b(?:genus|genera|species|subspecies)\b")


def _family_of(source: Source) -> tuple[tuple[str | None, str | None], str] | None:
    """The scientific and the common name the first two sentences give their subject's
    family (either may be None), and that sentence."""
    said = sentences(_text(source)) or []
    for at, sentence in enumerate(said[:2]):
        if not re.search(r"\bfamily\b", sentence):
            continue
        scientific = _FAMILY_NAME.search(sentence)
        # a common name where the sentence speaks of a living kind, not "the royal family"
        common = _COMMON_FAMILY.search(sentence) if _LIVING_KIND.search(sentence) else None
        if scientific or common:
            return ((scientific.group(scientific.lastindex or 1) if scientific else None,
                     common.group(1) if common else None), _quote(said, at))
    return None


def _same_family(families: list[tuple[tuple[str | None, str | None], str, int]]
                 ) -> Verdict | None:
    """Yes or No by the scientific names where both passages give one, else Yes where both
    give one common name (two common names may be one family's: "daisy" and "aster"); None
    otherwise."""
    (first, _, _), (second, _, _) = families[:2]
    if first[0] is not None and second[0] is not None:
        return _yes_if(first[0] == second[0], families)
    if first[1] is not None and first[1] == second[1]:
        return _yes_if(True, families)
    return None


# the parts of a series that passages number: "the fourth season", "season 4"
_NUMBERED_PARTS = frozenset({"season", "series", "edition", "round", "volume", "book",
                             "chapter", "episode", "stage", "leg", "part", "generation"})
_ORDINALS = {word: n for n, word in enumerate(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
     "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
     "seventeenth", "eighteenth", "nineteenth", "twentieth"], start=1)}
_ORDINAL = "|".join(_ORDINALS)


def _numbered(noun: str, source: Source) -> tuple[tuple[int, str], str] | None:
    """Which `noun` of its series the passage's opening puts its subject in ("the fourth
    season", "the 4th season", "season 4"), and that sentence; None when it does not say,
    or gives two."""
    said = sentences(_text(source)) or []
    for at, sentence in enumerate(said[:2]):
        found = {(_ORDINALS.get(m.group(1).casefold()) or int(re.sub(r"\D", "", m.group(1))),
                  _of_what(sentence, m.end()))
                 for m in re.finditer(rf"\b({_ORDINAL}|\d+(?:st|nd|rd|th))\s+{noun}\b",
                                      sentence, re.I)}
        found |= {(int(m.group(1)), _of_what(sentence, m.end()))
                  for m in re.finditer(rf"\b{noun}\s+(\d+)\b", sentence, re.I)}
        if found:
            return (found.pop(), _quote(said, at)) if len(found) == 1 else None
    return None


def _of_what(sentence: str, at: int) -> str:
    """What the numbered part is of, as the sentence goes on: its quoted title or the name it
    ends on ("of the American animated television series "Adventure Time"": the same number
    of another show is another part)."""
    of = re.match(r"\s+of\s+(?:the\s+)?([^,.;(]+)", sentence[at:])
    if of is None:
        return ""
    named = re.search(r"[\"“]([^\"”]+)[\"”]", of.group(1)) \
        or re.search(rf"({NAME.pattern})\s*$", of.group(1))  # its title, as the series'
    return phrase(named.group(1) if named else of.group(1))  # name: "Adventure Time"


# the works a thing may be part of, whose title a passage quotes: "the same album"
_WORKS = frozenset({"album", "play", "film", "movie", "novel", "book", "series", "show",
                    "opera", "musical", "game", "anthology", "collection"})
# a work that gathers others: a song's compilation album is not its album
_GATHERED = re.compile(r"\b(?:compilation|live|greatest|hits|best-of|box|anthology|"
                       r"soundtrack|collected)\s+(?:[\w-]+\s+)?$", re.I)
# a quoted title and the word before it: 'his 1976 album "Thirty Three & 1/3"'
_QUOTED_WORK = re.compile(r"([\w'’-]+),?\s+(?:\(\d{4}\)\s+)?[\"“]([^\"”]{2,80})[\"”]")


def _work_titled(noun: str, maker: str, source: Source) -> tuple[str, str] | None:
    """The title the passage's opening quotes for the work (`noun`) its subject is part of:
    after that noun or a kind of it ('released on his 1976 album "Thirty Three & 1/3"'), or
    after the maker's name the question gives ('Shakespeare's romantic tragedy "Romeo and
    Juliet"' for "the same Shakespeare play"); and that sentence."""
    said = sentences(_text(source)) or []
    for at, sentence in enumerate(said[:2]):
        for quoted in _QUOTED_WORK.finditer(sentence):
            word = quoted.group(1).casefold()
            before = sentence[:quoted.start(2)]
            if _GATHERED.search(sentence[:quoted.start(1)]):
                continue  # not 'later appeared on the compilation album "1967–1970"'
            if word == noun or lexicon().is_kind_of(word, noun) \
                    or lexicon().synonyms(word, noun) or (maker and re.search(
                        rf"\b{re.escape(maker.split()[-1])}['’]s\s+(?:[\w-]+\s+){{0,2}}\S?$",
                        before)):
                return phrase(quoted.group(2)), _quote(said, at)
    return None


# the playing positions an opening may name, and other names of one ("a striker is a
# forward, a goaltender a goalkeeper")
_POSITIONS = ("goalkeeper", "defender", "midfielder", "winger", "forward", "sweeper",
              "pitcher", "catcher", "shortstop", "infielder", "outfielder", "quarterback",
              "linebacker", "cornerback", "point guard", "shooting guard", "small forward",
              "power forward", "wicket-keeper", "batsman", "bowler", "fly-half", "scrum-half",
              "running back", "wide receiver", "tight end", "offensive lineman",
              "defensive lineman", "defensive back", "kicker", "punter", "defenceman",
              "left wing", "right wing", "safety", "defensive end", "defensive tackle",
              "offensive tackle", "offensive guard", "nose tackle", "long snapper",
              "first baseman", "second baseman", "third baseman")
_SAME_POSITION = {"goaltender": "goalkeeper", "defenseman": "defenceman",
                  "placekicker": "kicker", "centre-back": "defender",
                  "center-back": "defender", "full-back": "defender", "fullback": "defender",
                  "striker": "forward", "centre-forward": "forward", "center-forward": "forward"}
_POSITION = re.compile(r"\b(" + "|".join(sorted(map(re.escape, [*_POSITIONS, *_SAME_POSITION]),
                                                key=len, reverse=True)) + r")s?\b", re.I)


def _positions_of(source: Source) -> tuple[frozenset[str], str] | None:
    """The positions the opening says its subject plays ("a football defender", "played
    goalkeeper", "a small forward"), and that sentence; None for none."""
    described, opening = _describing(source)
    found = frozenset(_SAME_POSITION.get(m.group(1).casefold(), m.group(1).casefold())
                      for m in _POSITION.finditer(described))
    return (found, opening) if found else None


# "the Australian Labor Party", "the Communist Party of China"; "an Australian Democrats
# member", "a Republican senator"
_PARTY = re.compile(r"\b((?:[A-Z][\w-]*\s+){1,3})Party\b(?:\s+of\s+((?:the\s+)?(?:[A-Z][\w-]*"
                    r"\s*){1,3}))?")
_PARTY_MEMBER = re.compile(r"\b(?:an?|the)\s+((?:[A-Z][\w-]*\s+){1,3})(?:member|politician|"
                           r"senator|representative|candidate|MP|MLA|MEP|councillor)\b")


def _party_of(source: Source) -> tuple[tuple[frozenset[str], frozenset[str]], str] | None:
    """The party the opening sentences first put the passage's subject in, as its words
    ("Labor" of "the Australian Labor Party" or "a Labor member") and the nations it names
    ("Australian"; "China" of "the Communist Party of China"), and that sentence; None for
    none. A place is no party ("an Australian politician", "a Texas politician", "a United
    States senator"), nor part of one ("a Texas Democratic politician")."""
    said = sentences(_text(source))
    for k, sentence in enumerate(said[:3]):
        named = sorted([*_PARTY.finditer(sentence), *_PARTY_MEMBER.finditer(sentence)],
                       key=lambda m: m.start(1))
        for found in named:
            words = found.group(1).split()
            if words and words[-1] == "Party":  # "a British Labour Party politician"
                words = words[:-1]
            nations = set()
            while cut := _leading_place(words):  # "Texas"; a country's is its nation
                if is_country_name(" ".join(words[:cut])):  # ("British")
                    nations.add(" ".join(words[:cut]))
                words = words[cut:]
            nations |= {w for w in words if is_nationality(w)}
            if found.re is _PARTY and found.group(2):
                nations.add(found.group(2).strip())
            words = [w for w in words if not is_nationality(w)]
            if words:
                return (frozenset(terms(" ".join(words))),  # "Chinese" and "China" alike
                        frozenset(countries_in(" ".join(sorted(nations))))), _quote(said, k)
    return None


def _leading_place(words: list[str]) -> int:
    """How many of the words open with a place's name, the longest ("New South Wales")."""
    return max((n for n in range(1, len(words) + 1)
                if is_region(" ".join(words[:n])) or is_country_name(" ".join(words[:n]))),
               default=0)


def _same_party(sides: list[tuple[str, int]], sources: Sequence[Source]) -> Verdict | None:
    """Yes when the passages name one party ("Labor" and "the Australian Labor Party"), No
    when they name two ("Democratic" and "Free Democratic"; the Labor parties of Australia and
    Britain); None when one names none."""
    known = _each(sides, sources, _party_of)
    if known is None:
        return None
    (words, nations), (other_words, other_nations) = (v for v, _, _ in known[:2])
    return _yes_if(words == other_words
                   and (not nations or not other_nations or nations == other_nations), known)


def _sports_of(source: Source) -> tuple[frozenset[str], str] | None:
    """The sports the opening says its subject plays ("a tennis player", "a golfer"), kinds
    of sport in WordNet, with the word before that makes another sport of it ("table
    tennis", "ice hockey"), and that sentence; None for none. A footballer plays association
    football; "a football player" says not which football, and is none."""
    def sport(words: list[str], at: int) -> str | None:
        word = words[at]
        if word in ("footballer", "soccer"):
            return "association football"
        for base in (word, word[:-2], f"{word[:-2]}ing") if word.endswith("er") else (word,):
            if len(base) > 3 and lexicon().is_kind_of(base, "sport"):
                before = words[at - 1] if at else ""
                if before not in STOPWORDS and before not in _PLAYED_AS \
                        and lexicon().is_noun(f"{before}_{base}"):
                    return f"{before} {base}"  # "table tennis", "american football"
                return None if base == "football" else base
        return None

    return _valued(source, sport)


# words before a sport that say how it is played, not which sport it is
_PLAYED_AS = frozenset({"professional", "amateur", "former", "retired", "competitive",
                        "international", "olympic", "college", "collegiate", "youth"})


def _valued(source: Source, value: Callable[[list[str], int], str | None]
            ) -> tuple[frozenset[str], str] | None:
    """The values `value` reads off the words of the part of a passage's first sentence that
    describes its subject (`_describing`: "a former footballer" of "a former footballer
    turned golf commentator", "a singer" of "a singer, the daughter of jazz pianist B"), and
    that sentence."""
    described, opening = _describing(source)
    words = [w.casefold() for w in re.findall(r"[A-Za-z][a-z]*(?:-[a-z]+)*", described)]
    found = frozenset(filter(None, (value(words, at) for at in range(len(words)))))
    return (found, opening) if found else None


def _describing(source: Source) -> tuple[str, str]:
    """The part of a passage's first sentence that describes its subject, up to where it
    turns to someone else, and the whole sentence."""
    opening = (sentences(_text(source)) or [""])[0]
    return _TURNS.split(opening, maxsplit=1)[0], opening


_TURNS = re.compile(r"\b(?:turned|married|daughter|son|wife|husband|father|mother|brother|"
                    r"sister|partner|uncle|aunt|nephew|niece|cousin|alongside|with|whose|than|"
                    r"like|after|before)\b", re.I)


def _players_of(source: Source) -> tuple[frozenset[str], str] | None:
    """What instruments the opening says its subject plays, as the nouns for their players
    ("bassist", "guitarist"; "bass guitarist" is a bassist; a singer's voice and the
    "multi-instrumentalist" name none), and that sentence; None for none."""
    def player(words: list[str], at: int) -> str | None:
        word = words[at]
        if word in ("instrumentalist", "multi-instrumentalist", "musician") \
                or not lexicon().is_kind_of(word, "instrumentalist") \
                or lexicon().is_kind_of(word, "singer"):
            return None
        if word == "guitarist" and at and words[at - 1] == "bass":
            return "bassist"
        return lexicon().lemma(word).base

    return _valued(source, player)


def _graded(grade: str, kind: str, source: Source) -> tuple[str, str] | None:
    """The grade a passage's opening gives its subject as a kind of thing, in a compound
    before the kind ("prefecture-level" of "a prefecture-level city" for the level of city),
    and that sentence."""
    for sentence in (sentences(_text(source)) or [])[:2]:
        given = re.search(rf"\b(\w+-{re.escape(grade)})\s+{re.escape(kind)}", sentence, re.I)
        if given:
            return given.group(1).casefold(), sentence
    return None


# what a band is called where a passage names it ("the punk trio Test Icicles"), after a kind
# of music (not "the comedy trio B", "a group of painters")
_MUSICAL_GROUPS = ("band", "group", "duo", "trio", "quartet", "quintet", "sextet", "outfit",
                   "supergroup")
_GENRES = ("rock", "pop", "punk", "metal", "folk", "jazz", "indie", "vocal", "grunge", "blues",
           "soul", "rap", "hop", "electronic", "synth-pop", "synthpop", "country", "reggae",
           "ska", "emo", "funk", "disco", "techno", "house", "dance-punk", "garage",
           "psychedelic", "alternative", "gospel", "choral", "R&B", "boy", "girl", "musical")
_GENRE_GROUP = re.compile(rf"\b((?i:{'|'.join(map(re.escape, _GENRES))}))\s+"
                          rf"(?i:{'|'.join(_MUSICAL_GROUPS)})\b")


def _named_as(noun: str, source: Source, asked: str = "") -> tuple[str, str] | None:
    """The name a passage's opening gives its subject's `noun`: "Malvaceae" of "in the
    family Malvaceae" or "a Malvaceae family plant"; and that sentence. A year before the
    name is part of it ("the 1968 Summer Olympics"); a name made only of the question's own
    words ("Summer" of "the same Summer Olympics") is none without one."""
    if noun in _MUSICAL_GROUPS:  # the band as named so, else as "the punk trio B"
        as_bands = _GENRE_GROUP.sub(rf"\1 {noun}", source.content or source.snippet)
        return _named_as_exact(re.escape(noun), source, asked) or _named_as_exact(
            re.escape(noun), source.model_copy(update={"content": as_bands}), asked)
    return _named_as_exact(re.escape(noun), source, asked)


def _named_as_exact(noun: str, source: Source, asked: str = "") -> tuple[str, str] | None:
    """`_named_as` for `noun` as a regular expression."""
    name = r"([A-Z][\w-]+(?:\s+[A-Z][\w-]+)*)"  # case-sensitive: "Rosaceae", not "... that"
    said = sentences(_text(source)) or []
    for at, sentence in enumerate(said[:2]):
        # the noun as a word of its own, not of a name ("Major League Baseball")
        after = next((m for m in re.finditer(
            rf"\b(?i:{noun})\s+(?:of\s+)?(?:the\s+)?{name}", sentence)
            if not re.search(r"[A-Z][\w-]*\s+$", sentence[:m.start()])), None)
        if after is not None and set(terms(after.group(1))) <= set(terms(asked)):
            after = None  # "the Central Division of the Coast League" for "the same division
            # of the Coast League": the name before the noun
        given = after or re.search(
            rf"(?:\b(1[0-9]{{3}}|20[0-9]{{2}})\s+)?{name}\s+(?i:{noun})\b"
            r"(?:\s+([IVX]{1,4})\b)?(?!\s+[A-Z])", sentence)
        if given:
            # "the family B" gives a name; "the 1968 B Olympics", "B War II" its edition too
            edition, named, numeral = (None, given.group(1), None) if given is after \
                else given.groups()
            if numeral:  # "World War II" and "World War I" are two wars; not a nationality
                # before it ("an English World War I flying ace"), nor both in one sentence
                if len(set(re.findall(rf"\b(?i:{noun})\s+([IVX]{{1,4}})\b", sentence))) > 1:
                    return None
                named = " ".join(itertools.dropwhile(is_nationality, named.split())) or named
                return f"{phrase(named)}{numeral.casefold()} ", _quote(said, at)
            if edition is not None:  # one edition only: not "the 1972 and 1976 Olympics"
                near = sentence[max(0, given.start() - 40):given.end()]
                editions = len(re.findall(rf"\b(?i:{noun})\b", sentence))
                if len(_YEAR.findall(near)) > 1 or editions > 1:
                    return None
                return f"{edition} {phrase(named)}", _quote(said, at)
            if set(terms(named)) <= set(terms(asked)):
                return None
            return phrase(named), _quote(said, at)
    return None


def _each(sides: list[tuple[str, int]], sources: Sequence[Source],
          value_of: Callable[[Source], tuple[V, str] | None], alike: bool = False
          ) -> list[tuple[V, str, int]] | None:
    """Each side's value, the sentence that gives it and its passage; None when a passage
    does not give it."""
    found = []
    for _, n in sides:
        value = value_of(sources[n])
        if value is None and alike:  # of two passages titled alike ("Ed Wood" and "Ed Wood
            # (film)"), the other may give who made it
            n, value = next(((k, v) for k in _titled_alike(n, sources)[1:]
                             if (v := value_of(sources[k])) is not None), (n, None))
        if value is None:
            return None
        found.append((value[0], value[1], n))
    return found


def _overlap(sides: list[tuple[str, int]], sources: Sequence[Source],
             values_of: Callable[[Source], tuple[frozenset[str], str] | None]
             ) -> Verdict | None:
    """Yes when the sides' passages give the same values (a position, a sport, an
    instrument), No when no value of one is or is a kind of a value of the other; None
    when one gives none, or they share some and not others ("midfielder or sweeper" and
    "sweeper"; a drummer and a percussionist)."""
    known = _each(sides, sources, values_of)
    if known is None:
        return None
    first, second = (v for v, _, _ in known[:2])
    if first == second:
        return _yes_if(True, known)
    related = any(a == b or lexicon().is_kind_of(a, b) or lexicon().is_kind_of(b, a)
                  for a in first for b in second)
    return None if related else _yes_if(False, known)


def _yes_if(holds: bool, known: list[tuple[V, str, int]]) -> Verdict:
    return Verdict("Yes" if holds else "No", [(n, said) for _, said, n in known])


def _compare(sides: list[tuple[str, int]], sources: Sequence[Source],
             value_of: Callable[[Source], tuple[V, str] | None]) -> Verdict | None:
    known = _each(sides, sources, value_of)
    return None if known is None else _yes_if(len({v for v, _, _ in known}) == 1, known)


def _years(question: str, sides: list[tuple[str, int]], sources: Sequence[Source]
           ) -> list[tuple[float, str, int]] | None:
    """Each side's year (`_year`), as `_each` gives it."""
    return _each(sides, sources, lambda s: _year(question, s, [name for name, _ in sides]))


def _dated(relation: str, year: int, question: str, sides: list[tuple[str, int]],
           sources: Sequence[Source]) -> Verdict | None:
    known = _years(question, sides, sources)
    if known is None:
        return None
    if relation == "in":  # "both released in 2003"
        return _yes_if(all(v == year for v, _, _ in known), known)
    before = relation in ("before", "until")
    return _yes_if(all((v < year) if before else (v > year) for v, _, _ in known), known)


_EVENT = re.compile(r"\b(?:born|died|formed|founded|established|released|published|built|"
                    r"completed|opened|created|launched|premiered|started|begun|began|"
                    r"introduced|discovered|invented|written|composed|painted|produced|"
                    r"directed|made|first\s+\w+ed)\b", re.I)


def _period(predicate: str) -> tuple[int, int] | None:
    """The years a decade or a century the predicate names spans ("in the 1990s": 1990 to
    1999; "in the 20th century": 1901 to 2000, as centuries are counted); None for none."""
    decade = re.search(r"\b(?:in|during)\s+the\s+(1[0-9]{2}0|20[0-9]0)'?s\b", predicate)
    if decade:
        return int(decade.group(1)), int(decade.group(1)) + 9
    century = re.search(r"\b(?:in|during)\s+the\s+(\d{1,2})(?:st|nd|rd|th)[\s-]+century\b",
                        predicate, re.I)
    if century:
        last = int(century.group(1)) * 100
        return last - 99, last
    return None


def _within(period: tuple[int, int], question: str, sides: list[tuple[str, int]],
            sources: Sequence[Source]) -> Verdict | None:
    known = _years(question, sides, sources)
    if known is None:
        return None
    return _yes_if(all(period[0] <= v <= period[1] for v, _, _ in known), known)


def _from(predicate: str, sides: list[tuple[str, int]],
          sources: Sequence[Source]) -> Verdict | None:
    """Whether each side is from the countries the predicate names, by its opening; by the
    nation of the United Kingdom when the predicate names one ("both Welsh bands": an English
    band is not, and a British one is not known to be)."""
    nations = home_nations_in(predicate)
    if nations:
        known = _each(sides, sources, _home_nation)
        return None if known is None else _yes_if(all(v in nations for v, _, _ in known),
                                                  known)
    countries = countries_in(predicate)
    known = _each(sides, sources, _birth_country if _birth_asked(predicate) else _country)
    return None if known is None else _yes_if(all(v in countries for v, _, _ in known), known)


def _one_from_elsewhere(predicate: str, found: list[int], sources: Sequence[Source]
                        ) -> Verdict | None:
    """No when the one side with a passage is of another nationality than "both American
    films?" asks, as its opening says it right after its verb ("is a 1989 Italian drama
    film"), naming no other country; else None (the other side is not known)."""
    asked = re.search(r"(?:^\W*|\bboth\s+)([A-Z][a-z]+)\s+[a-z][\w-]*\W*$", predicate)
    countries = countries_in(asked.group(1)) if asked and is_nationality(asked.group(1)) \
        else []
    if not countries:
        return None
    opening = (sentences(_text(sources[found[0]])) or [""])[0]
    said = re.search(r"\b(?:is|was)\s+an?\s+(?:\d{4}\s+)?([A-Z][a-z]+)(?![\w-])\s+[a-z]", opening)
    if said is None or not is_nationality(said.group(1)) \
            or set(countries_in(opening)) != set(countries_in(said.group(1))):
        return None  # "a Mexican-American actor", "a Canadian and American actor"
    return Verdict("No", [(found[0], opening)], basis=Basis.OTHERWISE) \
        if not set(countries_in(said.group(1))) & set(countries) else None


def _birth_country(source: Source) -> tuple[str, str] | None:
    """The country the opening says its subject was born in; else, where it gives no place
    of birth, its nationality ("an Irish writer"); None for a birthplace in no country it
    knows ("a Liverpool-born novelist of Irish descent" was not born in Ireland)."""
    said = sentences(_text(source))
    for sentence in said[:1]:  # the opening's, not "His parents were born in Naples"
        born = _born_in(sentence)
        if born:
            return born[0], sentence
        if _BORN_ADJECTIVE.search(sentence) or _BIRTHPLACE.search(sentence):
            return None
    return _country(source)


def _in_state(states: list[str], sides: list[tuple[str, int]],
              sources: Sequence[Source]) -> Verdict | None:
    """Whether each side is in the state or province the predicate names ("both located in
    Ohio?", "both endemic to New South Wales?"), by the first one its opening names: Yes when
    each is; No when one is in another and its passage names the asked one nowhere; else
    None (a passage naming no state leaves it to the words it holds)."""
    if len(states) > 1:  # "both endemic to New South Wales and Queensland": each in both?
        return None
    known = _each(sides, sources, _state)
    if known is None:
        return None
    if all(value in states for value, _, _ in known):
        return _yes_if(True, known)
    elsewhere = any(value not in states and not set(states) & set(states_in(_text(sources[n])))
                    for value, _, n in known)
    return Verdict("No", [(n, sentence) for _, sentence, n in known], basis=Basis.OTHERWISE) \
        if elsewhere else None


_PART_OF = re.compile(r"\b(?:units?|components?)\s+of\s+(?:the\s+)?"
                      r"([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")


def _described(predicate: str, sides: list[tuple[str, int]],
               sources: Sequence[Source], question: str = "") -> Verdict | None:
    """Whether each passage says what the question says of both ("documentaries about war"):
    each word of it is in the passage (in another form or sense: "won" for "win"), or a word
    of its opening is a kind of it in WordNet ("singer" for "musicians"). Yes when all do; No
    when a passage's opening makes its subject another kind ("a genus of fungi" for "genera
    of plants") or a passage about one of them does not say it. The verb of "Did A and B
    both include B?" may be said in other words ("formed by ... B"): a Yes that rests on the
    rest is `loose`. A person whose opening gives the asked noun without which kind ("a
    Colombian artist" for "visual artists") is a `broad` Yes; a thing said with another noun
    of its category ("a soft drink manufacturer" for "soft drink companies") is not
    settled."""
    # "units of the Yugoslav Air Force" is said by "a squadron of Yugoslav Air Force": the
    # noun that only relates them to what follows is not asked
    took_part = _TAKE_PART.search(predicate) is not None
    part_of = _PART_OF.search(predicate)
    plain = _PART_OF.sub(r" of \1", _plain_state(predicate))
    wanted = [w for w in re.findall(r"[\w'-]+", plain)
              if w.casefold() not in STOPWORDS and terms(w)]
    if not wanted:
        return None
    first = predicate.split()[0] if predicate.split() else ""
    verb = first if (len(wanted) > 1 and wanted[0] == first and _forms(first) & _RELATING
                     and re.match(r"^\W*(?:do|does|did)\b", question, re.I)) else None
    # "published by Steve Jackson Games" said as "a card game by Steve Jackson Games": the
    # maker without the verb (not "produced by" for "directed by")
    by = re.match(r"^(\w+)\s+by\s+((?-i:[A-Z][\w&'.-]*)(?:\s+(?-i:[A-Z][\w&'.-]*))*)\W*$",
                  predicate)
    maker = by.group(2) if by and by.group(1).casefold() in _MADE_THINGS else None
    openings = [sentences(_text(sources[n]))[:2] or [_text(sources[n])] for _, n in sides]
    kinds = [_kind_otherwise(predicate, opening) or _frequency_otherwise(predicate, opening)
             or _rank_otherwise(predicate, opening) for opening in openings]
    if any(kinds):  # each side as its opening says what it is, the other kind among them
        return Verdict("No", [(n, kind or opening[0]) for (_, n), kind, opening
                              in zip(sides, kinds, openings, strict=True)], basis=Basis.OTHERWISE)
    reasons = []
    holds = loose = only_part = True
    denied = False  # a side's passage says it is not what is asked
    lacking = False  # a side lacks more than a describing word its opening leaves unsaid
    renamed = False  # a side may say the asked noun in other words
    broad = True  # what a side lacks is only which kind of the asked noun it is
    words_asked = re.findall(r"[\w'-]+", predicate)
    # the words right before the noun the question ends on: which kind of it
    kind_words = set(itertools.takewhile(lambda w: w not in STOPWORDS,
                                         (w.casefold() for w in reversed(words_asked[:-1]))))
    stems = set(terms(predicate))
    for name, n in sides:
        said = sentences(_text(sources[n])) or [_text(sources[n])]
        text = " ".join(said)
        opening = _opening_words(said)
        missing = [w for w in wanted if not (_says(w, text, senses=False)
                                              or _kind_in(opening, w)
                                              or _said_by_its_noun(w, words_asked, text)
                                              or _said_as_adjective(w, words_asked, text)
                                              or (w.casefold() == "part"
                                                  and _placed_within(predicate, text))
                                              or _once_so(w, text, words_asked))]
        if not missing and _described_otherwise(wanted, words_asked, said):
            # "animated films" of "a 1994 American drama film", though a later sentence
            # names "animated films" of its director: what the opening says it is does not
            # say so, nor that it is not (a "hip hop group" is a rap group): not settled
            renamed, holds, loose = True, False, False
            reasons.append((n, _quote(said, 0)))
            continue
        if part_of and not missing and not re.search(
                rf"\b[a-z][\w-]*\s+of\s+(?:the\s+)?{re.escape(part_of.group(1))}", text):
            # "a squadron of Yugoslav Air Force" is one of its units; "took over aircraft
            # from the Royal Air Force" says nothing of it: not settled by this side
            renamed, holds, loose = True, False, False
            reasons.append((n, _quote(said, 0)))
            continue
        denial = None if missing else _denied(words_asked, said, name)
        if denial is not None:  # "it is not a true sage": said, and denied
            denied = True
            reasons.append((n, denial))
            continue
        holds = holds and not missing
        only_part = only_part and {w.casefold() for w in missing} <= _PART_WORDS
        # "made by Granada Television" of "directed ... for Granada Television" or
        # "produced by Granada Television": made by it in other words
        made_anyhow = by is not None and missing == [by.group(1)] \
            and by.group(1).casefold() in _MADE_ANYHOW and re.search(
                rf"\b(?:{'|'.join(_MAKING)})\s+(?:by\s+{NAME.pattern}\s+)?(?:by|for)\s+"
                rf"(?:the\s+)?{re.escape(by.group(2))}(?![\w'-])", text) is not None
        loose = loose and (missing in ([], [verb]) or made_anyhow or (
            by is not None and maker is not None and missing == [by.group(1)]
            and _made_by(maker, by.group(1), text)))
        undescribed = bool(missing) and _undescribed(predicate, missing, said[:2])
        # "connected to the Charlotte Sting" of a passage naming what he did there: a vague
        # relation is said in other words or not at all, never a No
        other_words = bool(missing) and not undescribed \
            and (_renamed(predicate, missing, said[:2])
                 or {w.casefold() for w in missing} <= _VAGUE_RELATIONS
                 or _continent_by_its_countries(missing, text))
        renamed = renamed or other_words
        lacking = lacking or (bool(missing) and not undescribed and not other_words)
        # only words right before the noun are which kind of it: not "win" of "win an Oscar"
        broad = broad and {w.casefold() for w in missing} <= kind_words
        best = max(range(len(said)), key=lambda k: len(stems & set(terms(said[k]))))
        reasons.append((n, _quote(said, best if (missing in ([], [verb]) or made_anyhow)
                                  and stems & set(terms(said[best])) else 0)))
    if denied:
        return Verdict("No", reasons, basis=Basis.OTHERWISE)
    if holds:
        return Verdict("Yes", reasons)
    if took_part and only_part:  # "took part in the Battle of X" of a passage naming
        # the battle: fought in it, or only named near it; not settled either way
        return None
    if loose:  # every side says all but the verb
        return Verdict("Yes", reasons, basis=Basis.LOOSE)
    if renamed:  # "soft drink companies?" of "a soft drink manufacturer": not settled
        return None if not lacking else Verdict("No", reasons, basis=Basis.ABSENCE)
    if not lacking:  # "both visual artists?" of "a Mexican painter": it does not say which
        # kind of artist; of a person, the question's reading, graded Low. Of a thing, an
        # opening that leaves out its genre ("an American band" for "heavy metal bands")
        # mostly has none: not settled
        person = bool(words_asked) and lexicon().is_person(words_asked[-1])
        return Verdict("Yes", reasons, basis=Basis.BROAD) if broad and person else None
    return Verdict("No", reasons, basis=Basis.ABSENCE)


_CONTINENTS = frozenset({"asia", "africa", "europe", "america", "americas", "oceania",
                         "antarctica"})
_COMPASS = frozenset({"north", "south", "central", "east", "west", "southeast", "southwest",
                      "northeast", "northwest", "eastern", "western", "northern", "southern"})


def _continent_by_its_countries(missing: list[str], text: str) -> bool:
    """Whether a passage lacks only a continent the question names ("native to Asia") while
    it names countries ("native to China and Japan"): it may say so by them, no No."""
    lacked = {w.casefold() for w in missing}
    return bool(lacked & _CONTINENTS) and lacked <= _CONTINENTS | _COMPASS \
        and bool(countries_in(text))


# relations a passage may say otherwise or not at all; and repute ("known for voice work"
# of "has done voice work"; "famous" of a painter no passage calls so), never a No
_VAGUE_RELATIONS = frozenset({"connected", "associated", "affiliated", "linked", "related",
                              "involved", "tied", "known", "famous", "noted", "renowned"})
_TAKE_PART = re.compile(r"\b(?:take|takes|took|taken|taking)\s+part\s+in\b", re.I)
_PART_WORDS = frozenset({"take", "takes", "took", "taken", "taking", "part"})


# the verbs whose maker a made thing's noun before "by" gives ("a card game by B" is
# published by B); of a work, "a film by B" or "an album by B" says another role
# making in general ("made by B"), which a passage says with a verb of making: "produced by
# B", "directed by C for B" (not "an album by B", which names its artist)
_MADE_ANYHOW = frozenset({"made"})
_MAKING = ("produced", "directed", "made", "created", "developed", "built", "filmed", "shot",
           "commissioned")
_MADE_THINGS = {"published": ("game",), "developed": ("game", "software"),
                "manufactured": ("device", "vehicle", "product"),
                "designed": ("structure", "device", "vehicle")}


def _made_by(maker: str, verb: str, text: str) -> bool:
    """Whether the text names `maker` after "by" and the noun of a thing `verb` makes, not
    after another verb: "a card game by Steve Jackson Games" for "published by"."""
    kinds = _MADE_THINGS.get(verb.casefold(), ())
    return any(any(lexicon().is_kind_of(before.group(1), kind) for kind in kinds)
               for before in re.finditer(rf"\b([a-z]+)\s+by\s+{re.escape(maker)}\b", text))


_ONCE_ASKED = frozenset({"originally", "formerly", "initially", "previously"})
_ONCE_SAID = r"\b(?:former(?:ly)?|original(?:ly)?|initial(?:ly)?|previous(?:ly)?|once|" \
    r"(?:built|began|started)\s+as)\s+(?:an?\s+|the\s+)?(?:[\w'-]+\s+){0,3}?"


def _once_so(word: str, text: str, asked: list[str]) -> bool:
    """Whether the text says a thing was once what the question asks it "originally" was,
    that noun right after ("a former Eastern Orthodox church" for "originally churches"; not
    "housed in the former Midland Bank headquarters" for "originally hotels")."""
    if word.casefold() not in _ONCE_ASKED or not asked:
        return False
    noun = lexicon().lemma(asked[-1]).base or asked[-1].casefold()
    return re.search(rf"{_ONCE_SAID}{re.escape(noun)}", text, re.I) is not None


def _said_by_its_noun(word: str, asked: list[str], text: str) -> bool:
    """Whether an adjective in "-al" that the question puts before its last noun stands in
    the text as the noun it is made from, before that same noun: "musical duos" as "a country
    music duo" (not "a film about an experiment" for "experimental films")."""
    noun = word.casefold()[:-2]
    if not (word.casefold().endswith("al") and len(noun) >= 4 and len(asked) >= 2
            and asked[-1] != word and lexicon().is_noun(noun)):
        return False
    heads = {asked[-1].casefold(), lexicon().lemma(asked[-1]).base}
    return any(re.search(rf"\b{re.escape(noun)}\s+{re.escape(head)}\b", text, re.I)
               for head in heads)


def _denied(asked: list[str], said: list[str], subject: str) -> str | None:
    """The sentence that says its subject (by name or as "it") is not what the question asks
    of it ("Although commonly known as Texas sage, it is not a true sage" for "true sages"),
    or None; not one that says so of another ("Mork, which is not a city"), nor of a time
    ("was not a city until 1921")."""
    words = [w.casefold() for w in asked if w.casefold() not in STOPWORDS]
    if not words or not lexicon().is_noun(words[-1]):
        return None
    noun = lexicon().lemma(words[-1]).base or words[-1]
    last = rf"(?:{re.escape(noun)}|{re.escape(words[-1])})"
    kind = r"\s+".join([*map(re.escape, words[:-1]), last])
    denial = re.compile(rf"(?:^|[,;]\s*|\b(?:but|and|although|though)\s+)"
                        rf"(?:it|he|she|they|{re.escape(subject)})\s+(?:is|was|are|were)\s+"
                        rf"not\s+(?:an?\s+|the\s+)?{kind}\b(?!\s+(?:until|before|after|when|"
                        r"in|during|since)\b)", re.I)
    return next((sentence for sentence in said if denial.search(sentence)), None)


def _described_otherwise(wanted: list[str], asked: list[str], said: list[str]) -> bool:
    """Whether a passage's first sentence leaves out a describing word of the question's last
    noun ("animated" of "animated films") where it gives that noun with describing words of
    its own ("a 1994 American drama film"): what the passage says it is."""
    if len(asked) < 2 or not said or not asked[-1].islower() \
            or not lexicon().is_noun(asked[-1]) \
            or any(w.casefold() in STOPWORDS for w in asked):  # a noun phrase, no more
        return False
    head = _forms(asked[-1])
    words = re.findall(r"[\w'-]+", said[0])
    # the noun, or a kind right below it ("an Italian action thriller" of "films")
    at = next((k for k, w in enumerate(words) if head & _forms(w.casefold())
               or (w.islower() and lexicon().is_kind_of(w, asked[-1], steps=1))), None)
    if at is None:
        return False
    own = []  # the noun's own describing words, back to its article
    for word in reversed(words[:at]):
        if word.casefold() in STOPWORDS:
            break
        own.append(word)
    # adjectives only: "animated", not "music" of "music magazines" ("a rock magazine" is
    # one) nor "originally"
    describing = [w for w in wanted if w.islower() and not head & _forms(w)
                  and lexicon().is_adjective(w) and not lexicon().is_noun(w)]
    if not any(w.islower() and not lexicon().is_verb(w) for w in own) or not describing:
        return False
    return any(not (_says(w, said[0], senses=False) or _said_by_its_noun(w, asked, said[0]))
               for w in describing)


def _placed_within(predicate: str, text: str) -> bool:
    """Whether the text places its subject in the named thing the question says it is part
    of: "a mountain in the Karakoram mountain range" for "part of the Karakoram mountain
    range"."""
    whole = re.match(r"^(?:an?\s+)?part\s+of\s+(?:the\s+)?([A-Z][\w'-]*(?:\s+[\w'-]+)*)\W*$",
                     predicate)
    return whole is not None and re.search(
        rf"\b(?:in|within|part\s+of)\s+(?:the\s+)?{re.escape(whole.group(1))}\b", text,
        re.I) is not None


def _said_as_adjective(word: str, asked: list[str], text: str) -> bool:
    """Whether a noun the question puts before another noun stands in the text as its
    adjective in "-al" before that same noun: "a parent genus" as "its parental genera"
    (the reverse of `_said_by_its_noun`)."""
    at = next((k for k, w in enumerate(asked[:-1]) if w == word), None)
    if at is None or len(word) < 4 or not lexicon().is_noun(word):
        return False
    head = _forms(asked[at + 1])
    return any(head & _forms(m.group(1)) for m in re.finditer(
        rf"\b{re.escape(word.casefold())}i?al\s+([\w-]+)", text, re.I))


def _undescribed(predicate: str, missing: list[str], opening: list[str]) -> bool:
    """Whether a passage lacks only words that describe the noun the question ends on
    ("visual" of "visual artists") while its opening gives that noun, or a kind right below
    it, with no describing word of its own before it ("a Colombian artist", "a Mexican
    painter", "screenwriter, director and producer"): the passage does not say which kind,
    so its silence is no No. "A children's nature magazine" for "sports magazines" describes
    it otherwise, and so does "an American rock band" for "rap metal bands"."""
    words = re.findall(r"[\w'-]+", predicate)
    if len(words) < 2 or not lexicon().is_noun(words[-1]):
        return False
    head, describing = words[-1], {w.casefold() for w in words[:-1]}
    if not {w.casefold() for w in missing} <= describing:
        return False
    if any(w[:1].isupper() for w in missing):  # a name ("Labor Party politicians"): an
        return False  # opening that leaves it out says another ("an independent member")
    found = False
    for sentence in opening:
        for word in re.finditer(r"[\w'-]+", sentence):
            if not (_says(head, word.group(0), senses=False)  # the noun, or a kind of it
                    or lexicon().is_kind_of(word.group(0), head, steps=1)):  # one step
                continue  # below: "painter" of "artist", not "songwriter"
            found = True
            before = sentence[:word.start()].rstrip()
            while True:  # past the nationalities and names: "a bimonthly American magazine"
                last = re.search(r"([\w'-]+)$", before)
                if last is None or not last.group(1)[:1].isupper():
                    break
                before = before[:last.start()].rstrip()
            last = re.search(r"([\w'-]+)$", before)
            if last is not None and last.group(1).casefold() not in STOPWORDS \
                    and last.group(1).casefold() not in describing:
                return False  # another describing word: "a nature magazine"
        if found:  # the first sentence giving the noun says what it is
            return True
    return False


def _renamed(predicate: str, missing: list[str], opening: list[str]) -> bool:
    """Whether a passage lacks only the noun the question ends on while its opening gives
    the words before that noun followed by another noun of the same category ("a soft drink
    manufacturer" for "soft drink companies", "a documentary film director" for
    "documentary filmmakers"): it may say the same in other words, so its silence is no No.
    "A rock singer" for "rock bands" is a person, not a group: that is a No, and so is
    another person ("a film actor" for "film directors"), unless it is a kind of the asked
    one in some sense ("a documentary film director" for "documentary filmmakers").
    Nationalities and names do not count among the words before: "an American newspaper" is
    no magazine."""
    words = re.findall(r"[\w'-]+", predicate)
    if len(words) < 2 or [w.casefold() for w in missing] != [words[-1].casefold()] \
            or not words[-1].islower() or not lexicon().is_noun(words[-1]):
        return False  # not a name: "in the family Apiaceae" of "the family Cistaceae"
    head = words[-1]
    person = lexicon().is_person(head)

    def renames(noun: str) -> bool:
        # every person noun is of one category: a person is said otherwise only by a kind
        # of the asked one in some sense ("director" as a film director of "filmmaker"),
        # never by another ("a film actor" is no film director)
        return lexicon().is_kind_of(noun, head, steps=2, every_sense=True) if person \
            else lexicon().same_category(noun, head)

    describing = [w for w in words[:-1] if w.casefold() not in STOPWORDS
                  and not w[:1].isupper() and not is_nationality(w)]
    if not describing:
        return False
    for sentence in opening:
        said = re.findall(r"[\w'-]+", sentence)
        for at in range(len(said)):
            if not _says(describing[-1], said[at], senses=False) or not all(
                    any(_says(w, x, senses=False) for x in said[max(0, at - 4):at + 1])
                    for w in describing):
                continue
            if any(lexicon().is_noun(x) and x.casefold() not in STOPWORDS and renames(x)
                   for x in said[at + 1:at + 5]):
                return True
    return False


# verbs that only relate a thing to what the question says of it, which a passage says in
# other words ("formed by ... bassist B" for "include B"); never one that tells of an event
# ("win", "die"), which the passage must say
_RELATING = frozenset({"include", "contain", "feature", "have", "belong", "compete", "focus",
                       "share", "consist", "comprise", "participate", "appear", "involve",
                       "cover", "use", "serve", "concern", "specialize", "specialise", "air",
                       "broadcast", "run", "play", "star", "perform", "operate", "work"})
# nouns that say what kind of thing something is: "a genus of fungi", "a type of bread"
_KINDS = frozenset({"genus", "species", "subspecies", "family", "type", "kind", "sort",
                    "breed", "variety", "genre", "style", "order", "class", "tribe"})
_KIND_ENDS = re.compile(r"[;.()]|\b(?:that|which|who|from|with|native|endemic|found|"
                        r"known\s+as|by|for)\b")


def _kind_otherwise(predicate: str, said: list[str]) -> str | None:
    """The opening sentence that makes the subject another kind than `predicate` does ("a
    genus of fungi" for "a genus of plants"; "a genus of moths" is one of insects), or
    None."""
    asked = re.search(r"\b([a-z]+)\s+of\s+(?:the\s+)?([a-z][\w-]*)", predicate)
    if asked is None or lexicon().lemma(asked.group(1)).base not in _KINDS:
        return None
    noun, kind = lexicon().lemma(asked.group(1)).base, asked.group(2)
    if lexicon().lemma(kind).base in _KINDS:  # "a species of the genus Acacia": a rank
        return None
    for sentence in said[:2]:
        for given in re.finditer(r"\b([a-z]+)\s+of\s+(?=(.{1,200}))", sentence):
            if lexicon().lemma(given.group(1)).base != noun:
                continue
            words = re.findall(r"[\w'-]+", _KIND_ENDS.split(given.group(2), 1)[0])[:8]
            if any(_says(kind, w) or lexicon().is_kind_of(w, kind) for w in words):
                return None
            return sentence
    return None


_RANKS = frozenset({"genus", "species", "subspecies", "family", "subfamily", "phylum"})
# the rank a passage's opening gives its subject: the head of the noun phrase after its verb
# ("is a species of ...", "is a small genus in ..."; not "is a moth of the family ...")
_RANK_GIVEN = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|one\s+of\s+(?:the\s+)?(?:\d+\s+)?)\s*"
                         r"(?:[a-z-]+\s+){0,2}?(genus|genera|species|subspecies|family|"
                         r"subfamily|phylum)\b")


def _rank_otherwise(predicate: str, said: list[str]) -> str | None:
    """The opening sentence that makes the subject another rank than the one the question
    ends on ("both genera?" of "a species of flowering plant in the genus Matthiola": the
    first rank after its verb is what it is), or None."""
    words = re.findall(r"[a-z]+", predicate.casefold())
    asked = lexicon().lemma(words[-1]).base if words else ""
    if asked not in _RANKS or any(w in STOPWORDS for w in words):
        return None  # "genera", "plant genera"; not "a genus of", "in the mint family"
    for sentence in said[:1]:
        given = _RANK_GIVEN.search(sentence)
        first = lexicon().lemma(given.group(1)).base if given else None
        if first is not None and first != asked:
            return sentence
    return None


# how often something comes out: "bi-monthly" is not "monthly"
_FREQUENCY = re.compile(r"(?<![\w-])(daily|weekly|bi-?weekly|fortnightly|semi-?monthly|monthly|"
                        r"bi-?monthly|quarterly|semi-?annual(?:ly)?|annual(?:ly)?|yearly)"
                        r"(?![\w-])")  # lower case: not the Daily Mail


def _frequency(word: str) -> str:
    plain = word.casefold().replace("-", "").removesuffix("ly").removesuffix("ual")
    return {"ann": "year", "year": "year", "bimonth": "bimonth", "biweek": "biweek",
            "fortnight": "biweek", "semiann": "semiann"}.get(plain, plain)


def _frequency_of(source: Source) -> tuple[str, str] | None:
    """How often the passage's opening sentences say its subject comes out ("published
    quarterly": "quarter"), and that sentence; None when they do not say, or say two."""
    said = sentences(_text(source)) or []
    for at, sentence in enumerate(said[:3]):
        found = {_frequency(m.group(1)) for m in _FREQUENCY.finditer(sentence)
                 if _PUBLISHED.match(sentence, m.end())
                 or _PUBLISHING.search(sentence[:m.start()])}
        if found:
            return (found.pop(), _quote(said, at)) if len(found) == 1 else None
    return None


# how often a publication comes out, not an annual party it hosts: "a monthly magazine", "a
# quarterly peer-reviewed medical journal", "is published monthly"
_PUBLISHED = re.compile(r"\s+(?:[\w-]+\s+){0,3}?(?:magazine|journal|newspaper|publication|"
                        r"periodical|review|bulletin|newsletter|digest|tabloid|paper)s?\b", re.I)
_PUBLISHING = re.compile(r"\b(?:published|issued|appears|printed|released)\s+$", re.I)


def _frequency_otherwise(predicate: str, said: list[str]) -> str | None:
    """The opening sentence that gives only other frequencies than the question's ("published
    quarterly" for "published monthly"), or None."""
    asked = {_frequency(m) for m in _FREQUENCY.findall(predicate)}
    if not asked:
        return None
    given = [(sentence, {_frequency(m) for m in _FREQUENCY.findall(sentence)})
             for sentence in said]
    if any(asked & found for _, found in given):
        return None
    return next((sentence for sentence, found in given if found), None)


def _plain_state(predicate: str) -> str:
    """The predicate with "state" after a US state's name left out: "from Washington state"
    is said by "formed in Ellensburg, Washington"; and without the participle that only
    places it ("located in Chicago" is said by "a skyscraper in Chicago")."""
    predicate = _PLACING.sub(r"\1", predicate)
    for state in us_states_in(predicate):
        predicate = re.sub(rf"\b{re.escape(state)}\s+state\b", state, predicate, flags=re.I)
    return predicate


def _opening_words(said: list[str]) -> list[str]:
    """The lower-case words of a passage's first two sentences, where it says what its
    subject is."""
    return [w for w in re.findall(r"(?<![\w'-])[a-z][\w'-]+", " ".join(said[:2]))
            if w not in STOPWORDS]  # not "ron" of "Iron", nor "in" (indium, a metal)


def _kind_in(opening: list[str], word: str) -> bool:
    """Whether a word of the `opening` names a kind of `word` in WordNet ("singer" of
    "musician", "actress" of "actor")."""
    return any(lexicon().is_kind_of(o, word) for o in opening)


def _quote(said: list[str], at: int) -> str:
    """Sentence `at`, with the ones before it back to the passage's first when it leans on
    them ("It is native to ...")."""
    if at and re.match(r"^\W*(?:it|its|they|their|he|his|she|her|this|these|the)\b", said[at],
                       re.I):
        return " ".join(said[max(0, at - 2):at + 1]) if at <= 2 else said[at]
    return said[at]


# ---- what a passage gives ------------------------------------------------------------------

def _country(source: Source) -> tuple[str, str] | None:
    """The first country the passage's opening sentence names (its subject's nationality or
    place), and that sentence; the United States for a place in one of its states ("in
    Midtown Manhattan, New York City"), India for one in Tamil Nadu."""
    said = sentences(_text(source))
    surname = _surname_country(source)

    def origins(sentence: str) -> list[str]:
        return _origins(_without_surname(sentence, surname) if surname else sentence)

    return _first_named(origins, said) or _first_named(
        lambda sentence: ["United States"] if us_states_in(sentence) else [], said) \
        or _first_named(province_countries_in, said) \
        or _by_title(countries_in, source, said)


def _without_surname(sentence: str, surname: str) -> str:
    """The sentence without `surname` where it ends a name (after a capitalised word or a
    quoted nickname: 'Julian "Fighting Farrier" Holland'), keeping the country it also names
    ("born in Cork, Ireland", "a footballer from Jordan")."""
    def kept(found: re.Match[str]) -> str:
        before = sentence[:found.start()].split()
        word = before[-1] if before else ""
        ends_name = bool(re.fullmatch(r"[\"“(]?[A-Z][\w'.-]*[\"”)]?|[\"“][^\"”]*[\"”]", word)) \
            and not word.endswith(",")
        return " " if ends_name else found.group(0)

    return re.sub(rf"\b{re.escape(surname)}\b", kept, sentence)


def _surname_country(source: Source) -> str:
    """The last word of the passage's subject when it names a country and the words before
    it do not: a surname ("Julian Holland", "Michael Jordan"), not where the subject is
    from; else ""."""
    words = title_subject(source.title).split()
    if len(words) < 2 or not words[-1][:1].isupper():
        return ""
    return words[-1] if countries_in(words[-1]) and not countries_in(" ".join(words[:-1])) \
        else ""


# a country something was made or done for, not where it is from: "produced for the Japanese
# Empire by the Kingdom of Italy"
_FOR_A_COUNTRY = re.compile(r"(\b(?:produced|made|built|manufactured|developed|designed|"
                            rf"constructed)\b[^.;]{{0,60}}?)\bfor\s+the\s+(?:[{CAPITAL}][\w-]*\s*)+")


def _origins(sentence: str) -> list[str]:
    """The countries a sentence names, but one it says something was made for (not one a
    person "competed for"), or one a person's forebears came from ("of Irish descent")."""
    return countries_in(_DESCENT.sub(" ", _FOR_A_COUNTRY.sub(r"\1 ", sentence)))


_DESCENT = re.compile(rf"\bof\s+(?:[{CAPITAL}][\w-]*(?:,?\s+(?:and\s+)?|\s*-\s*)){{1,3}}"
                      r"(?:descent|ancestry|heritage|extraction|parentage)\b")


def _by_title(found_in: Callable[[str], list[str]], source: Source, said: Sequence[str]
              ) -> tuple[str, str] | None:
    """The first value `found_in` reads in the words that set the passage's title apart
    from others ("Look (UK magazine)"), and the passage's first sentence."""
    # a nation and a kind of thing: "(UK magazine)", "(American band)"; not "(Vietnam War
    # documentary)", a subject
    apart = re.search(r"\((\S+)\s+[a-z][a-z -]*\)\s*$", source.title)
    found = found_in(apart.group(1)) if apart and said else []
    return (found[0], said[0]) if found else None


_NATIONS = frozenset({"England", "Scotland", "Wales", "Northern Ireland"})


def _home_nation(source: Source) -> tuple[str, str] | None:
    """The nation of the United Kingdom the passage's opening gives its subject, else its
    other country, and that sentence; None when it says only "British"."""
    said = sentences(_text(source))
    first = _first_named(countries_in, said) or _by_title(countries_in, source, said)
    if first is None or first[0] != "United Kingdom":
        return first
    nations = home_nations_in(first[1])
    return (nations[0], first[1]) if nations else None


# a part of a place, before the place: "in the downtown area of Guelph, Ontario", "in the
# Douglas community area of Chicago, Illinois", "in the borough of Manhattan, New York City"
_WITHIN = ("centre", "center", "heart", "downtown", "area", "outskirts", "suburbs", "suburb",
           "part", "middle", "north", "south", "east", "west", "northern", "southern",
           "eastern", "western", "central", "town", "city", "village", "borough", "district",
           "municipality", "community", "neighbourhood", "neighborhood", "county")
# "from Chicago, Illinois", "in Midtown Manhattan, New York City": the places of a chain
_PLACES = re.compile(rf"\b(?:from|in|at)\s+(?:the\s+)?(?:(?:{NAME.pattern}\s+)?"
                     rf"(?:(?:{'|'.join(_WITHIN)})\s+){{1,3}}(?:of\s+(?:the\s+)?)?)?"
                     rf"((?:{NAME.pattern})(?:,\s+{NAME.pattern})+)")


# a place named alone, closing its clause: "a former church in Istanbul, converted into a
# mosque", "a mosque in Plovdiv." (not "in Paris Opera", "in Paris and Lyon")
_PLACE_ALONE = re.compile(rf"\b(?:in|at)\s+({NAME.pattern})(?=\s*(?:[.;]|,\s+[a-z])|\s*$)")


# "X is an Edmonton-based group": the subject's own base, not another's ("owned by the
# Chicago-based Beta Group")
_BASED = re.compile(rf"\b(?:is|was|are|were)\s+(?:an?|the)\s+({NAME.pattern})-based\b")


def _cities(source: Source, born: bool, alone_too: bool = True) -> list[tuple[str, str]]:
    """The places the passage's opening sentences put its subject in (where it was born, for
    a question about birth), a chain's state or country aside ("from Chicago, Illinois":
    Chicago), and the city an opening names ("a New York City boulevard"); each with its
    sentence."""
    found = []
    for sentence in sentences(_text(source))[:2]:
        # "born in Rome on 8 April 1967", "born 3 May 1901 in Lyon, France"; else a chain
        chains = _BIRTHPLACE.findall(sentence) if born \
            else [chain.group(1) for chain in _PLACES.finditer(sentence)] \
            or [alone.group(1) for alone in _PLACE_ALONE.finditer(sentence)
                if alone_too and " and " not in alone.group(1)][:1]
        if not born:  # "an Edmonton-based group"
            chains += [" ".join(itertools.dropwhile(is_nationality, based.group(1).split()))
                       for based in _BASED.finditer(sentence)]  # not "American" of "an
            # American Chicago-based company"
        # a state, province or country is no city ("Calgary, Alberta" and "Edmonton,
        # Alberta" share none; "born in California"), unless a state follows it as a city's
        # does ("Victoria, British Columbia", "New York, New York")
        for chain in chains:
            parts = [part.strip() for part in chain.split(",")]
            found += [(phrase(part), sentence) for n, part in enumerate(parts)
                      if part and not is_country_name(part) and (not is_region(part) or (
                          n == 0 and len(parts) > 1 and is_region(parts[1])
                          and not is_country_name(parts[1])))]
    named = None if born else _named_as("city", source) or _named_as("town", source)
    return found + ([named] if named else [])


def _region_of(place: str, sentence: str) -> str | None:
    """The state, province or country the sentence writes after the place ("Springfield,
    Oregon": Oregon), or None."""
    words = r"\W+".join(map(re.escape, place.split()))
    at = re.search(rf"\b(?i:{words})\b", sentence) if words else None
    after = re.match(rf",\s+({NAME.pattern})", sentence[at.end():]) if at else None
    return after.group(1) if after and is_region(after.group(1)) else None


def _same_city(sides: list[tuple[str, int]], sources: Sequence[Source],
               question: str) -> Verdict | None:
    """Yes when the passages put both in one place, No when each names places and none is
    shared; nothing decided when a passage names none."""
    born = bool(re.search(r"\bborn\b", question, re.I))
    places = [_cities(sources[n], born) for _, n in sides]
    if not all(places):
        return None
    shared = set.intersection(*({place for place, _ in found} for found in places))
    # one name, two places: "Springfield, Oregon" and "Springfield, Illinois"
    shared = {place for place in shared if len(set.union(*(
        {_region_of(place, said) for city, said in found if city == place} - {None}
        for found in places))) <= 1}
    if not shared and not all(_cities(sources[n], born, alone_too=False) for _, n in sides):
        return None  # a place named alone may be a district: "in Manhattan" is no other
        # city than "in Manhattan, New York City"
    reasons = [(n, next((said for place, said in found if place in shared), found[0][1]))
               for (_, n), found in zip(sides, places, strict=True)]
    return Verdict("Yes" if shared else "No", reasons)


# what a passage's opening says its subject is: "is an American film director and screenwriter"
IS_A = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the)\s+(.+?)(?:\s+(?:who|which|that|from|"
                   r"in|of|at|with|for|known|best)\b|[,;.(]|$)")


def _roles(source: Source) -> tuple[list[tuple[str, str]], str] | None:
    """The kinds of work the passage's opening gives its subject, each as the noun before
    it (or "") and the noun's base form ("American film director and screenwriter": (film,
    director), ("", screenwriter)), and that sentence."""
    for sentence in sentences(_text(source))[:1]:
        given = IS_A.search(sentence)
        if given is None:
            continue
        roles = []
        for part in re.split(r"\s*,\s*|\s+and\s+", given.group(1)):
            words = [w for w in part.split() if not is_nationality(w)]
            if words and lexicon().is_noun(words[-1]):
                before = words[-2].casefold() if len(words) > 1 and lexicon().is_noun(
                    words[-2]) else ""
                roles.append((before, lexicon().lemma(words[-1]).base))
        if roles:
            return roles, sentence
    return None


def _same_work(first: tuple[str, str], second: tuple[str, str]) -> bool:
    """Whether two kinds of work are one: the same noun or one a kind of the other ("actress"
    of "actor"), and the same noun before it where both have one ("football player" is not
    "baseball player")."""
    (before, head), (other_before, other_head) = first, second
    return (not before or not other_before or before == other_before) and (
        head == other_head or lexicon().is_kind_of(head, other_head)
        or lexicon().is_kind_of(other_head, head))


def _same_role(sides: list[tuple[str, int]], sources: Sequence[Source]) -> Verdict | None:
    """Yes when the openings give the sides a kind of work in common ("film director"),
    No when each gives some and none is shared."""
    known = _each(sides, sources, _roles)
    if known is None or len(known) != 2:
        return None
    (first, _, _), (second, _, _) = known
    shared = any(_same_work(a, b) for a in first for b in second)
    return _yes_if(shared, known)


_STATE_ASKED = re.compile(r"(?:([\w.]+)\s+)?(?:states?|provinces?|territory|territories)")


def _state(source: Source) -> tuple[str, str] | None:
    """The first state or province (of the US, Canada, Australia, China or India) the
    passage's opening sentences name (where its subject is), else the first that a later
    sentence places it in ("It was located in central Oklahoma"), and that sentence."""
    said = sentences(_text(source))
    return _first_named(states_in, said) or next(
        ((states_in(sentence)[0], _quote(said, at)) for at, sentence in enumerate(said)
         if _PLACING.search(sentence) and states_in(sentence)), None)


def _first_named(found_in: Callable[[str], list[str]], said: Sequence[str]
                 ) -> tuple[str, str] | None:
    """The first value `found_in` reads in the first two sentences, and that sentence."""
    for sentence in said[:2]:
        found = found_in(sentence)
        if found:
            return found[0], sentence
    return None


def _count_of(noun: str, source: Source) -> tuple[float, str] | None:
    """How many `noun`s the passage says its subject has: a number before the word or one
    of the same sense ("40-storey" for floors), "the only" one, or a duo, trio, ... of
    members; and the sentence that says it."""
    stem = terms(noun)
    if not stem:
        return None
    said = sentences(_text(source))

    def near(sentence: str, at: int, words: int, senses: bool = False) -> bool:
        return any(terms(w)[:1] == stem or (senses and w.isalpha()
                                            and lexicon().synonyms(noun, w))
                   for w in re.findall(r"[\w']+", sentence[at:at + 40])[:words])

    for senses in (False, True):  # the noun itself, else a word of its sense ("storey")
        for k, sentence in enumerate(said):
            for match in _QUANTITY.finditer(sentence):
                if not (senses and _YEAR.fullmatch(match.group(1))) \
                        and near(sentence, match.end(), 3, senses):
                    return _number(match.group(1)), _quote(said, k)
    for k, sentence in enumerate(said):  # "the only species in the genus"
        if any(near(sentence, match.end(), 2) for match in _ONLY.finditer(sentence)):
            return 1.0, _quote(said, k)
    if stem == ["member"]:  # "an electronic rock duo consisting of ..."
        for k, sentence in enumerate(said):
            group = _ENSEMBLE.search(sentence)
            if group:
                return float(_ENSEMBLES[group.group(1).casefold()]), _quote(said, k)
        for k, sentence in enumerate(said):  # "consisting of A (guitar), B (bass) and C"
            # without what is said of each ("(bass)") or what they are called ("Jaff")
            listed = _LISTED.search(re.sub(r"\s*\([^)]*\)|\s+\"[^\"]*\"(?=\s+[A-Z])", "",
                                           sentence))
            if listed:
                parts = re.split(r",\s*(?:and\s+)?|\s+and\s+", listed.group(1).strip())
                # every part a name ("Emma Richardson"), a role before it ("drummer Adam
                # Levin") or not, or the list is read as nothing: "A on lead vocals and
                # rhythm guitars, B on bass" cannot be counted so
                if len(parts) >= 2 and all(_PERSON.fullmatch(_ROLE.sub("", part))
                                           for part in parts):
                    return float(len(parts)), _quote(said, k)
    return None


_PERSON = re.compile(r"[A-Z][\w'.-]+(?:\s+[A-Z][\w'.-]+){1,3}")
_ROLE = re.compile(r"^(?:[a-z][\w-]*\s+){1,3}(?=[A-Z])")  # "lead guitarist ", "producer "
_LISTED = re.compile(r"\b(?:consist\w*|compris\w*|composed|made up|members are)\s+(?:of\s+)?(.+?)"
                     r"(?:[.;]\s|[.;]?$)")


_ONLY = re.compile(r"\b(?:only|sole|single|lone)\b", re.I)
_ENSEMBLES = {"duo": 2, "trio": 3, "quartet": 4, "quintet": 5, "sextet": 6, "septet": 7,
              "octet": 8}
_ENSEMBLE = re.compile(r"\b(" + "|".join(_ENSEMBLES) + r")\b", re.I)


def _role_named(role: str, source: Source) -> tuple[str, str] | None:
    """The one name the passage's opening sentence gives right after the role ("lyricist Tim
    Rice", "the composer Alan Menken"), and that sentence; None when it gives none or
    two."""
    for sentence in (sentences(_text(source)) or [])[:1]:  # not "the sequel to director
        # Alfred Hitchcock's film", "had earlier worked with lyricist Tim Rice"
        named = {phrase(m.group(1)) for m in re.finditer(
            rf"\b(?i:{re.escape(role)})s?\s+({NAME.pattern})", sentence)}
        if named:
            return (named.pop(), sentence) if len(named) == 1 else None
    return None


def _based_on(source: Source) -> tuple[frozenset[str], str] | None:
    """Who made what the passage's subject is based on ("based on the 1987 novel of the same
    name by Scott Turow", "based on an original story by Edmund Goulding", "based on Giacomo
    Puccini's opera"), and that sentence."""
    said = sentences(_text(source))
    for at, sentence in enumerate(said[:3]):
        based = next((m for m in re.finditer(
            rf"\bbased\s+on\s+([^,;:]{{0,80}}?)\bby\s+({NAME.pattern})", sentence)
            # not "based on the novel B and directed by C": who did another thing
            if not re.search(r"\b(?!written\b|authored\b)\w+(?:ed|en)\s+$", m.group(1))),
            None) or re.search(rf"\bbased\s+on\s+(?:the\s+)?(?:[a-z][\w-]*\s+){{0,3}}?"
                         rf"({NAME.pattern})['’]s\s", sentence)  # "on Giacomo Puccini's B"
        if based:
            return frozenset({_maker_named(based.group(based.re.groups))}), _quote(said, at)
    return None


def _role_making(role: str, source: Source) -> tuple[frozenset[str], str] | None:
    """The one name a passage gives in its role making something ("The composer Jerry
    Goldsmith wrote the score", "by lyricist Tim Rice"), and that sentence; not one the role
    merely names ("worked with lyricist Tim Rice")."""
    for sentence in sentences(_text(source)):
        named = {_maker_named(m.group(2)) for m in re.finditer(
            rf"\b(by\s+(?:the\s+)?)?(?i:{re.escape(role)})\s+({NAME.pattern})(?!['’])"
            r"(?=(\s+(?:wrote|composed|scored|directed|produced|created|designed|penned)\b)?)",
            sentence) if m.group(1) or m.group(3)}
        if named:
            return (frozenset(named), sentence) if len(named) == 1 else None
    return None


_PLACE_NOUN = re.compile(r"\b(?:city|cities|town|village|state|province|country|countries|"
                         r"county|region|area|place|location|neighbou?rhood|borough|district|"
                         r"island|continent)\b", re.I)


def _done_with(verb: str, preposition: str, source: Source) -> tuple[str, str] | None:
    """The name a passage's first sentences give after a form of `verb` and `preposition`
    ("aired on CBS" for "air on"), and that sentence."""
    said = sentences(_text(source))
    for at, sentence in enumerate(said[:3]):
        # "released on Columbia Records", "released in 1994 on Columbia Records"
        for done in re.finditer(rf"\b([a-z]+)(?:\s+in\s+(?:1[0-9]{{3}}|20[0-9]{{2}}))?\s+"
                                rf"{preposition}\s+(?:the\s+)?({NAME.pattern})", sentence):
            if not _forms(done.group(1)) & _forms(verb):
                continue
            # one name, and the one: not "played for the Gulls and then the Rams", nor
            # "aired on Thursday nights on CBN" (a name after "by" is who did it)
            clause = re.split(r"[,;]|\s+by\s+", sentence[done.end():], maxsplit=1)[0]
            if done.group(2).casefold() in _DAYS or any(
                    other.group(0).split()[0].casefold() not in _DATE_WORDS
                    for other in NAME.finditer(clause)):  # "from September 27, 1987" is none
                return None
            return phrase(done.group(2)), _quote(said, at)
    return None


_DAYS = frozenset(d.casefold() + plural for d in calendar.day_name for plural in ("", "s"))
_DATE_WORDS = _DAYS | {m.casefold() for m in calendar.month_name if m}


def _agent(verb: str, source: Source) -> tuple[frozenset[str], str] | None:
    """Who did `verb` (a participle: "written") to the passage's subject, and the sentence
    saying so: "written by B" anywhere in it, every one of "written by B, C and D", or in
    its opening a "by B" that no other verb makes ("a 1942 novel by French author B" is
    written by B, not "produced by B")."""
    said = sentences(_text(source))
    # a game or a record "released in 1994 by B" is published by B, where nothing says so
    for made in [verb, *(["released"] if verb.casefold() == "published" else [])]:
        for sentence in said:
            made_by = rf"\b(?i:{made}){_OTHER_MAKING.pattern}\s+(?:{_WHERE.pattern}|in\s+" \
                 rf"(?:1[0-9]{{3}}|20[0-9]{{2}})\s+)?by\s+(?:{_MAKER_ROLE.pattern})?"
            names = rf"({NAME.pattern}(?:\s*,\s*(?:and\s+)?{NAME.pattern})*)"
            done = re.search(f"{made_by}({_DESCRIBED_MAKER.pattern}){names}", sentence)
            if done is None or not _describes(done.group(1)):
                done = re.search(f"{made_by}(){names}", sentence)
            if done:  # "directed by B", "Directed by B, the film ...", "published in North
                # America by B", "published in 1994 by B", "recorded by American country
                # music artist B"; "written by B, C and D" names three
                makers = frozenset(_maker_named(name)
                                   for name in _MAKERS_APART.split(done.group(2))
                                   if _maker(name))
                if makers:
                    return makers, sentence
    works = _WORKS_MADE.get(verb, ())
    for sentence in said[:1]:
        for by in _BY_MAKER.finditer(sentence):
            # the work's noun, or its noun and then its quoted title ('the novel "A" by B')
            work = re.search(r"([a-z]+)\s*(?:[\"“][^\"”]{1,80}[\"”]\s*)?$",
                             sentence[:by.start()])
            maker = by.group(1)
            if work and any(lexicon().is_kind_of(work.group(1), kind) for kind in works) \
                    and not is_nationality(maker.split()[0]) \
                    and _made_so(verb, sentence[:by.start()]):
                return frozenset({_maker_named(maker)}), sentence
    for at, sentence in enumerate(said[:3] if verb == "won" else []):  # "Tiger Woods won
        # his second straight ..."; not "Ridley Scott directed the original film"
        for done in re.finditer(rf"({NAME.pattern})\s+{re.escape(verb)}\b", sentence):
            if done.group(1).split()[0] not in _NO_MAKER and not _TITLE_OF.search(
                    sentence[:done.start()]):
                return frozenset({_maker_named(done.group(1))}), _quote(said, at)
    kind = set(re.findall(r"[a-z]+", said[0])) if said else set()
    for at, sentence in enumerate(said[:4]):  # "Square Enix Montreal developed the game",
        # the noun the opening calls the subject ("a 2015 puzzle video game")
        for done in re.finditer(rf"({NAME.pattern})\s+{re.escape(verb)}\s+the\s+([a-z]+)\b"
                                r"(?!['’\w-])", sentence):  # not "the game's engine"
            if done.group(2) in kind and done.group(1).split()[0] not in _NO_MAKER:
                return frozenset({_maker_named(done.group(1))}), _quote(said, at)
    return None


def _maker_named(name: str) -> str:
    """A maker's name as `_same_maker` compares them: its words, initials kept ("V. K.
    Singh" is not "Singh")."""
    words = [w for w in folded_words(name) if w not in STOPWORDS]
    return f" {' '.join(words)} "


def _same_maker(sides: list[tuple[str, int]], sources: Sequence[Source],
                makers_of: Callable[[Source], tuple[frozenset[str], str] | None]
                ) -> Verdict | None:
    """Yes when the sides' passages name a maker in common ("written by Ritchie, Joby Harold
    and Lionel Wigram" and "by Joby Harold, Peter Craig and David James Kelly"), No when
    they name none; None when one names a surname alone that the other's full name ends
    with ("Ritchie" and "Guy Ritchie")."""
    known = _each(sides, sources, makers_of, alike=True)
    if known is None:
        return None
    first, second = (v for v, _, _ in known[:2])
    if first & second:
        return _yes_if(True, known)
    # a surname alone may be one of the other's full names; two full names are two people
    alone = [{name.split()[-1] for name in names if len(name.split()) == 1}
             for names in (first, second)]
    surnames = [{name.split()[-1] for name in names} for names in (first, second)]
    return None if alone[0] & surnames[1] or alone[1] & surnames[0] \
        else _yes_if(False, known)


# capitalised words that open a sentence, not a winner's name: "He won", "In 2001 won"
_NO_MAKER = frozenset({"He", "She", "It", "They", "This", "These", "That", "Those", "The",
                       "His", "Her", "Its", "Their", "In", "On", "At", "After", "Before"})
# a name that is the thing's own title, not its maker: '"Help!" won'
_TITLE_OF = re.compile(r"[\"“]\s*$")


# the maker's role before the name: "made by filmmaker B", "by the director B"
_MAKER_ROLE = re.compile(r"(?:the\s+)?(?:director|filmmaker|film-maker|author|writer|novelist|"
                         r"composer|producer|artist|architect|designer|publisher|"
                         r"company)\s+")
# what the maker is, between "by" and its name: "by American country music group B"
_DESCRIBED_MAKER = re.compile(r"(?:the\s+)?(?:[A-Z][a-z]+\s+){0,2}(?:[a-z][\w-]*\s+){1,3}")


def _describes(words: str) -> bool:
    """Whether `words` before a maker's name say what the maker is: "American country music
    group", "his wife"; not "Georg Arbo and starring"."""
    capitalised = re.findall(r"[A-Z]\w*", words)
    return all(is_nationality(word) for word in capitalised) and not any(
        word in STOPWORDS - {"his", "her", "their", "its"}
        for word in re.findall(r"\b[a-z]+\b", words))


def _maker(piece: str) -> bool:
    """Whether a piece of a list after "by" is a maker: not a legal form or a suffix ("Inc",
    "Jr", "Sons" of "Charles Scribner's Sons"), nor the place after a comma ("New York")."""
    return bool(piece) and piece.casefold().rstrip(".") not in _NOT_MAKERS \
        and not is_region(piece) and not is_country_name(piece)


_NOT_MAKERS = LEGAL_FORMS | {"jr", "sr", "sons", "brothers", "bros", "associates", "partners"}
# between the names of a list of makers: "B, C, and D"
_MAKERS_APART = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
# what else the maker did, between the verb and "by": "directed and produced by",
# "directed, co-written, and produced by"
_OTHER_MAKING = re.compile(r"(?:,?\s+(?:and\s+)?(?-i:[a-z][\w-]*(?:ed|en))\b){0,3},?")
# where a thing was made, between the verb and its maker: "published in North America by B"
_WHERE = re.compile(rf"(?:in|on)\s+(?:the\s+)?{NAME.pattern}\s+")
# the works whose maker "a <work> by B" names, by what making them is: a novel by B is
# written by B, a film by B directed by B; not "the novel by B" for who produced the film
_WORKS_MADE = {"written": ("writing", "book"), "directed": ("movie",), "composed": ("music",)}
# "by B", "by French author B", "by the American singer-songwriter B"
_BY_MAKER = re.compile(rf"\bby\s+(?:the\s+)?(?:(?:[A-Z][a-z]+\s+){{0,2}}(?:[a-z][\w-]*\s+){{1,3}})?"
                       rf"({NAME.pattern})")


def _year(question: str, source: Source, named: Sequence[str] = ()) -> tuple[float, str] | None:
    """The year the comparison turns on: a person's death year for "died first", else the
    first year of the passage (a person's birth year comes first, after the name)."""
    unnamed = question
    for name in named:  # "Christian Death" is a name, not a question about a death
        unnamed = unnamed.replace(name, " ")
    died = bool(re.search(r"\b(?:died|death|dead)\b", unnamed, re.I))
    said = sentences(_text(source))
    verbs = set(terms(question)) - _QUESTION_WORDS - set(terms(" ".join(named))) \
        - set(terms(source.title))
    # a year next to the question's own verb ("formed in 1996") before the passage's first
    dated = [k for k, s in enumerate(said) if _YEAR.search(s) and verbs & set(terms(s))]
    for k in ([] if died else dated[:1]) + list(range(len(said))):
        sentence = said[k]
        years = [int(y) for y in _YEAR.findall(sentence)]
        if died:  # the first brackets holding a year (not a name in another script): a
            # death year when they hold two, else the subject's birth ("(born 1940)")
            spans = ([int(y) for y in _YEAR.findall(dates.group(1))]
                     for dates in re.finditer(r"\(([^)]*)\)", sentence))
            span = next((span for span in spans if span), [])
            if len(span) >= 2:
                return float(span[1]), _quote(said, k)
            continue
        if years:  # "It was published in 1917" is quoted with what "it" is
            return float(years[0]), _quote(said, k)
    return None


def _ordered_in_time(question: str, sides: list[tuple[str, int]], sources: Sequence[Source],
                     named: Sequence[str]) -> list[tuple[float, str, int]] | None:
    """Each side's year (see `_year`); when the years are the same, the day each passage
    gives with it ("born 11 April 1973" before "born August 10, 1973"), where both give one."""
    known = _each(sides, sources, lambda s: _year(question, s, named))
    if known is None or len({value for value, _, _ in known}) > 1:
        return known
    days = [_day(int(value), said) for value, said, _ in known]
    if any(day is None for day in days):
        return known
    return [(day, said, n) for day, (_, said, n) in zip(days, known, strict=True)
            if day is not None]


def _day(year: int, sentence: str) -> float | None:
    """The year with the day of it the sentence dates it to, as a fraction; None without a
    day of that year."""
    for when, _ in dates_in(sentence):
        if when.year == year and when.month and when.day:
            return year + (when.month - 1) / 12 + when.day / 400
    return None


def _amount(question: str, source: Source) -> tuple[float, str] | None:
    """The number the comparison turns on: the number next to the measure the question
    names after its comparative ("a larger population", "a larger capacity"), a height for
    "higher" or "taller", an area for "larger" alone, else the number before the word
    after "more" ("more members")."""
    text = _text(source)
    measured = re.search(r"\b(?:larger|largest|bigger|biggest|smaller|smallest|greater|"
                         r"greatest|higher|highest|lower|lowest)\s+([a-z]+)\b",
                         question, re.I)
    measure = measured.group(1).casefold() if measured else ""
    if re.search(r"\bpopul(?:ation|ous)\b", question, re.I):
        measure = "population"
    if measure and measure not in _AREA_WORDS and not measure.endswith("s") \
            and lexicon().is_noun(measure) and measure not in ("than", "city", "town"):
        # "... at the 2010 census": that year's number only
        dated = next((m for m in _WHEN_MEASURED.finditer(question)
                      if not question[m.end():].strip(" ?.!")), None)
        return _measured(measure, text, dated.group(1) if dated else None)
    if _AREA.search(question):
        for sentence in sentences(text):
            area = re.search(r"(\d[\d,]*(?:\.\d+)?)\s*(km2|km²|square kilomet\w+|sq\.? ?km|"
                             r"hectares|ha|acres|square miles|sq\.? ?mi)\b", sentence, re.I)
            if area:
                return _number(area.group(1)) * _square_km(area.group(2)), sentence
        return None
    if _HEIGHT.search(question):
        return _height(text)
    # the counted thing: "members" of "more constant members", else the word after "more"
    noun = re.search(r"\b(?:more|most|fewer|fewest|less|least)\s+(?:(\w+s)\b|\w+\s+(\w+s)\b)",
                     question, re.I) \
        or re.search(r"\b(?:more|most|fewer|fewest|less|least)\s+(\w+)", question, re.I)
    if not noun:
        return None
    return _count_of(next(g for g in noun.groups() if g), source)


def _height(text: str) -> tuple[float, str] | None:
    """A height in metres and its sentence: the number after a word of height ("it is 687 ft
    tall", "rises to 1,834 m", "standing 1.95 m", not "the 100 m" or another peak's "(8,849
    m)"), or before "tall"; only where none is given, a peak's "7343 m above sea level" (a
    city's altitude is no tower's height)."""
    said = sentences(text)
    for patterns in ((_HEIGHT_AFTER, _HEIGHT_BEFORE), (_ABOVE_SEA_LEVEL,)):
        for sentence in said:
            # the first number so given: "a 110 m tall building in a city 2,850 m ..."
            found = min(filter(None, (p.search(sentence) for p in patterns)),
                        key=lambda m: m.start(1), default=None)
            if found:  # in metres: "1,000 ft" is 304.8
                return _number(found.group(1)) * (0.3048 if found.group(2)[0] in "fF"
                                                  else 1.0), sentence
    return None


_HEIGHT_AFTER = re.compile(r"\b(?:tall(?:est)?|height|high(?:est)?|elevation|rises?|rising|"
                           r"stands?|standing|summits?|peaks?|above|altitude)\b[^;]{0,40}?"
                           r"(\d[\d,]*(?:\.\d+)?)\s*(m|metres|meters|ft|feet)\b", re.I)
_HEIGHT_BEFORE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(m|metres|meters|ft|feet)\b"
                            r"(?=\s+(?:tall|high|in height)\b)", re.I)
_ABOVE_SEA_LEVEL = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(m|metres|meters|ft|feet)\b"
                              r"(?=\s+above (?:mean )?sea level\b)", re.I)


_AREA_WORDS = frozenset({"area", "size", "territory", "land", "surface"})
_SCALES = {"million": 1e6, "billion": 1e9}


def _measured(measure: str, text: str, year: str | None = None) -> tuple[float, str] | None:
    """The number a passage gives next to a measure ("The population was 12,345", "a
    capacity of 90,000", "population of 14 million"), and that sentence, one naming `year`
    when given; not a share ("grew by 4 percent to 114,394" gives 114,394), a year, or a
    density ("population density of 3,900")."""
    for sentence in sentences(text):
        if year is not None and not re.search(rf"\b{year}\b", sentence):
            continue
        for word in re.finditer(rf"\b{re.escape(measure)}\b(?!\s+density)", sentence, re.I):
            after = sentence[word.end():word.end() + 60]
            for said in re.finditer(r"(\d[\d,]*(?:\.\d+)?)(\s*(?:million|billion))?"
                                    r"(\s*(?:%|per\s*cent|percent))?", after):
                if said.group(3) or (_YEAR.fullmatch(said.group(1)) and not said.group(2)) \
                        or re.search(r"\b(?:by|from)\s*$", after[:said.start()]) \
                        or (measure == "population" and not said.group(0).endswith(",")
                            and re.match(
                            r"\s+(?!people|inhabitants|residents|persons)[a-z]{3,}",
                            after[said.end():])):
                    continue  # a share, a year, a change ("fallen by 300", "up from 3,674"),
                    # a population of others ("a population of 2,000 students")
                scale = _SCALES.get((said.group(2) or "").strip(), 1.0)
                return _number(said.group(1)) * scale, sentence
    return None


def _square_km(unit: str) -> float:
    unit = unit.casefold()
    if unit.startswith("h"):
        return 0.01  # hectares
    if unit.startswith("acre"):
        return 0.004047
    return 2.59 if "mi" in unit else 1.0


def _number(text: str) -> float:
    word = _NUMBER_WORDS.get(text.casefold())
    return float(word) if word is not None else float(text.replace(",", ""))


def _about_dated(name: str, sources: Sequence[Source],
                 about: Callable[[str, Source], bool]) -> int | None:
    """The passage `about` a name the question gives with its year ("Romeo and Juliet
    (1968)"): the one whose title has that year, or one titled without a year; None
    otherwise, or where the name has no year."""
    year = re.search(r"\s*\((1[0-9]{3}|20[0-9]{2})\)$", name)
    bare = name[:year.start()] if year else name
    alike = [n for n, s in enumerate(sources) if about(bare, s)]
    if year is not None:
        alike = [n for n in alike if year.group(1) in sources[n].title] \
            or [n for n in alike if not _YEAR.search(sources[n].title)]
    return alike[0] if alike else None


def _about(name: str, sources: Sequence[Source]) -> int | None:
    """The passage about `name`: the one it titles, else the one whose first words name it;
    None when no passage is about it (a passage that only mentions it, as a son's mentions
    his father, does not say what the father is). A year in brackets after it picks the
    passage of that year ("Romeo and Juliet (1968)")."""
    if re.search(r"\((?:1[0-9]{3}|20[0-9]{2})\)$", name):
        return _about_dated(name, sources,
                            lambda bare, s: _titled_about(bare, [s]) is not None)
    found = _titled_about(name, sources)
    owned = re.fullmatch(r"([^'’]+)['’]s\s+(.+)", name)
    if found is None and owned:  # "Puccini's Manon Lescaut": the passage about Manon Lescaut
        # that names Puccini (not "Eleven" of a show for "Ocean's Eleven"); of several so
        # titled, the one its title sets apart by him ("Stay (Sugarland song)"), else the
        # first whose opening names him
        owner = phrase(owned.group(1))
        titled = [n for n in range(len(sources))
                  if _titled_about(owned.group(2), sources[n:n + 1]) is not None]
        for named_in in (lambda s: s.title, lambda s: (sentences(_text(s)) or [""])[0]):
            inner = next((n for n in titled if owner in phrase(named_in(sources[n]))), None)
            if inner is not None:
                return inner
        return None
    return found


def _titled_alike(n: int, sources: Sequence[Source]) -> list[int]:
    """Passage `n` and then the others titled for the same thing ("Ed Wood", "Ed Wood
    (film)")."""
    same = title_subject(sources[n].title).casefold()
    return [n, *(k for k, source in enumerate(sources)
                 if k != n and title_subject(source.title).casefold() == same)]


def _kind_named_before(question: str, first: str) -> str | None:
    """The kind of thing the question calls its two before naming them: "song" of "the
    Disney songs Belle and Evermore"; None when it names none."""
    called = re.search(r"\b([a-z]+s)\s+(?:[\"“])?" + re.escape(first), question)
    if called is None:
        return None
    base = lexicon().lemma(called.group(1)).base
    return base if base and base != called.group(1) and lexicon().is_noun(base) else None


def _about_as(name: str, kind: str | None, sources: Sequence[Source]) -> int | None:
    """The passage about `name` as the `kind` of thing the question calls it ("Belle (Disney
    song)", not the character "Belle (Disney)"), where several are titled for it; else the
    passage `_about` finds."""
    if kind:
        for n, source in enumerate(sources):
            apart = re.search(r"\(([^()]*)\)\s*$", source.title)
            if apart and kind in apart.group(1).casefold().split() \
                    and same_phrase(title_subject(source.title), name):
                return n
    return _about(name, sources)


def _titled_about(name: str, sources: Sequence[Source]) -> int | None:
    wanted, written = phrase(name), name.strip(" \"“”'").casefold()
    # its title word for word first: "Who Can See It" and "See Yourself" share one phrase
    for test in (lambda s: title_subject(s.title).casefold() == written,
                 lambda s: same_phrase(title_subject(s.title), name),
                 # not "I Was", all short words, of whatever passage opens with such words
                 lambda s: plain(name)
                 and phrase(opening_subject(s.content or s.snippet)).startswith(wanted)
                 and not _continued(name, opening_subject(s.content or s.snippet)),
                 # "Cho Kyu-hyun ..., better known mononymously as Kyuhyun, is ..."
                 lambda s: re.search(rf"\b(?:better|mononymously|professionally|popularly)\s+"
                                     rf"known\s+(?:\w+\s+)?as\s+{re.escape(name)}(?![\w'-])"
                                     rf"(?!\s+[{CAPITAL}])",
                                     (sentences(s.content or s.snippet) or [""])[0]) is not None):
        for n, source in enumerate(sources):
            if test(source) and not is_hatnote(_text(source)):  # "For the author, see ..."
                return n
    return None


def _continued(name: str, opening: str) -> bool:
    """Whether the opening writes `name` first as the start of a longer name: "The Dallas
    Cowboys" is not Dallas."""
    words = r"\W+".join(map(re.escape, re.findall(r"[^\W_]+", name)))
    at = re.search(rf"(?i:{words})(?![\w'-])", opening) if words else None
    after = re.match(r"\s+([^\W_]+)", opening[at.end():]) if at else None
    return after is not None and extends_name(after.group(1))


def _titles(name: str, sources: Sequence[Source]) -> bool:
    """Whether a passage's title is `name`, word for word where its words are short ones."""
    return any(same_phrase(title_subject(s.title), name) for s in sources)


def _text(source: Source) -> str:
    return source.content or source.snippet


def plain(text: str) -> bool:
    return phrase(text) != "\0"
