"""Rank stage: dedupe across queries and sources, score against the question, diversify,
then make sure the evidence can answer a multi-hop question: a passage for every name the
question is about, and the passages about what the best passages name (the director of the
film the question asks about, the city a founder was born in)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from html import unescape

import numpy as np

from core.countries import countries_in
from core.models import Source
from core.retrieval.embedding import Embedder
from core.retrieval.fusion import maximal_marginal_relevance, reciprocal_rank_fusion
from core.text import (
    CAPITAL,
    NAME,
    STOPWORDS,
    folded_words,
    in_phrase,
    opening_subject,
    phrase,
    plain_words,
    same_phrase,
    sentences,
    terms,
    title_subject,
)


async def rank_sources(
    question: str,
    result_lists: Sequence[Sequence[Source]],
    embedder: Embedder,
    limit: int,
    per_document: int,
    min_relevance: float,
    trade_off: float = 0.75,
    prior: Callable[[Source], float] | None = None,
    names: Sequence[str] = (),
) -> list[Source]:
    """The best `limit` distinct passages: fused rank across lists and relevance to the
    question, times the source's `prior` (quality, recency), at most `per_document` from one
    document or web site, none below `min_relevance`. Beyond them: the best passage naming
    each of `names` that none of them names, and up to `BRIDGES` passages about things the
    top passages name."""
    by_id: dict[str, Source] = {}
    for hits in result_lists:
        for source in hits:
            by_id.setdefault(source.id, source)
    if not by_id:
        return []
    fused = reciprocal_rank_fusion([[s.id for s in hits] for hits in result_lists])
    ids = list(by_id)
    vectors = await _vectors([by_id[i] for i in ids], embedder)
    question_vector = (await asyncio.to_thread(embedder.embed, [question]))[0]
    relevance = np.clip(vectors @ question_vector, 0.0, 1.0)
    keep = [n for n in range(len(ids)) if relevance[n] >= min_relevance]
    if not keep:
        return []
    top_fused = max(fused.values())
    score = np.asarray([(0.5 * fused[ids[n]] / top_fused + 0.5 * relevance[n])
                        * (prior(by_id[ids[n]]) if prior else 1.0) for n in keep])
    picked = maximal_marginal_relevance(
        score,
        vectors[keep],
        limit,
        trade_off,
        group_of=lambda k: _group(by_id[ids[keep[k]]]),
        per_group=per_document,
    )
    chosen = [keep[k] for k in picked]
    order = [keep[k] for k in np.argsort(-score, kind="stable")]
    pool = [by_id[i] for i in ids]
    texts = [phrase(f"{s.title} {s.content or s.snippet}") for s in pool]
    # a passage about a thing the question names, or a second hop's passage (about another
    # thing than the question, reached through a chosen passage that names it), is found by
    # its name, not by matching the whole question: the relevance floor is not its
    by_fusion = sorted(range(len(ids)), key=lambda n: -fused[ids[n]])
    chosen += _naming(names, chosen, order, texts, pool,
                      beyond=[n for n in by_fusion if n not in keep])
    chosen += _bridges(question, chosen, by_fusion, pool)
    ranked = []
    for n in chosen:
        source = by_id[ids[n]]
        metadata = source.metadata.model_copy(update={"relevance": round(float(relevance[n]), 4)})
        ranked.append(source.model_copy(update={"metadata": metadata}))
    return ranked


BRIDGES = 2


def _naming(names: Sequence[str], chosen: list[int], order: list[int],
            texts: list[str], pool: Sequence[Source], beyond: Sequence[int] = ()) -> list[int]:
    """For each name no chosen passage is about, the best passage about it (its title or
    first words): a brother's passage that mentions Thomas H. Ince does not say what he is.
    Failing that, the passage `beyond` the relevance floor that the name titles (a question
    weighing two people may match one's passage far better than the other's). Failing that,
    for a name no chosen passage mentions, the best passage that does, above the floor or
    else beyond it."""
    added: list[int] = []
    for name in names:
        needle = phrase(name)
        if any(is_about(needle, pool[n]) for n in chosen + added):
            continue
        found = next((n for n in order if n not in chosen and n not in added
                      and is_about(needle, pool[n])), None)
        if found is None:
            found = next((n for n in beyond if n not in added
                          and same_phrase(title_subject(pool[n].title), name)), None)
        if found is None and not any(needle in texts[n] for n in chosen + added):
            found = next((n for n in [*order, *beyond] if n not in chosen and n not in added
                          and needle in texts[n]), None)
        if found is not None:
            added.append(found)
    return added


def is_about(needle: str, source: Source) -> bool:
    """Whether a passage's title or first words are about `needle` (a `phrase`)."""
    return any(subject.startswith(needle) for subject in subjects_of(source))


