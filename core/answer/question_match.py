"""Whether two questions ask the same thing: the guard in front of the semantic answer cache.

Sentence embeddings score near-misses as high as paraphrases ("Which snakes are venomous?" and
"... not venomous?", "1 carat" and "2 carat", "elephants" and "Asian elephants", "Rome
conquered Carthage" and the reverse: cosine 0.85-0.99), so a cached answer is served only
when the questions also agree, word for word after normalisation, on everything that can
change the answer:

- every content word (stemmed, or a synonym: WordNet's first senses and a few pairs it lacks),
  so a qualifier added or dropped ("Asian"), another entity, another attribute or a
  comparative ("largest" / "smallest") is a miss;
- negation words ("not", "no", "never", "without", "non-"), counted;
- every number, single digits included, with number words read as digits;
- the preposition a question word is asked under, before it or left at the end ("moved to
  which city?" is not "moved from which city?", "Where is X from?" is not "Where is X?");
- roles: the content words outside prepositional phrases in the same order (who did what to
  whom: "who killed Caesar?" is not "who did Caesar kill?"), and each word under the same
  preposition ("from euros to dollars" is not "from dollars to euros").

What may differ: stop words, articles, politeness ("Can you tell me ...", "please", "I'd like
to know", "would you mind telling me", "Excuse me, ...", "Thanks in advance!"), case,
punctuation, contractions (with or without the apostrophe: "whats", "doesnt"), "U.S.", "US" and
"United States", a noun phrase alone ("capital of kenya?"), the question word asked last or
with its preposition before it or at the end ("X is in which country?", "In which country is
X?", "Which country is X in?"), a maker named for the verb the other asks by ("the inventor of
X" = "who invented X", "the author of X" = "who wrote X"; a role only in the past), "the
release date of X" for "when was X released", "the meaning of X" for "what does X mean", "the
largest number of" for "the most", singular / plural and verb forms, the possessive form
("Alexander the Great's teacher" = "the teacher of Alexander the Great", "table salt's formula"
= "the formula of table salt"), "in place of" for "instead of", the passive voice when it names
its agent ("was Carthage destroyed by Rome?" = "did Rome destroy Carthage?"; "who was Caesar
killed by?" = "who killed Caesar?"; "X was designed by which architect?" = "which architect
designed X?"), an adverb of time moved ("next", "again"), a prepositional phrase moved ("At sea
level, what is ..."), "in what year" for "when", "how to" for "how do I", a measure asked by
its noun ("the height of" = "how tall", "the duration of" = "how long ... last"), "how many
people live in" for "the population of", "how many Y does X have" for "how many Y are in X" or
"on X", and "take place" / "occur" for "happen".
A miss costs one research run; a wrong hit costs trust.
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
# "work" too: "a visa for work" is not "a visa".
_KEPT = (NEGATIONS | _words("""work works worked working first last more most less least few
    fewer many much only same all any some each every both several other""")) - PREPOSITIONS
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
    r"^\s*(?:(?:hey|hi|hello|ok|okay|so|quick question)\b"
    r"(?:\s+(?:there|all|everyone|everybody|folks|team|guys))?[\s,!:-]*)*"
    r"(?:(?:please\s+)?(?:can|could|would|will)\s+(?:you|someone|anyone)\s+"
    r"(?:(?:please|kindly|possibly|just|quickly|be\s+able\s+to)\s+)*"
    r"(?:(?:tell|explain|describe|show|let|remind|clarify)(?:\s+to)?"
    r"(?:\s+(?:me|us))?(?:\s+know)?(?:\s+about)?"
    r"|(?:give|share|list|name)\s+(?:me|us)"
    r"|help\s+(?:me|us)\s+(?:understand|figure\s+out|find\s+out))"
    r"|(?:would|do)\s+you\s+mind\s+(?:telling|explaining|sharing)(?:\s+(?:me|us))?"
    r"|(?:i(?:'d| would)\s+(?:really\s+|just\s+)?(?:like|love)\s+to\s+know"
    r"|i\s+(?:really\s+|just\s+)?(?:want|need)\s+to\s+know"
    r"|(?:can|could|may|might)\s+i\s+(?:please\s+|just\s+)?ask(?:\s+you)?"
    r"(?=\s+(?:what|which|who|whom|whose|when|where|why|how)\b)"
    r"|if\s+you\s+(?:don't|do\s+not|dont)\s+mind(?:\s+(?:me|my)\s+asking)?"
    r"|i(?:'m| am)\s+trying\s+to\s+(?:figure\s+out|find\s+out|understand)"
    r"|(?:i\s+was\s+)?wondering|i\s+wonder"
    r"|(?:do|does|would)\s+(?:you|anyone|anybody|someone|somebody)\s+(?:happen\s+to\s+)?"
    r"know|any\s+idea|(?:please\s+)?tell\s+me"
    r"|explain\s+to\s+me|i(?:'m| am)\s+curious)\b"
    # "I was wondering if you could tell me ...", "... whether anyone knows ..."
    r"(?:\s+(?:if|whether)\s+(?:you|anyone|anybody|someone|somebody)\s+(?:(?:could|can|"
    r"would|might)\s+(?:tell|explain\s+to)\s+(?:me|us)|knows?))?)?[\s,:]*",
    re.I,
)
# Casual typing: a negation without its apostrophe ("doesnt"), "can u" for "can you", "pls"
_CASUAL = [(re.compile(pattern), replacement) for pattern, replacement in (
    (r"\b(do|does|did|is|are|was|were|has|have|had|could|should|would|must)nt\b", r"\1 not"),
    (r"\bcant\b", "can not"), (r"\b(can|could|do|did|would|will|are|should)\s+u\b", r"\1 you"),
    (r"\b(?:pls|plz)\b", "please"))]
# Thanks after the question's end: "... in music? Thanks in advance!" (not "What is
# Japanese for thank you")
_THANKS = re.compile(r"(?<=[.!?])[\s,.!?-]*\b(?:many\s+)?(?:thanks|thank\s+you|thx|cheers|ty)"
                     r"(?:\s+(?:in\s+advance|a\s+lot|so\s+much|very\s+much|again|all))?"
                     r"[\s.!]*$", re.I)
# Letters with full stops ("U.S.", "U.K.") are the abbreviation ("US", "UK"); the countries
# people abbreviate are one name however they are written.
_DOTTED = re.compile(r"\b((?:[A-Z]\.){2,})")
_COUNTRIES = [(re.compile(rf"\b{short}\b"), full) for short, full in (
    ("USA", "United States"), ("US", "United States"), ("UK", "United Kingdom"),
    ("UAE", "United Arab Emirates"))]
# "When was X released?" asks "What was the release date of X?", which the possessive reads
# alike ("X's release date"); "What does X mean?", "What is the meaning of X?"
_EVENT_NOUNS = {"released": "release", "launched": "launch", "opened": "opening",
                "founded": "founding", "published": "publication", "completed": "completion"}
_WHEN_DONE = re.compile(r"\bwhen\s+(?P<be>is|was|will\s+be)\s+(?P<thing>[^,;:!?.]+?)\s+"
                        rf"(?P<event>{'|'.join(_EVENT_NOUNS)})\s*(?=[,;:!?.]|$)", re.I)
_DONE_WHEN = re.compile(r"^\s*(?P<thing>[^,;:!?.]+?)\s+(?P<be>is|was|will\s+be)\s+"
                        rf"(?P<event>{'|'.join(_EVENT_NOUNS)})\s+when\s*[?.!]*\s*$", re.I)
_MEANS = re.compile(r"\bwhat\s+(?:does|do)\s+([^,;:!?.]+?)\s+mean\s*(?=[,;:!?.]|$)", re.I)
# "the largest number of" is "the most"; "the smallest number of", "the fewest"
_NUMBER_OF = re.compile(r"\bthe\s+(largest|greatest|highest|biggest|smallest|lowest|least)"
                        r"\s+(?:number|amount)\s+of\b", re.I)
# Words that make a question more than a noun phrase: it asks, or has a verb of its own
_NOT_A_NOUN_PHRASE = _words("""is are was were be do does did can could should will would may
    might must has have had compare explain list describe define name give show tell find
    calculate convert translate summarize summarise""") | frozenset(_ASKS)


def _shouted(text: str) -> bool:
    """Whether the text is typed in capitals, where "US" may be "us"."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) > 5 and sum(c.isupper() for c in letters) > 0.6 * len(letters)


