"""Small text utilities shared by retrieval, intent detection and extractive answers."""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any

_STOPWORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom whose why will with would you
    your yours yourself yourselves use used using get gets one ones also may might must
    shall tell explain describe give way ways much many whats vs versus compare comparison
    difference differences between since work works happen happens compared comparing
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

_WORD = re.compile(r"[^\W_]+(?:[._'-][^\W_]+)*", re.UNICODE)
_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ations", "ation", "ings", "ing",
             "edly", "ed", "ly")
_PLURAL_ES = ("sses", "ches", "shes", "xes", "zes")


def normalise(text: str) -> str:
    """Case-folded, accent-stripped, punctuation-free, single-spaced text."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(w.lower() for w in _WORD.findall(text.casefold()))


def fold(text: str) -> str:
    """Case- and accent-folded: "Zürich" -> "zurich"."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in folded if not unicodedata.combining(c))


def plain_words(text: str) -> list[str]:
    """Case- and accent-folded words without stop words or stray letters: "The O2 Arena's"
    -> ["o2", "arena", "s"] minus the letter -> ["o2", "arena"]."""
    return [w for w in folded_words(text) if (len(w) > 1 or w.isdigit()) and w not in STOPWORDS]


def folded_words(text: str) -> list[str]:
    """Every word of the text, case- and accent-folded, stop words too."""
    return re.findall(r"[^\W_]+", fold(text))


def opening(text: str, words: int = 20) -> str:
    """The start of a passage, where it says what it is about."""
    return " ".join(text.split()[:words])


_COPULA = re.compile(r"\s(?:is|was|are|were|has|had|have|became|refers)\s", re.I)


def opening_subject(text: str) -> str:
    """What a passage's first sentence is about: its words before the first "is" / "was"
    ("The Massachusetts Institute of Technology (MIT) is ..."), or its opening words when it
    has no such verb there. "Lausanne is a city on Lake Geneva" is not about Geneva."""
    start = opening(text)
    verb = _COPULA.search(start)
    return start[:verb.start()] if verb else start


# a page's note sending readers to another of its name, with nothing else: "For the Nobel
# Prize-winning Icelandic author, see Halldór Laxness"
_HATNOTE = re.compile(r"^\W*(?:For\s+(?:the|an?|other|more|information)|This article is about)"
                      r"\b[^.]{0,200}?,\s+see\b[^.]{1,120}\W*$", re.I)


def is_hatnote(text: str) -> bool:
    """Whether a passage is only a note pointing at another page, about nothing itself."""
    return bool(_HATNOTE.match(text.strip()))


def title_subject(title: str) -> str:
    """What a page is about: its title without a disambiguator or the site's name."""
    title = re.split(r"\s+[-|–—]\s+", title)[0]
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()


def _capitals() -> str:
    """Every capital letter of the Latin, Greek and Cyrillic scripts, as the inside of a
    regular expression's character class: "Über Goober" and "Łódź" are names too."""
    letters = [chr(c) for c in range(0xC0, 0x530) if chr(c).isupper() and chr(c).isalpha()]
    return "A-Z" + "".join(letters)


CAPITAL = _capitals()
# A name's words (an initial among them: "John W. Campbell"), and a regnal or sequel numeral
# after them ("George V", "Louis XIV").
_NAME_WORD = (rf"(?:[{CAPITAL}]\.(?=\s+[{CAPITAL}])(?!\s+(?:The|A|An|In|It|He|She|They|This)\b)|"
              rf"[{CAPITAL}][\w'.-]*[\w'])")
NAME = re.compile(rf"\b{_NAME_WORD}(?:\s+(?:of\s+(?:the\s+)?|de\s+|von\s+|van\s+|la\s+|vs?\.\s+|"
                  rf"and\s+(?=[{CAPITAL}]))?{_NAME_WORD})*(?:\s+[IVX]{{1,4}}\b(?!['’]))?")


def phrase(text: str) -> str:
    """`plain_words` padded with spaces, for whole-phrase matching (`phrase(name) in
    phrase(passage)`); text without words gives a string no phrase contains."""
    words = plain_words(text)
    return f" {' '.join(words)} " if words else "\0"


def same_phrase(first: str, second: str) -> bool:
    """Whether two texts are the same words (`phrase`); two of short words alone by all
    their words ("I Was" is not "Should We Tell Him", though neither keeps a word)."""
    found = phrase(first)
    if found != "\0" or phrase(second) != "\0":
        return found == phrase(second)
    return bool(all_words(first)) and all_words(first) == all_words(second)