def _bridges(question: str, chosen: list[int], order: list[int], sources: list[Source]
             ) -> list[int]:
    """Passages about what the top passages name and the question does not: the second hop
    of "the nationality of the director of Ed Wood"."""
    asked = phrase(question)
    named = " ".join(f"{sources[n].title} {sources[n].content or sources[n].snippet}"
                     for n in chosen[:3])
    added: list[int] = []
    for n in order:
        if len(added) >= BRIDGES:
            break
        if n in chosen:
            continue
        # by any name the passage goes by: "Stanley Park" for "Stanley Park, Blackpool"
        subjects = [s for s in subjects_of(sources[n]) if len(s.strip()) >= 4]
        if subjects and not any(in_phrase(s, asked) for s in subjects) \
                and named_subjects(named, sources[n], 3):
            added.append(n)
    return added


def bridge_queries(question: str, ranked: Sequence[Source], found: Sequence[Source],
                   limit: int, names: Sequence[str] = ()) -> list[str]:
    """Searches for the second hop: the names the best passages give that the question does
    not and no passage found is about, those standing among the question's words first
    ("written and illustrated by Masakazu Katsura" for "written and illustrated by someone
    born in what year?"), then those the opening of a passage about one of the question's
    `names` gives ("The Thing of It Is... is a 1967 novel written by William Goldman" for
    "the author of The Thing of It Is..."), each searched with the question's words its
    passage lacks ("Masakazu Katsura someone born year")."""
    asked = phrase(question)
    wanted = set(terms(NAME.sub(" ", question)))  # what it asks of its names, not the names
    # who made what the question asks through, as the words before a maker's name say it
    agents = {_MAKERS.get(w) or w[:-2] for w in wanted
              if w in _MAKERS or (w.endswith(("er", "or")) and len(w) >= 6)}
    known = {p for s in found for p in subjects_of(s)}
    named = [phrase(n) for n in names]
    # the go-between's own noun: "band" of "the band that released ...", said right before
    # its name ("by Chicago-based rock band Local H")
    kinds = {m.group(1).casefold() for m in _GO_BETWEEN_NOUN.finditer(question)}
    scored: dict[str, tuple[float, str]] = {}
    for rank, source in enumerate(ranked[:BRIDGE_PASSAGES]):
        text = source.content or source.snippet
        own = subjects_of(source)
        lacking = [w for w in _surface(question) if not set(terms(w)) & set(terms(text))]
        # what the passage about a named thing says of it first links it to other things
        about_named = any(is_about(n, source) for n in named)
        for position, sentence in enumerate(sentences(text)):
            for match in NAME.finditer(sentence):
                name = match.group(0)
                key = phrase(name)
                if (not _bridgeable(name, match.start(), sentence) or in_phrase(key, asked)
                        or key in own or key in known
                        or (position == 0 and match.start() == 0 and _fuller(key, own))
                        or _ALIAS.search(sentence[:match.start()])):  # '("This Night")'
                    continue
                window = " ".join([*sentence[:match.start()].split()[-BRIDGE_WINDOW:],
                                   *sentence[match.end():].split()[:BRIDGE_WINDOW]])
                made = sentence[:match.start()].split()[-2:]
                score = (len(wanted & set(terms(window)) - set(terms(name)))
                         + 2 * (_made_by(agents, made)
                                or _work_by(agents, sentence[:match.start()])
                                or (about_named and bool(made)
                                    and made[-1].strip("\"“(,").casefold() in kinds
                                    and sentence[match.end():match.end() + 1] not in "'’")
                                or (about_named
                                    and _agent_of(wanted, sentence[:match.start()]))
                                # a name of the go-between's kind: "the Battle of Stones
                                # River" for "a battle that is also known as what?"
                                or (about_named and bool(kinds & {
                                    w.casefold() for w in name.split()})))
                         + 0.5 / (1 + rank)
                         + (BRIDGE_OPENING if about_named and position == 0 else 0.0))
                query = " ".join([name, *lacking])
                if score > scored.get(key, (-1.0, ""))[0]:
                    scored[key] = (score, query)
    best = sorted(scored.values(), key=lambda item: -item[0])
    return [query for score, query in best if score >= 1.0][:limit]