def _noun_phrase_only(text: str) -> bool:
    """Whether the question is a noun phrase of another alone ("capital of kenya?",
    "population of Lagos"): "of" after its first word or two and no other preposition, no
    question word, no verb among the few that would make it a request or a yes/no question, no
    negation ("Mushrooms safe for dogs?", "Statue of Liberty in Paris?" are yes/no questions)."""
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text)]
    return "of" in words[1:4] and not any(
        w in _NOT_A_NOUN_PHRASE or w in NEGATIONS or "'" in w
        or (w in PREPOSITIONS and w != "of") for w in words)


# "Who was the inventor of X?" asks "Who invented X?": a person named for making a thing,
# once ("the author of X" wrote it, whatever the tense), or by a role a person may hold now
# ("the director of X" directed a film; the director of the FBI now, not who directed it)
_AGENT_NOUN = re.compile(r"\bwho\s+(?P<be>is|was|are|were)\s+the\s+(?P<noun>[a-z]+)\s+of\b",
                         re.I)
_MADE_ONCE = {"inventor": "invent", "founder": "found", "author": "write", "writer": "write",
              "novelist": "write", "composer": "compose", "painter": "paint",
              "discoverer": "discover", "creator": "create", "sculptor": "sculpt",
              "illustrator": "illustrate"}