def all_words(text: str) -> list[str]:
    """Every word of `text` (`folded_words`), short ones too, without a leading "the": "The
    Works" and "works" are the same title, "Comes a Horseman" and "Comes a Horseman have the
    same" are not."""
    words = folded_words(text)
    return words[1:] if words[:1] == ["the"] else words


def in_phrase(part: str, whole: str) -> bool:
    """Whether the `phrase` `part` is in the `phrase` `whole`, its last word in the plural
    too: "soft drink" is in "the main flavor of both soft drinks"."""
    return part in whole or (part != "\0" and any(
        f"{part[:-1]}{ending} " in whole for ending in ("s", "es")))


# British spellings of words questions often write the American way: "flavoured" and
# "flavor", "centre" and "center"
_BRITISH = re.compile(r"^(?:(colo|flavo|hono|labo|favo|behavio|neighbo|harbo|rumo|humo|vapo|armo|"
                      r"odo|endeavo|valo|vigo|savo|splendo|clamo|rigo|parlo|tumo)ur|"
                      r"(cent|theat|met|lit|fib|calib|lust|sab)re(d?))(?=[a-z]{0,4}$)")


def stem(word: str) -> str:
    """A light suffix stripper: enough to match sort/sorted/sorting or duplicate/duplicates,
    not a linguist; British spellings read as American ("flavoured" as "flavored")."""
    word = _BRITISH.sub(lambda m: f"{m[1]}r" if m[1] else f"{m[2]}er{'ed' if m[3] else ''}",
                        word)
    if len(word) <= 3:
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    else:
        if word.endswith(_PLURAL_ES):
            word = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def terms(text: str) -> list[str]:
    """Stemmed content words, in order, for lexical matching."""
    words = []
    for raw in _WORD.findall(text.casefold()):
        for word in re.split(r"[._'-]", raw) if not raw.isalpha() else [raw]:
            if len(word) > 1 and word not in STOPWORDS:
                words.append(stem(word))
    return words


# An API reference entry "name(args) - Description": the sentence is the description.
_SIGNATURE = re.compile(r"^(?:@?[\w.]+\([^)]*\)\s+-\s+)+")
# Abbreviations pysbd splits after although a number or name follows ("c. 1850", "b. 1950").
# Also titles and names that a name follows ("Warner Bros. Records", "Mt. Everest").
_CUT_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:c|ca|fl|b|d|r|approx|cf|vs|viz|bros|mt|ft|dr|"
                               r"mr|mrs|ms|prof|gen|gov|sen|rep|lt|col|capt|sgt|st)\.$", re.I)
_local = threading.local()