def _fuller(key: str, own: set[str]) -> bool:
    """Whether a name (a phrase) that opens a passage is its own subject written in full:
    "Joseph Leonard Follett" of "Joseph L. Follett", its first and last words the same (a son
    named later, "Robert Edward Hale" of "Robert Hale", is another man)."""
    words = key.split()
    return len(words) >= 3 and any(
        len(o.split()) >= 2 and o.split()[0] == words[0] and o.split()[-1] == words[-1]
        for o in own)


# makers whose verb is not the noun less "-er" / "-or", as "directed by" is for "director"
# and "narrated by" for "narrator"
_MAKERS = {stem: made for noun, made in (
    ("author", "writ"), ("novelist", "writ"), ("architect", "design"), ("builder", "built"))
    for stem in terms(noun)}


# the works whose maker "a <work> <title> by B" names, by what making them is: the novel
# "Para esta noche" by B was written by B, the film ... by B directed by B
_WORKS_BY = {"writ": ("novel", "novella", "book", "story", "poem", "memoir", "play", "essay",
                      "essays", "collection", "poems", "stories"),
             "direct": ("film", "movie", "documentary"),
             "compos": ("opera", "symphony", "concerto", "score")}
# the noun of a go-between: "band" of "the band that released ...", "director" of "the
# director of ...", "battle" of "a battle that is also known as ..."
_GO_BETWEEN_NOUN = re.compile(r"\b(?i:the|an?)\s+(?:[\w'-]+\s+){0,2}?([a-z]{3,})\s+"
                              r"(?:of|who|that|whose|which|where)\b")
# a name that opens parentheses after what it renames: an alias or a translation
_ALIAS = re.compile(r"\(\s*[\"“']?\s*$")


def _work_by(agents: set[str], before: str) -> int:
    """1 when the text before a name ends "<work> ... by", the work one that one of the
    question's makers makes ("the novel "Para esta noche" by" for the author), else 0; the
    maker's kind may stand between "by" and the name ("a collection of essays by American
    satirical writer")."""
    words = before.split()
    by = next((k for k in range(len(words) - 1, max(len(words) - 5, -1), -1)
               if words[k] == "by"), None)
    if by is None or any(w[:1].isupper() and not countries_in(w) for w in words[by + 1:]):
        return 0
    near = {w.strip("\"“”'(),").casefold() for w in words[max(0, by - 7):by]}
    return int(any(near & set(_WORKS_BY.get(agent, ())) for agent in agents))