_MADE_IN_A_ROLE = {"director": "direct", "producer": "produce", "publisher": "publish",
                   "developer": "develop", "designer": "design", "builder": "build"}


def _agent_verb(match: re.Match[str], verbs: frozenset[str]) -> str:
    """"who <verb>" for "who was the <maker> of" when the other question asks by that verb
    ("inventor": "invent", "author": "write"; a role only as "was": "the director of Jaws");
    else as it was ("teacher" against "Alexander's teacher", "executor", "conductor")."""
    noun = lexicon().lemma(match["noun"]).base
    past = match["be"].casefold() in ("was", "were")
    verb = _MADE_ONCE.get(noun) or (_MADE_IN_A_ROLE.get(noun) if past else None)
    return f"who {verb}" if verb in verbs else match.group(0)


# A question that starts by asking, perhaps after a preposition ("in what year ..."), needs
# no "what is" in front once its politeness is gone.
_ASKING = re.compile(rf"\s*(?:(?:{'|'.join(sorted(PREPOSITIONS))})\s+)?"
                     rf"(?:{'|'.join(_ASKS)}|is|are|was|were|do|does|did|can|could|should|will|"
                     r"would|has|have|had)\b", re.I)
_WHEN = re.compile(r"\b(?:in|during)?\s*(?:what|which)\s+year\b", re.I)
# "How many people live in X?" asks for X's population.
_POPULATION = re.compile(r"\bhow\s+many\s+(?:people|inhabitants|residents)\s+(?:are\s+)?"
                         r"(?:live|lives|lived|living|reside|resides|resided|residing)\s+in\b",
                         re.I)
# "How to X?" asks how one does X.
_HOW_TO = re.compile(r"\bhow\s+to\b", re.I)
# "How much does X weigh?" asks "How heavy is X?"
_WEIGH = re.compile(r"\bhow\s+much\s+(?:do|does|did|will|would|can|could)\s+([^,;:!?.]+?)\s+"
                    r"weigh\s*(?=[,;:!?.]|$)", re.I)
# "What is the duration of X?" asks "How long does X last?" (not "How long is X?": a
# marathon's length is not its duration); "What is the price of X?", "How much does X cost?".
_MEASURE_NOUNS = {"duration": "long {} last", "price": "much {} cost", "cost": "much {} cost"}
_MEASURE_NOUN = re.compile(r"\bwhat\s+(?:is|was|are|were|will\s+be)\s+the\s+(duration|price|cost)"
                           r"\s+of\s+([^,;:!?.]+?)\s*(?=[,;:!?.]|$)", re.I)
# "How many moons does Jupiter have?" asks "How many moons (are there) in Jupiter?", as does
# "Jupiter has how many moons?".
_HAVE = re.compile(r"\bhow\s+many\s+([^,;:!?.]+?)\s+(?:do|does|did)\s+([^,;:!?.]+?)\s+have"
                   r"\s*(?=[,;:!?.]|$)", re.I)
_HOW_MANY_HAS = re.compile(r"\bhow\s+many\s+([^,;:!?.]+?)\s+(?:has|have|had)\s*(?=[,;:!?.]|$)",
                           re.I)  # "(tell me) how many hearts an octopus has"