def sentences(text: str) -> list[str]:
    """Split prose into sentences (pysbd: abbreviations, initials and decimals stay inside
    their sentence); code blocks and tables are dropped."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [ln for ln in paragraph.splitlines() if not re.match(r"^\s*(\||>>>|\.\.\.)", ln)]
        flat = re.sub(r"\s+", " ", " ".join(lines)).strip()
        flat = _SIGNATURE.sub("", re.sub(r"^[-*]\s+", "", flat))
        if flat:
            found.extend(_split(flat))
    return found


def _fragment(piece: str, words: int = 2) -> bool:
    """Up to `words` words ending in a full stop, cut at an abbreviation pysbd does not know:
    the end of the sentence before ("Records." after "Warner Bros."), or, one word, the
    start of the next ("Geo." of "Geo. Hall & Sons was ...")."""
    return len(piece.split()) <= words and piece[-1:] == "." and piece[:1].isalpha()


# a piece that opens with an aside in brackets and goes on in lower case: the rest of a
# sentence whose subject's title ends in "?" or "!"
_ASIDE_GOES_ON = re.compile(r"\([^()]{1,40}\)\s+[a-z]")


# An empty pair of quotes where a title was lost ('the series, "".'): pysbd pairs each of its
# marks with another quote further on and keeps everything between them in one "quotation".
_EMPTY_QUOTES = re.compile(r'(?<![^\s(,;:])""(?=[\s.,;:)]|$)')
_NO_QUOTES = "\ue000\ue001"  # two private-use characters stand in for the pair meanwhile


def segment(segmenter: Any, text: str) -> list[str]:
    """pysbd's pieces of `text`. An empty pair of quotes is read as such: both splits are
    made, with the pair and with it masked, and the one that finds more sentences is kept
    (a quote mispaired holds sentences together, never cuts one)."""
    pieces: list[str] = segmenter.segment(text)
    if _EMPTY_QUOTES.search(text):
        masked = [piece.replace(_NO_QUOTES, '""')
                  for piece in segmenter.segment(_EMPTY_QUOTES.sub(_NO_QUOTES, text))]
        if len(masked) > len(pieces):
            return masked
    return pieces


@lru_cache(maxsize=8192)
def _split(paragraph: str) -> tuple[str, ...]:
    segmenter = getattr(_local, "segmenter", None)
    if segmenter is None:  # pysbd's segmenter keeps state per call: one per thread
        import pysbd

        segmenter = _local.segmenter = pysbd.Segmenter(language="en", clean=False)
    merged: list[str] = []
    for piece in segment(segmenter, paragraph):
        piece = piece.strip()
        if not piece:
            continue
        if merged and not any(c.isalnum() for c in piece):  # the rest of an ellipsis
            merged[-1] += piece
        elif merged and (_CUT_ABBREVIATION.search(merged[-1]) or _fragment(piece)
                         or _fragment(merged[-1], words=1)
                         or piece[:1].islower()  # "The Thing of It Is... is a novel"
                         or _ASIDE_GOES_ON.match(piece)):  # "Why Is There Air? (1965) is"
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return tuple(merged)


BYTES_PER_TOKEN = 4.0  # English prose runs near 4 UTF-8 bytes a model token


def estimate_tokens(text: str, bytes_per_token: float = BYTES_PER_TOKEN) -> int:
    """A language model's tokens in `text`, from its size; no tokenizer is loaded. Pass a
    smaller `bytes_per_token` for a generous count (a budget reserved before a call)."""
    return int(len(text.encode()) / bytes_per_token)


# Half of a UTF-16 surrogate pair, alone: JSON can spell one (`"\ud800"`), but no UTF-8 text
# holds it, so the tokenizer, the databases and every response encoder refuse it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unstorable_characters(text: str) -> list[str]:
    """The characters of `text` that no store or tokenizer takes, as `U+XXXX` in order of
    first appearance: lone surrogates, and NUL (PostgreSQL text refuses it)."""
    found = dict.fromkeys(f"U+{ord(c):04X}" for c in _LONE_SURROGATE.findall(text))
    if "\x00" in text:
        found["U+0000"] = None
    return list(found)


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, so that it can be encoded."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def names_itself(name: str, texts: tuple[str, ...], question: str = "") -> bool:
    """Whether one of `texts` names `name` on its own, not as the start of a longer name:
    "Toy Story 3", "Casablanca Records" and "Blade Runner 2049" are other things than Toy
    Story, Casablanca and Blade Runner. A word the question itself puts there, or a legal
    form ("Carlsberg Group", "Everton F.C."), does not make it another."""
    wanted = [fold(w) for w in _NAME_TOKEN.findall(name) if w[0].isalnum()]
    asked = {fold(w) for w in _NAME_TOKEN.findall(question)}
    for text in texts:
        tokens = _NAME_TOKEN.findall(text)
        at_word = [n for n, t in enumerate(tokens) if t[0].isalnum()]
        words = [fold(tokens[n]) for n in at_word]
        for at in range(len(words) - len(wanted) + 1):
            if words[at:at + len(wanted)] != wanted:
                continue
            last = at_word[at + len(wanted) - 1]
            after = tokens[last + 1] if last + 1 < len(tokens) else ""
            if not extends_name(after) or fold(after) in asked:
                return True
    return not wanted


_NAME_TOKEN = re.compile(r"[^\W_]+|[^\w\s]")
# the legal forms and club words that end an organisation's name ("Carlsberg Group",
# "Everton F.C.")
LEGAL_FORMS = frozenset({"group", "inc", "corp", "corporation", "company", "co", "ltd",
                         "limited", "plc", "ag", "gmbh", "sa", "se", "llc", "nv", "bv", "ab",
                         "f", "fc", "afc", "cf", "sc", "football", "club"})


def extends_name(token: str) -> bool:
    """A number or a capitalised word right after a name makes it a longer name."""
    if not token or not token[0].isalnum():
        return False
    if token[0].isdigit():
        return len(token) < 5 or token.isdigit()
    return (token[0].isupper() and token.casefold() not in STOPWORDS
            and fold(token) not in LEGAL_FORMS)