def _agent_of(wanted: set[str], before: str) -> int:
    """1 when the name follows "by" after a participle of one of the question's verbs in
    the same clause ("a bill introduced in the U.S. House of Representatives by" for "the
    person who introduced the DISCLOSE Act"; "acquired in 2006 by" for "the company that
    acquired ..."), else 0: the one who did what the question asks about (counted only in a
    passage about a thing the question names)."""
    words = before.split()
    if not words or words[-1] != "by":
        return 0
    clause = re.split(r"[,;:()]", " ".join(words[-_AGENT_REACH:-1]))[-1].split()
    # the participle "by" belongs to is the nearest ("acquired in 2006 and later sued by"
    # names who sued)
    done = next((w for w in reversed(clause)
                 if len(w) > 4 and w.casefold().endswith(("ed", "en"))), None)
    return int(done is not None and bool(set(terms(done)) & wanted))


_AGENT_REACH = 10  # words before "by" a participle may stand


def _made_by(agents: set[str], before: list[str]) -> int:
    """1 when the two words before a name say it made the thing as one of the question's
    makers ("written by" for "writer", "directed by" for "director"), else 0."""
    return int(len(before) == 2 and before[1] == "by"
               and any(before[0].casefold().startswith(made) for made in agents))


def unfound_names(names: Sequence[str], found: Sequence[Source]) -> list[str]:
    """The names no passage found is about (by its title or first words), countries and
    nationalities aside: what a comparison still has to look up."""
    about = {p for s in found for p in subjects_of(s)}
    return [n for n in names if phrase(n) not in about and not countries_in(n)
            and not any(p.startswith(phrase(n)) for p in about)]


def unmentioned_names(question: str, names: Sequence[str], found: Sequence[Source]
                      ) -> list[str]:
    """Searches for the names no passage found mentions at all, countries aside, each with
    the question's other words ("New York Police movie starring former detective"): a
    passage that answers must name them, and the question's first searches missed it."""
    texts = [phrase(f"{s.title} {s.content or s.snippet}") for s in found]
    words = _surface(question)
    return [" ".join([name, *(w for w in words if phrase(w) not in phrase(name))])
            for name in names if not countries_in(name)
            and not any(phrase(name) in text for text in texts)]


BRIDGE_WINDOW = 6  # words each side of a name that tie it to the question
_CALENDAR = frozenset(terms("january february march april may june july august september "
                            "october november december monday tuesday wednesday thursday "
                            "friday saturday sunday"))


def _bridgeable(name: str, at: int, sentence: str) -> bool:
    """A name worth a search: not a date's month, not a nationality or a country alone
    ("Norwegian"), not one capitalised word that opens the sentence ("Although")."""
    words = name.split()
    if len(phrase(name).strip()) < 4 or set(terms(name)) <= _CALENDAR \
            or (countries_in(name) and len(words) == 1):
        return False
    return len(words) > 1 or (at > 0 and words[0].casefold() not in STOPWORDS)


BRIDGE_PASSAGES = 3
BRIDGE_OPENING = 2.0  # a name in the opening of a passage about a named thing: the chain
# goes on from it before names elsewhere that share a word with the question


def _surface(question: str) -> list[str]:
    """The question's content words as written, names left out (they were searched)."""
    return [w for w in re.findall(r"[\w'-]+", NAME.sub(" ", question))
            if w.casefold() not in STOPWORDS and not w.isdigit()]


def subjects_of(source: Source) -> set[str]:
    """What a passage is about, as phrases: its title's subject and its first words'; for a
    title that places its subject ("Stanley Park, Blackpool", "Mark Masons' Hall, London"),
    the subject without the place too, as other passages name it."""
    return {phrase(subject) for subject in _subject_names(source)} - {"\0"}


def _subject_names(source: Source) -> list[str]:
    text = source.content or source.snippet
    title = title_subject(unescape(source.title))
    placed = _PLACED.fullmatch(title)
    opening = opening_subject(text)
    if _NO_NAME.fullmatch(opening) and phrase(opening) not in phrase(title):
        opening = ""  # "The following is the discography of ...": no subject of its own
    return [title, *([opening] if opening else []), *([placed.group(1)] if placed else [])]