_HAS_HOW_MANY = re.compile(r"^\s*([^,;:!?.]+?)\s+(?:has|have|had)\s+how\s+many\s+"
                           r"([^,;:!?.]+?)\s*(?=[,;:!?.]|$)", re.I)
# "How many rings are on the flag?" asks what "the flag has how many rings?" does
_HOW_MANY_ON = re.compile(r"\b(how\s+many\s+[^,;:!?.]+?\s+(?:are|is|were|was)\s+(?:there\s+)?)on\b",
                          re.I)
# "When did X take place / occur?" asks "When did X happen?" ("happen" is a stop word).
_HAPPEN = re.compile(r"\b(?:take|takes|took|taken|taking)\s+place\b|\b(?:occur|occurs|occurred|"
                     r"occurring)\b", re.I)
# "What is the name of X?" asks "What is X?"; "Where is X located?", "Where is X?".
_NAME_OF = re.compile(r"\b(what|which)\s+(is|was|are|were)\s+the\s+names?\s+of\b", re.I)
_LOCATED = re.compile(r"\b(?:located|situated)\b", re.I)
# "What is the height of X?" asks "How high is X?"
_DIMENSIONS = {"age": "old", "height": "high", "elevation": "high", "length": "long",
               "distance": "far", "depth": "deep", "width": "wide", "weight": "heavy",
               "speed": "fast", "size": "big", "number": "many", "amount": "much",
               "temperature": "hot"}
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
    fronted: bool = False  # in a prepositional phrase moved before the question ("In 2010, ...")
    free: bool = False  # an adverb of time standing alone ("... visible from Earth next?")


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
    return forms_agree(question_form(_as_other_asks(question, cached)),
                       question_form(_as_other_asks(cached, question)))


def _as_other_asks(question: str, other: str) -> str:
    """`question` in the other's terms where they differ only in how they ask: "who was the
    inventor of X" where the other asks by the verb ("who invented X"; two nouns, "author"
    and "writer", stay nouns)."""
    if not _AGENT_NOUN.search(question):
        return question
    return _AGENT_NOUN.sub(lambda m: _agent_verb(m, _verbs(other)), question)


@lru_cache(maxsize=4096)
def _verbs(question: str) -> frozenset[str]:
    """The base forms of the question's words, as verbs where they are participles."""
    return frozenset(lexicon().participle_base(w) or lexicon().lemma(w).base
                     for w in re.findall(r"[^\W\d_]+", question.casefold()))


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
                        and not word.stem[0].isdigit() and _synonyms(word.text, other.text)):
                    partner[n] = k
                    free.discard(k)
                    break
    return None if -1 in partner else partner


# Words WordNet does not give one shared sense, although questions use them alike.
_SAME_WORDS = [frozenset(group.split()) for group in ("delete remove", "tall high",
                                                     "top maximum")]


def _synonyms(first: str, second: str) -> bool:
    a, b = lexicon().lemma(first), lexicon().lemma(second)
    if a.degree == b.degree and any({a.base, b.base} <= group for group in _SAME_WORDS):
        return True
    return lexicon().synonyms(first, second, nouns_strictly=True)


def _same_roles(mine: QuestionForm, theirs: QuestionForm, partner: list[int]) -> bool:
    """Words keep their order within the question and within each prepositional phrase (who
    did what to whom: "a male donkey and a female horse" is not "a male horse and a female
    donkey"), except the phrase the question word asks about, which may move ("how many moons
    does Jupiter have?" = "Jupiter has how many moons?") but must ask about the same thing and
    keep its own order ("what animals eat orcas?" is not "what animals do orcas eat?"), and a
    prepositional phrase moved to the front, which keeps its order inside."""
    asked = {theirs.words[partner[n]].stem for n, w in enumerate(mine.words)
             if w.stem in mine.asked}
    if mine.asked and theirs.asked and not (asked <= theirs.asked or asked >= theirs.asked):
        return False  # "how many yen ...?" is not "how many dollars ...?"
    back = {k: n for n, k in enumerate(partner)}
    if not (_asked_in_order(mine, theirs, partner)
            and _asked_in_order(theirs, mine, [back[k] for k in range(len(theirs.words))])):
        return False
    movable = mine.asked | theirs.asked
    for tag in {word.tag for word in mine.words}:
        for fronted in (True, False):
            placed = [(word.group, theirs.words[partner[n]].group)
                      for n, word in enumerate(mine.words)
                      if word.tag == tag and word.stem not in movable
                      and theirs.words[partner[n]].stem not in movable
                      and not (word.free and theirs.words[partner[n]].free)
                      and (word.fronted or theirs.words[partner[n]].fronted) == fronted]
            if not _in_order(placed):
                return False
    return True


