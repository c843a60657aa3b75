"""Whether two questions ask the same thing: the guard in front of the semantic answer cache.

Sentence embeddings score near-misses as high as paraphrases ("Which snakes are venomous?" and
"... not venomous?", "1 carat" and "2 carat", "elephants" and "Asian elephants", "Rome
conquered Carthage" and the reverse: cosine 0.85-0.99), so a cached answer is served only
when the questions also agree, word for word after normalisation, on everything that can
change the answer:

- every content word (stemmed), so a qualifier added or dropped ("Asian"), another entity,
  another attribute or a comparative ("largest" / "smallest") is a miss;
- negation words ("not", "no", "never", "without", "non-"), counted;
- every number, single digits included, with number words read as digits;
- roles: the content words outside prepositional phrases in the same order (who did what to
  whom), and each word under the same preposition ("from euros to dollars" is not "from
  dollars to euros").

What may differ: stop words, politeness ("Can you tell me ..."), case, punctuation,
contractions, the possessive form ("Rome's first emperor" = "the first emperor of Rome"), a
prepositional phrase moved ("At sea level, what is ..."), "in what year" for "when", and
inflection ("live" / "lives"). A miss costs one research run; a wrong hit costs trust.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from core.answer.lexicon import lexicon
from core.text import STOPWORDS


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


NEGATIONS = _words("""not no never none nobody nothing neither nor without non cannot
    nowhere""")
PREPOSITIONS = _words("""about above across after against along among around as at before
    behind below beneath beside between beyond by despite down during except for from in
    inside into like near of off on onto out outside over past since than through
    throughout till to toward towards under underneath unlike until up upon versus via
    vs with within""")
# Words that carry meaning here although retrieval treats them as stop words.
_KEPT = (NEGATIONS | _words("""first last more most less least few fewer many much only
    same all any some each every both several other""")) - PREPOSITIONS
# What kind of answer is wanted: "where was X born" is not "when was X born".
_ASKS = {"what": "what", "which": "what", "who": "who", "whom": "who", "whose": "whose",
         "when": "when", "where": "where", "why": "why", "how": "how"}
_MODALS = _words("can could should would will may might must shall")
_DETERMINERS = _words("a an the per this that these those its their his her our my your")
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16",
    "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000",
    "billion": "1000000000", "dozen": "12", "half": "0.5",
}
_CONTRACTIONS = [(re.compile(pattern, re.I), replacement) for pattern, replacement in [
    (r"\bcan'?t\b", "can not"), (r"\bwon't\b", "will not"), (r"\b(\w+)n't\b", r"\1 not"),
    (r"\b(\w+)'re\b", r"\1 are"), (r"\b(\w+)'ve\b", r"\1 have"), (r"\b(\w+)'ll\b", r"\1 will"),
    (r"\b(\w+)'d\b", r"\1 would"), (r"\b(i)'m\b", r"\1 am"),
    (r"\b(what|who|where|when|how|why|which|that|there|it|he|she)'s\b", r"\1 is"),
]]
_FILLER = re.compile(
    r"^\s*(?:(?:hey|hi|hello|ok|okay|so|quick question)\b[\s,!:-]*)*"
    r"(?:(?:please\s+)?(?:can|could|would|will)\s+(?:you|someone|anyone)\s+(?:please\s+)?"
    r"(?:tell|explain|describe|show|let|remind)(?:\s+to)?(?:\s+(?:me|us))?(?:\s+know)?"
    r"(?:\s+about)?"
    r"|(?:i(?:'d| would)\s+like\s+to\s+know|i\s+want\s+to\s+know|i\s+was\s+wondering"
    r"|i\s+wonder|do\s+you\s+know|does\s+anyone\s+know|(?:please\s+)?tell\s+me"
    r"|explain\s+to\s+me|i(?:'m| am)\s+curious)\b)?[\s,:]*",
    re.I,
)
_WHEN = re.compile(r"\b(?:in|during)?\s*(?:what|which)\s+year\b", re.I)
# "What is the height of X?" asks "How high is X?"
_DIMENSIONS = {"age": "old", "height": "high", "elevation": "high", "duration": "long",
               "length": "long", "distance": "far", "depth": "deep", "width": "wide",
               "weight": "heavy", "speed": "fast", "size": "big", "number": "many",
               "amount": "much"}
_DIMENSION = re.compile(r"\bwhat\s+(is|was|are|were)\s+the\s+(" + "|".join(_DIMENSIONS)
                        + r")\s+of\b", re.I)
# "How can I ..." asks for a method, as "How do I ..." does; "Can dogs ...?" keeps its modal.
_HOW_CAN = re.compile(r"\bhow\s+(?:can|could)\s+(?=(?:i|we|you|one)\b)", re.I)
_PREPOSITION_FORMS = {"into": "to", "onto": "on", "upon": "on", "towards": "toward",
                      "till": "until", "vs": "versus", "amongst": "among"}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:'[^\W\d_]+)?")
_POSSESSIVE = re.compile(r"^([^\W\d_]+)'s$", re.I)
_ENGLISH = snowballstemmer.stemmer("english")


@dataclass(frozen=True)
class Word:
    tag: str  # the preposition whose phrase holds it, "" outside prepositional phrases
    stem: str
    text: str  # lower case, as written
    name: bool  # capitalised inside the question: a name, never replaced by a synonym
    group: int  # its place among the words of its phrase; "X and Y" share one


@dataclass(frozen=True)
class QuestionForm:
    """What a question asks, reduced to what can change its answer."""

    words: tuple[Word, ...]
    asked: frozenset[str]  # stems of the phrase the question word asks about ("how many X")
    negations: int
    numbers: tuple[str, ...]
    asks: frozenset[str]  # question words, by the kind of answer they want
    modals: frozenset[str]  # "can dogs eat grapes?" is not "should dogs eat grapes?"


def same_question(question: str, cached: str, similarity: float, threshold: float) -> bool:
    """True when `cached`'s answer may be served for `question`: their embeddings are at
    least `threshold` alike and their forms agree (see the module's docstring)."""
    if similarity < threshold:
        return False
    return forms_agree(question_form(question), question_form(cached))


def forms_agree(mine: QuestionForm, theirs: QuestionForm) -> bool:
    if (mine.negations, mine.numbers, mine.asks, mine.modals) != (
            theirs.negations, theirs.numbers, theirs.asks, theirs.modals):
        return False
    if len(mine.words) != len(theirs.words):
        return False
    partner = _pair_words(mine.words, theirs.words)
    if partner is None:
        return False
    return _same_roles(mine, theirs, partner)


def _pair_words(mine: tuple[Word, ...], theirs: tuple[Word, ...]) -> list[int] | None:
    """For each of my words, the index of the same word (or a synonym) in theirs, under the
    same preposition; None when some word has no partner."""
    partner = [-1] * len(mine)
    free = set(range(len(theirs)))
    for exact in (True, False):
        for n, word in enumerate(mine):
            if partner[n] >= 0:
                continue
            for k in sorted(free):
                other = theirs[k]
                if other.tag != word.tag:
                    continue
                if other.stem == word.stem or (
                        not exact and not word.name and not other.name
                        and not word.stem[0].isdigit()
                        and lexicon().synonyms(word.text, other.text)):
                    partner[n] = k
                    free.discard(k)
                    break
    return None if -1 in partner else partner


def _same_roles(mine: QuestionForm, theirs: QuestionForm, partner: list[int]) -> bool:
    """Words keep their order within the question and within each prepositional phrase (who
    did what to whom: "a male donkey and a female horse" is not "a male horse and a female
    donkey"), except the phrase the question word asks about, which may move ("how many moons
    does Jupiter have?" = "Jupiter has how many moons?") but must ask about the same thing."""
    asked = {theirs.words[partner[n]].stem for n, w in enumerate(mine.words)
             if w.stem in mine.asked}
    if mine.asked and theirs.asked and not (asked <= theirs.asked or asked >= theirs.asked):
        return False  # "how many yen ...?" is not "how many dollars ...?"
    movable = mine.asked | theirs.asked
    for tag in {word.tag for word in mine.words}:
        placed = [(word.group, theirs.words[partner[n]].group)
                  for n, word in enumerate(mine.words)
                  if word.tag == tag and word.stem not in movable
                  and theirs.words[partner[n]].stem not in movable]
        placed.sort(key=lambda pair: pair[0])
        for (a1, b1), (a2, b2) in itertools.pairwise(placed):
            if (a1 < a2 and b1 > b2) or (a1 == a2 and b1 != b2):
                return False
    return True


@lru_cache(maxsize=4096)
def question_form(question: str) -> QuestionForm:
    words: list[Word] = []
    asked: set[str] = set()
    negations = 0
    numbers: list[str] = []
    asks: set[str] = set()
    modals: set[str] = set()
    preposition = ""
    asking = False  # inside the phrase right after a question word
    groups: dict[str, int] = {}  # per preposition ("" outside phrases): the next slot
    joined = False  # the previous word was "and" / "or"
    for n, token in enumerate(_tokens(question)):
        lower = token.casefold()
        if lower in _ASKS:
            asks.add(_ASKS[lower])
            asking = True
            continue
        if lower in _MODALS:
            modals.add(lower)
        if lower == ",":
            preposition, asking, joined = "", False, False
            continue
        if lower in NEGATIONS:
            negations += 1
            continue
        if lower in PREPOSITIONS:
            preposition, asking = lower, False
            continue
        if lower in ("and", "or"):
            joined = True
            continue
        if lower[0].isdigit():
            numbers.append(lower)
        elif lower in _DETERMINERS and not (token == "A" and n > 0):  # "blood type A"
            continue
        elif lower in STOPWORDS and lower not in _KEPT:
            preposition, asking, joined = "", False, False  # a verb ends the phrase
            continue
        stem = lower if lower[0].isdigit() else _ENGLISH.stemWord(lower)
        if not joined:
            groups[preposition] = groups.get(preposition, -1) + 1
        joined = False
        if asking:
            asked.add(stem)
        words.append(Word(tag=preposition, stem=stem, text=lower,
                          group=max(groups.get(preposition, 0), 0),
                          name=n > 0 and token[:1].isupper()))
    return QuestionForm(
        words=tuple(words),
        asked=frozenset(asked),
        negations=negations,
        numbers=tuple(sorted(numbers)),
        asks=frozenset(asks),
        modals=frozenset(modals),
    )


def _tokens(question: str) -> list[str]:
    """Words and numbers as written, commas kept as phrase breaks; possessives turned into
    "of" phrases, number words into digits, politeness and contractions undone."""
    text = unicodedata.normalize("NFKD", question).replace("\u2019", "'")
    text = "".join(c for c in text if not unicodedata.combining(c))  # creme brulee
    text = re.sub(r"'s\s+(?=(?:a|an|the)\s)", " is ", text, flags=re.I)  # "how long's a ..."
    polite = _FILLER.sub("", text)
    if polite != text and not re.match(rf"\s*(?:{'|'.join(_ASKS)}|is|are|was|were|do|does|did|"
                                       r"can|could|should|will|would|has|have|had)\b",
                                       polite, re.I):
        polite = f"what is {polite}"  # "Could you tell me the dose of ...?"
    text = _strip_preamble(polite)
    text = re.sub(r"[\s,]*\bplease\b[\s,]*", " ", text, flags=re.I)
    text = _WHEN.sub(" when ", text)
    text = _HOW_CAN.sub("how do ", text)
    text = _DIMENSION.sub(lambda m: f"how {_DIMENSIONS[m.group(2).casefold()]} {m.group(1)}",
                          text)
    text = re.sub(r"\bhow\s+tall\b", "how high", text, flags=re.I)
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = re.sub(r"\b(non)-?(?=[a-z])", r"\1 ", text, flags=re.I)
    text = re.sub(r"[;:!?()\[\]\"]", ",", text)
    words: list[str] = []
    for match in re.finditer(_TOKEN.pattern + r"|,", text):
        token = match.group(0)
        if token[0].isdigit():
            words.append(token.replace(",", ""))
            continue
        lower = token.casefold()
        lower = _PREPOSITION_FORMS.get(lower, lower)
        words.append(_NUMBER_WORDS.get(lower, token if lower == token.casefold() else lower))
    return _join_phrasal_verbs(_unfold_possessives(words))


_PARTICLES = frozenset(["up", "down", "out", "off", "on", "over", "back", "away", "in"])


def _join_phrasal_verbs(words: list[str]) -> list[str]:
    """"go up" -> "go_up" when WordNet knows the phrasal verb, so that it can match "rise"."""
    joined: list[str] = []
    for word in words:
        if joined and word.casefold() in _PARTICLES and joined[-1][:1].isalpha() \
                and lexicon().is_verb(f"{lexicon().lemma(joined[-1]).base}_{word.casefold()}"):
            joined[-1] = f"{lexicon().lemma(joined[-1]).base}_{word.casefold()}"
        else:
            joined.append(word)
    return joined


_PREAMBLE_WORDS = _words("""hi hello hey ok okay so quick question sorry basic dumb silly
    stupid always wondered wondering wonder curious just quickly thanks thank folks everyone
    guys team maybe really asking ask simple ve m ll""")


def _strip_preamble(text: str) -> str:
    """"Quick question: ...", "Sorry if this is basic, but ...", "I've always wondered: ..."
    lose their preamble when it holds nothing but such words."""
    match = re.match(r"^(.{0,80}?)(?::|,\s*but\b|!|\bbut\b)\s*(?=\S)", text, re.I)
    if match is None:
        return text
    words = re.findall(r"[^\W\d_]+", match.group(1).casefold().replace("'", " "))
    if words and all(w in _PREAMBLE_WORDS or w in STOPWORDS or len(w) == 1 for w in words):
        return text[match.end():]
    return text


def _unfold_possessives(words: list[str]) -> list[str]:
    """"rome's first emperor" -> "first emperor of rome": the possessor moves after the
    noun phrase it owns, as an "of" phrase."""
    out: list[str] = []
    n = 0
    while n < len(words):
        match = _POSSESSIVE.match(words[n])
        if match is None:
            out.append(words[n])
            n += 1
            continue
        owner = match.group(1)
        end = n + 1
        while end < len(words) and words[end] != "," and words[end].casefold() not in \
                PREPOSITIONS and (words[end].casefold() not in STOPWORDS
                                  or words[end].casefold() in _KEPT):
            end += 1
        out.extend(words[n + 1:end])
        out.extend(["of", owner, ","] if end < len(words) else ["of", owner])
        n = end
    return out