# an opening's first words that are words of the language alone, after an article: "The
# following", "The band" (its title says what it is about)
_NO_NAME = re.compile(r"(?:The|A|An)\s+[a-z][a-z\s-]*")


# the kinds of place a passage's opening may give, which other passages put after the first
# word of its name: "the Flamingo Hotel" for "Flamingo Las Vegas is a hotel and casino"
_PLACE_KINDS = ("hotel", "casino", "resort", "stadium", "arena", "airport", "museum",
                "theatre", "theater", "cathedral", "church", "mosque", "temple", "castle",
                "palace", "hospital", "prison", "racecourse", "speedway", "ballpark")
_OPENING_KIND = re.compile(r"\b(?:is|was)\s+(?:an?|the)\s+(?:[\w'-]+\s+){0,3}?("
                           + "|".join(_PLACE_KINDS) + r")\b")


# first words that many places' names share: "Grand Hotel" is no name of Grand Hyatt
_GENERIC_FIRST = frozenset({"grand", "royal", "national", "park", "new", "great", "central",
                            "city", "old", "imperial", "international", "palace", "st",
                            "saint", "king", "queen", "union", "state", "first", "west", "east",
                            "north", "south", "hotel", "county", "regional", "general",
                            "memorial", "metropolitan", "municipal", "american", "british"})


def _by_its_kind(source: Source) -> list[str]:
    """The place's name as its title's first word and the kind its opening gives ("Flamingo
    Hotel" of "Flamingo Las Vegas ... is a hotel and casino"), for a title of two words or
    more that does not end in that kind already; else none."""
    words = title_subject(unescape(source.title)).split()
    kind = _OPENING_KIND.search((source.content or source.snippet)[:300].split(". ", 1)[0])
    if len(words) < 2 or kind is None or not words[0][:1].isupper() \
            or words[0].casefold() in STOPWORDS or words[0].casefold() in _GENERIC_FIRST \
            or words[-1].casefold() == kind.group(1):
        return []
    return [f"{words[0]} {kind.group(1).capitalize()}"]


def named_subjects(text: str, source: Source, least: int = 4) -> set[str]:
    """The subjects of the passage (of more than `least` letters) the text names: as their
    phrase, or, for a name whose phrase leaves out a word that makes it that name, word for
    word: "Will & Grace" is not named by "Jared Grace", "The Young Ones" is by "the
    television series 'The Young Ones'"."""
    said, whole = phrase(text), _whole(text)
    found = set()
    for name in [*_subject_names(source), *_by_its_kind(source)]:
        subject = phrase(name)
        if len(subject) - 2 > least and subject in said \
                and not only_in_lower_case(name, subject, text, "(" in source.title) \
                and (not _loses_words(name) or _whole(name) in whole):
            found.add(subject)
    return found


def only_in_lower_case(name: str, said: str, text: str, titled_apart: bool = False) -> bool:
    """Whether the text says a name of capitalised words (`said`: as a phrase, or part of
    it) only in words of the language: "a recreational and fishing lake" for "Fishing Lake",
    not "the battle of Tippecanoe"; so a name of one word whose title sets it apart from the
    word ("Winner (band)" by "the winner of"). A subject written as words of the language
    ("Young adult fiction", "Camel") is said by them."""
    if len(_CAPITALISED.findall(name)) < (1 if titled_apart else 2):
        return False
    lower = phrase(_CAPITALISED.sub(" zzqz ", text))  # capitalised words blotted out
    return phrase(text).count(said) <= lower.count(said)


_CAPITALISED = re.compile(rf"(?<![\w'’-])[{CAPITAL}][\w'’-]*")


# Words a name may go without and stay the same name: "The Spiderwick Chronicles" is found
# as "Spiderwick Chronicles", "Dukes of Hazzard" as "Dukes Hazzard"
_GLUE = frozenset(["a", "an", "the", "of", "and", "or", "in", "on", "at", "for", "to", "from",
                   "by", "with"])