# Adverbs of time, as written, that may stand anywhere when no word they qualify follows
# them: "when will X next be visible?" = "when will X be visible next?"; not "the next
# Olympics", "still wine"
_FREE_ADVERBS = _words("next now today currently nowadays again ever already")


def _asked_in_order(mine: QuestionForm, theirs: QuestionForm, partner: list[int]) -> bool:
    """The phrase my question word asks about keeps its order in theirs: "who killed Caesar?"
    is not "who did Caesar kill?"."""
    for tag in {word.tag for word in mine.words if word.stem in mine.asked}:
        placed = [(word.group, theirs.words[partner[n]].group)
                  for n, word in enumerate(mine.words)
                  if word.tag == tag and word.stem in mine.asked]
        if not _in_order(placed):
            return False
    return True


def _in_order(placed: list[tuple[int, int]]) -> bool:
    """Whether (my slot, their slot) pairs keep their order, words sharing a slot ("X and Y")
    sharing one in theirs too."""
    placed = sorted(placed, key=lambda pair: pair[0])
    return not any((a1 < a2 and b1 > b2) or (a1 == a2 and b1 != b2)
                   for (a1, b1), (a2, b2) in itertools.pairwise(placed))


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
    tokens = _tokens(question)
    fronted = bool(tokens) and tokens[0].casefold() in PREPOSITIONS and "," in tokens
    # a preposition left at the end of a question that asks belongs to its question word:
    # "Which city was X moved to?" asks "to which city", not "from which city"
    last = max((n for n, token in enumerate(tokens) if token != ","), default=-1)
    stranded = tokens[last].casefold() if last > 0 and tokens[last].casefold() in PREPOSITIONS \
        and any(token.casefold() in _ASKS for token in tokens) else ""
    for n, token in enumerate(tokens):
        lower = token.casefold()
        after = tokens[n + 1].casefold() if n + 1 < len(tokens) else ","
        if lower in _ASKS:
            # "in which city" and "which city ... in" alike ask under "in"; the words asked
            # about stand under no preposition of their own
            before = tokens[n - 1].casefold() if n else ""
            under = before if before in PREPOSITIONS else stranded if not asks else ""
            asks.add(f"{under} {_ASKS[lower]}".strip())
            preposition, asking = "", True
            continue
        if lower in _MODALS:
            modals.add(lower)
        if lower == ",":
            preposition, asking, joined, fronted = "", False, False, False
            continue
        if lower in NEGATIONS:
            negations += 1
            continue
        if lower in PREPOSITIONS:
            if (after == "," or after in PREPOSITIONS) and not (stranded and n == last):
                # a particle with no object is a word of its own ("going up" is not "going
                # down", "Which came before, ...?"), except the one a question word is asked
                # under ("Which city was X moved to?")
                groups[""] = groups.get("", -1) + 1
                words.append(Word(tag="", stem=lower, text=lower, name=False,
                                  group=groups[""]))
                preposition, asking = "", False
                continue
            preposition, asking = lower, False
            continue
        if lower in ("and", "or"):
            joined = True
            continue
        if lower[0].isdigit():
            numbers.append(lower)
        elif lower in _DETERMINERS and not (token == "A" and n > 0):  # "blood type A"
            continue
        elif _is_stopword(lower) and lower not in _KEPT:
            preposition, asking, joined = "", False, False  # a verb ends the phrase
            continue
        stem = lower if lower[0].isdigit() else _ENGLISH.stemWord(lower)
        if lower in _FREE_ADVERBS and (after in (",", *PREPOSITIONS) or _is_stopword(after)):
            # "from Earth next": next is not under "from", and stands anywhere
            words.append(Word(tag="", stem=stem, text=lower, group=0, name=False, free=True))
            continue
        if not joined:
            groups[preposition] = groups.get(preposition, -1) + 1
        joined = False
        if asking:
            asked.add(stem)
        words.append(Word(tag=preposition, stem=stem, text=lower,
                          group=max(groups.get(preposition, 0), 0),
                          name=n > 0 and token[:1].isupper(), fronted=fronted))
    return QuestionForm(
        words=tuple(words),
        asked=frozenset(asked),
        negations=negations,
        numbers=tuple(sorted(numbers)),
        asks=frozenset(asks),
        modals=frozenset(modals),
    )


# Verbs among the stop words, whose other forms ("uses", "told") are stop words too.
_STOP_VERBS = _words("use tell explain describe give get happen compare")


def _is_stopword(word: str) -> bool:
    return word in STOPWORDS or (word.isalpha() and lexicon().lemma(word).base in _STOP_VERBS)


def _counted_in_owner(match: re.Match[str]) -> str:
    """"how many hearts an octopus has" -> "how many hearts in an octopus": the owner starts at
    its determiner, else at the last run of capitalised words ("how many moons Saturn has");
    left as it is when neither shows where."""
    words = match.group(1).split()
    split = next((n for n in range(1, len(words)) if words[n].casefold() in _DETERMINERS), 0)
    if not split:
        split = len(words)
        while split > 1 and words[split - 1][:1].isupper():
            split -= 1
        split = split if split < len(words) else 0
    if not split and len(words) == 2:  # "how many legs spiders have": one word each
        split = 1
    if not split:
        return match.group(0)
    return f"how many {' '.join(words[:split])} in {' '.join(words[split:])}"


def _tokens(question: str) -> list[str]:
    """Words and numbers as written, commas kept as phrase breaks; possessives turned into
    "of" phrases, number words into digits, politeness and contractions undone."""
    text = unicodedata.normalize("NFKD", question).replace("\u2019", "'")
    text = "".join(c for c in text if not unicodedata.combining(c))  # creme brulee
    text = re.sub(r"^(\W*)A\b", r"\1a", text)  # an article, even when moved ("blood type A")
    text = re.sub(r"\b(what|who|where|when|how)s\b", r"\1 is", text,  # "whats", no apostrophe
                  flags=re.I)
    text = re.sub(r"'s\s+(?=(?:a|an|the)\s)", " is ", text, flags=re.I)  # "how long's a ..."
    text = _THANKS.sub("", _DOTTED.sub(lambda m: m.group(1).replace(".", ""), text))
    if not _shouted(text):
        for short, full in _COUNTRIES:
            text = short.sub(full, text)
    for pattern, replacement in _CASUAL:
        text = pattern.sub(replacement, text)
    polite = _FILLER.sub("", text)
    if re.match(r"\s*(?:if|whether)\b", polite, re.I):
        polite = text  # "Any idea if it rains tomorrow?" asks whether, not "what if"
    if polite != text and not _ASKING.match(polite):
        polite = f"what is {polite}"  # "Could you tell me the dose of ...?"
    text = _strip_preamble(polite)
    text = re.sub(r"[\s,]*\bplease\b[\s,]*", " ", text, flags=re.I)
    if _noun_phrase_only(text):
        text = f"what is {text}"  # "capital of kenya?"
    text = _NUMBER_OF.sub(lambda m: "the " + ("fewest" if m.group(1).casefold() in
                                              ("smallest", "lowest", "least") else "most"),
                          text)
    text = re.sub(r"\bin\s+place\s+of\b", "instead of", text, flags=re.I)
    text = _WHEN.sub(" when ", text)
    for asked_when in (_WHEN_DONE, _DONE_WHEN):  # "X was released when?" too
        text = asked_when.sub(lambda m: f"what {m['be']} the "
                              f"{_EVENT_NOUNS[m['event'].casefold()]} date of {m['thing']}", text)
    text = _MEANS.sub(r"what is the meaning of \1", text)
    text = _POPULATION.sub("what is the population of", text)
    text = _NAME_OF.sub(r"\1 \2", text)
    text = _HAPPEN.sub("happen", text)
    text = _LOCATED.sub(" ", text)
    text = _WEIGH.sub(r"how heavy is \1", text)
    text = _MEASURE_NOUN.sub(
        lambda m: "how " + _MEASURE_NOUNS[m.group(1).casefold()].format(m.group(2)), text)
    text = _HAVE.sub(r"how many \1 in \2", text)
    text = _HAS_HOW_MANY.sub(r"how many \2 in \1", text)
    text = _HOW_MANY_ON.sub(r"\1in", text)
    text = _HOW_MANY_HAS.sub(_counted_in_owner, text)
    text = _HOW_CAN.sub("how do ", text)
    text = _HOW_TO.sub("how do i", text)
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
    return _join_phrasal_verbs(_active_voice(_unfold_possessives(words)))