def _loses_words(name: str) -> bool:
    """Whether the name's phrase is one word left of a name that needs more to be that
    name: "Will & Grace" as "grace", "Out of Africa" as "africa"."""
    return len(plain_words(name)) == 1 and any(
        word in STOPWORDS and word not in _GLUE for word in folded_words(name))


def _whole(text: str) -> str:
    """The text's words, stop words too, padded for whole-phrase matching."""
    return f" {' '.join(folded_words(text))} "


def without_place(title: str) -> str:
    """A title without the place that tells its subject apart: "Sullivan County, New
    Hampshire" is about Sullivan County, not New Hampshire."""
    placed = _PLACED.fullmatch(title_subject(title))
    return placed.group(1) if placed else title


# "<subject>, <one to three capitalised words>": Wikipedia's way to tell places apart; not
# "Coty, Inc." nor "United States presidential election, 2016"
_PLACED = re.compile(rf"([^,]{{4,}}),\s+((?!(?:Inc|Ltd|Co|Corp|Jr|Sr)\b)[{CAPITAL}][\w'.-]+"
                     rf"(?:\s+[{CAPITAL}][\w'.-]+){{0,2}})")


def tied_to(source: Source, names: Sequence[str], found: Sequence[Source]) -> bool:
    """Whether a passage is tied to what a question names: it names one of them, or its
    subject is named by a passage among `found` that does (the second hop: the university
    named in the founder's passage, for "the university the founder of Amazon attended").
    A passage tied to neither answers some other question."""
    if any(_named(n, source) for n in names):
        return True
    wanted = [phrase(n) for n in names]
    subjects = subjects_of(source) | {phrase(alias) for alias in _by_its_kind(source)}
    for other in found:
        passage = phrase(f"{other.title} {other.content or other.snippet}")
        if any(n in passage for n in wanted) and any(s in passage for s in subjects):
            return True
    return False


def numbered_sibling(source: Source, names: Sequence[str]) -> bool:
    """Whether the passage is about another of a numbered series than the one the question
    names: its subject and a name share their words but each has a number the other lacks
    ("Marine Fighting Squadron 511" for "VMF-213 Marine Fighting Squadron", "Apollo 13" for
    "Apollo 11"; not "1957 Indianapolis 500" for "Indianapolis 500")."""
    if any(is_about(phrase(n), source) for n in names):
        return False
    wanted = [set(plain_words(n)) for n in names if not _named(n, source)]
    for subject in subjects_of(source):
        words = set(subject.split())
        for name in wanted:
            letters, named_letters = _letter_words(words), _letter_words(name)
            shorter, longer = sorted((letters, named_letters), key=len)
            if shorter and shorter <= longer and words - letters - name \
                    and name - named_letters - words:
                return True
    return False


def _named(name: str, source: Source) -> bool:
    return phrase(name) in phrase(f"{source.title} {source.content or source.snippet}")


def _letter_words(words: set[str]) -> set[str]:
    return {w for w in words if not any(c.isdigit() for c in w)}


def _group(source: Source) -> str:
    """Web pages group by site, so that one site cannot fill the answer; documents by file."""
    if source.url and source.metadata.domain:
        return f"site:{source.metadata.domain}"
    return source.document_id or source.id


async def _vectors(sources: list[Source], embedder: Embedder) -> np.ndarray:
    missing = [n for n, s in enumerate(sources) if s.embedding is None]
    fresh = (
        await asyncio.to_thread(
            embedder.embed, [f"{sources[n].title}\n{sources[n].content or sources[n].snippet}"
                             for n in missing]
        )
        if missing
        else None
    )
    rows = []
    for n, source in enumerate(sources):
        if source.embedding is not None:
            rows.append(np.asarray(source.embedding, dtype=np.float32))
        else:
            assert fresh is not None
            rows.append(fresh[missing.index(n)])
    return np.vstack(rows)