_PARTICLES = frozenset(["up", "down", "out", "off", "on", "over", "back", "away", "in"])


def _join_phrasal_verbs(words: list[str]) -> list[str]:
    """"go up" -> "go_up" when WordNet knows the phrasal verb, so that it can match "rise";
    not when the particle governs a noun phrase ("go in winter" keeps "in winter")."""
    joined: list[str] = []
    for n, word in enumerate(words):
        after = words[n + 1].casefold() if n + 1 < len(words) else ","
        governs = after != "," and (after not in STOPWORDS or after in _DETERMINERS)
        if joined and word.casefold() in _PARTICLES and not governs \
                and joined[-1][:1].isalpha() \
                and lexicon().is_verb(f"{lexicon().lemma(joined[-1]).base}_{word.casefold()}"):
            joined[-1] = f"{lexicon().lemma(joined[-1]).base}_{word.casefold()}"
        else:
            joined.append(word)
    return joined


_BE = _words("is are was were be been being")
_AGENT_QUESTIONS = _words("who whom what")


def _active_voice(words: list[str]) -> list[str]:
    """A passive clause turned active, so that who did what to whom reads alike in both
    voices: "was Carthage destroyed by Rome" -> "did Rome destroy Carthage", "what animals are
    eaten by orcas" -> "what animals did orcas eat", "who was Caesar killed by", "by whom was
    Caesar killed" and "Caesar was killed by whom" -> "who kill Caesar". Without "by" the agent
    is unknown and the clause is left as it is."""
    lowered = [word.casefold() for word in words]
    if len(words) > 3 and lowered[0] == "by" and lowered[1] in _ASKS:
        return _agent_asked_first(words)
    for by in range(2, len(words)):
        verb = lexicon().participle_base(words[by - 1]) if lowered[by] == "by" else None
        if verb is None:
            continue
        start = max((n + 1 for n in range(by) if lowered[n] == ","), default=0)
        be = max((n for n in range(start, by - 1) if lowered[n] in _BE), default=-1)
        if be < 0:
            continue
        end = by + 1
        asked = end < len(words) and lowered[end] in _AGENT_QUESTIONS | {"which"}
        if asked:
            end += 1  # "... directed by whom?", "... played by which actor?"
        while end < len(words) and _in_agent(lowered[end]) \
                and (not asked or lowered[by + 1] in ("which", "what")):
            end += 1
        between = words[be + 1:by - 1]
        active = _turned_active(words[start:be], between, verb, words[by + 1:end])
        if active is not None:
            return [*words[:start], *active, *words[end:]]
    return words


def _turned_active(before: list[str], between: list[str], verb: str, agent: list[str]
                   ) -> list[str] | None:
    """The clause "<before> be <between> <verb>-ed by <agent>" in the active voice, or None
    when the agent cannot be told."""
    negations = [w for w in between if w.casefold() in NEGATIONS]
    patient = [w for w in between if w.casefold() not in NEGATIONS]
    asks = bool(before) and before[0].casefold() in _ASKS
    if agent and not (len(agent) == 1 and agent[0].casefold() in _AGENT_QUESTIONS):
        if patient or asks:  # "was Carthage destroyed by Rome?", "who was killed by Brutus?"
            return [*before, "did", *negations, *agent, verb, *patient]
        return [*agent, *negations, verb, *before]  # "Carthage was destroyed by Rome"
    if agent and not asks:  # "Casablanca was directed by whom?"
        return [agent[0], *negations, verb, *before, *patient]
    if agent or not asks:
        return None
    if patient:  # "who was Caesar killed by?"
        return [*before, *negations, verb, *patient]
    if before[0].casefold() in _AGENT_QUESTIONS and len(before) > 1:
        return [before[0], *negations, verb, *before[1:]]  # "(tell me) who X was painted by"
    return None


def _in_agent(word: str) -> bool:
    """Whether the word continues the agent's noun phrase after "by" ("by the Bank of
    England"), which ends at a comma, another preposition or a verb."""
    if word == ",":
        return False
    if word in PREPOSITIONS:
        return word == "of"
    return word not in STOPWORDS or word in _DETERMINERS or word in _KEPT \
        or word in ("and", "or")


def _agent_asked_first(words: list[str]) -> list[str]:
    """"By whom was the jet engine invented?" -> "who invent the jet engine"; "by which
    company was X bought" -> "which company buy X"."""
    lowered = [word.casefold() for word in words]
    be = next((n for n in range(2, len(words)) if lowered[n] in _BE), -1)
    end = next((n for n in range(len(words)) if lowered[n] == ","), len(words))
    if be < 0 or be > end:
        return words
    for last in range(end - 1, be, -1):
        verb = lexicon().participle_base(words[last])
        if verb is not None:
            break
        if lowered[last] in PREPOSITIONS:  # "... invented in 1930"
            end = last
    else:
        return words
    asker = ["who" if lowered[1] == "whom" else words[1], *words[2:be]]
    negations = [w for w in words[be + 1:last] if w.casefold() in NEGATIONS]
    patient = [w for w in words[be + 1:last] if w.casefold() not in NEGATIONS]
    return [*asker, *negations, verb, *patient, *words[last + 1:]]


_PREAMBLE_WORDS = _words("""hi hello hey ok okay so quick question sorry basic dumb silly
    stupid always wondered wondering wonder curious just quickly thanks thank folks everyone
    guys team maybe really asking ask simple ve m ll excuse pardon bother good morning
    afternoon evening greetings dear well hope help kindly""")


_GREETINGS = _words("hi hello hey yo excuse pardon sorry greetings dear ok okay so well thanks")


def _greets(words: list[str]) -> bool:
    """Whether a preamble opens by greeting or excusing itself ("Excuse me", "Good morning")."""
    return words[0] in _GREETINGS or (words[0] == "good" and words[1:2] in (
        ["morning"], ["afternoon"], ["evening"], ["day"]))


def _strip_preamble(text: str) -> str:
    """"Quick question: ...", "Sorry if this is basic, but ...", "Excuse me, ...", "Good
    morning! ..." lose their preamble when it holds nothing but such words and stop words
    (before a bare comma, only when it opens by greeting or excusing itself: "In the
    afternoon, ...", "With help, ..." keep their phrase), and no negation."""
    while match := re.match(r"^(.{0,80}?)(:|,\s*but\b|,|!|\bbut\b)\s*(?=\S)", text, re.I):
        words = re.findall(r"[^\W\d_]+", match.group(1).casefold().replace("'", " "))
        if not words or set(words) & NEGATIONS or not all(
                w in _PREAMBLE_WORDS or w in STOPWORDS or len(w) == 1 for w in words) or (
                match.group(2) == "," and (not _greets(words) or set(words) & set(_ASKS))):
            break
        text = text[match.end():]
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
        owner = [match.group(1)]
        if owner[0][:1].isupper():  # "Alexander the Great's", "the Federal Reserve's"
            while out and _in_name(out):
                owner.insert(0, out.pop())
        else:  # "table salt's", "the old man's": back to a stop word or a verb
            while out and out[-1].isalpha() and out[-1].islower() \
                    and out[-1] not in STOPWORDS and out[-1] not in PREPOSITIONS \
                    and not _verb_only(out[-1]):
                owner.insert(0, out.pop())
        end = n + 1
        while end < len(words) and words[end] != "," and words[end].casefold() not in \
                PREPOSITIONS and (words[end].casefold() not in STOPWORDS
                                  or words[end].casefold() in _KEPT):
            end += 1
        out.extend(words[n + 1:end])
        out.extend(["of", *owner, ","] if end < len(words) else ["of", *owner])
        n = end
    return out


def _verb_only(word: str) -> bool:
    """Whether the word is a verb form and no noun ("killed", "wrote"; not "table")."""
    return bool(lexicon().participle_base(word)) or (
        lexicon().is_verb(word) and not lexicon().is_noun(word))


def _in_name(before: list[str]) -> bool:
    """Whether the last word before a name is part of it: a capitalised word, or "the" / "of"
    between capitalised words ("Alexander the Great", "Bank of England")."""
    word = before[-1]
    if word.casefold() in STOPWORDS or word == ",":
        return word.casefold() in ("the", "of") and len(before) > 1 \
            and before[-2][:1].isupper() and before[-2].casefold() not in STOPWORDS
    return word[:1].isupper()
