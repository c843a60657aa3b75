"""An answer made of the retrieved sentences that best answer the question; no model needed.

The first sentence is the one that answers: besides matching the question, a sentence that
holds what the question asks for (a year for "when", a number for "how many", a name it does
not already contain for "who", "which" or "where") leads. A sentence that leans on the one
before it ("He was born in Ohio.", "The stadium seats 18,467.") is only used together with
the sentences back to the one that names its subject, from the same passage, never alone.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.answer.lexicon import lexicon
from core.answer.synthesis.base import Draft
from core.answer.verdict import (
    IS_A,
    Basis,
    Verdict,
    closed,
    decide,
    either_or,
    shared,
    through_another,
)
from core.countries import countries_in
from core.models import Citation, QueryIntent, QuestionType, Source
from core.retrieval.embedding import Embedder
from core.retrieval.fusion import maximal_marginal_relevance
from core.retrieval.rank import (
    is_about,
    named_subjects,
    numbered_sibling,
    only_in_lower_case,
    subjects_of,
    tied_to,
)
from core.text import (
    CAPITAL,
    STOPWORDS,
    in_phrase,
    is_hatnote,
    phrase,
    plain_words,
    sentences,
    terms,
    title_subject,
)

NO_ANSWER = "The sources found do not answer this question."
UNSETTLED = ("The sources found do not settle this either way; the passages closest to it are "
             "quoted.")
ABSENCE = ("The answer No rests on a passage that does not describe its subject in the "
           "question's words; it may say so in other words.")
LOOSE = ("The answer Yes rests on passages that say what the question asks in other words "
         "than its verb.")
OTHERWISE = ("The answer No rests on what the passage about the question's subject gives "
             "instead of what the question says.")
BROAD = ("The answer Yes rests on a passage that names what the question asks without saying "
         "which kind (\"a painter\" for \"a visual artist\", \"a director\" for \"a film "
         "director\").")
_NOTE = {Basis.ABSENCE: ABSENCE, Basis.OTHERWISE: OTHERWISE, Basis.LOOSE: LOOSE,
         Basis.BROAD: BROAD}  # what a Yes or No rests on, as the answer says it
NOT_ANSWERED = NO_ANSWER
# the go-between a question asks about ("an actress who was born when?"), which no quoted
# passage is about: the answer may stop a step short of it
SHORT_OF = "No passage quoted is about the {kind} the question asks about; the answer may " \
    "stop a step short of it."
ANSWER_TYPE_BONUS = 0.12
LEAD_MARGIN = 0.15
KIND_MARGIN = 0.3  # a passage about the kind of thing asked for may lead from further behind
KIND_BONUS = 0.2  # a second hop's passage whose opening is the kind of go-between asked of
EARNING_SHARE = 0.85  # of the lead's score: another passage's sentence, when nothing is named
# How far back a referring sentence may reach for the sentence that names its subject,
# across referring sentences only; four ("It ... The park ... It was designed by ...")
# quoted whole openings whose words then covered questions they did not answer (see
# docs/benchmarks/quality.md)
MAX_ANTECEDENT_DISTANCE = 2


# go-betweens that any person is: "one of the two people who recorded ..."
_ANYONE = frozenset({"people", "person", "persons", "man", "men", "woman", "women", "one",
                     "ones", "someone", "individual", "individuals"})


def stops_short(notes: Sequence[str]) -> bool:
    """Whether the writer's `notes` say its answer may stop short of the go-between."""
    return any(note.startswith(_SHORT_OF_START) for note in notes)


_SHORT_OF_START = SHORT_OF.split("{", 1)[0]


_REFERRING = re.compile(
    r"^(?:[\"'(]*)(?:he|she|it|they|his|her|its|their|him|them|this|these|those|that|such|"
    r"both|neither|the latter|the former)\b", re.I)
# a sentence bringing in another person "he" or "she" may mean: "His brother Sam was ..."
_ANOTHER_PERSON = re.compile(r"\b(?:brother|sister|father|mother|son|daughter|wife|husband|"
                             r"partner|friend|cousin|uncle|aunt|both|they|the two)\b", re.I)
_DEFINITE_COMMON = re.compile(r"^(?:[\"'(]*)[Tt]he\s+[a-z]")  # "The film", "The club" ...
# a pronoun after an opening phrase: "In Hawaiian, it means ...", "A prolific author, he ...",
# "On January 28, 2015, he became ...",
# "Since 2017 it has been known as ..." (a phrase of time or place needs no comma)
_OPENING_PHRASE = (r"(?:(?:[^,;:.]{2,60},){1,3}|(?:In|Since|After|Before|During|From|Until|By|"
                   r"On|At|Later|Today|Now)(?:\s+[\w'-]+){0,3})")
_REFERRING_AFTER = re.compile(  # "Since 2017 it has been ..."
    rf"^{_OPENING_PHRASE}\s+(?:he|she|it|they)\s+[a-z]")
# "He ...", "In 1980 he ...": of the person the passage opens with, when no sentence naming
# another comes between
_PERSONAL = re.compile(rf"^[\"'(]*(?:(?i:he|she)|{_OPENING_PHRASE}\s+(?:he|she))\s")
_YEAR_OR_DATE = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})\b|\b(?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December)\b")
_NAME = re.compile(
    rf"\b[{CAPITAL}][\w'-]+(?:\s+(?:of\s+|de\s+|von\s+)?[{CAPITAL}][\w'-]+)*")


@dataclass
class _Candidate:
    source_index: int
    position: int
    text: str  # what is quoted: the sentence, with the ones it leans on before it
    focus: str  # the sentence itself, which must earn its place on its own
    semantic: float = 0.0
    lexical: float = 0.0
    bonus: float = 0.0
    floor: float = 0.0  # the score of a sentence this unit absorbed

    @property
    def score(self) -> float:
        return max(self.floor, 0.65 * self.semantic + 0.35 * self.lexical + self.bonus)


class ExtractiveSynthesizer:
    name = "extractive"

    def __init__(
        self, embedder: Embedder, max_sentences: int = 8, min_sentence_score: float = 0.32
    ) -> None:
        self._embedder = embedder
        self._max_sentences = max_sentences
        self._min_score = min_sentence_score

    async def synthesize(self, question: str, intent: QueryIntent, sources: list[Source]) -> Draft:
        verdict = decide(question, intent, sources)
        if verdict is not None:
            return _decided(verdict, sources).model_copy(
                update={"notes": [_NOTE[verdict.basis]] if verdict.basis else []})
        # a yes/no, either-or or in-common question the passages do not settle
        notes = [UNSETTLED] if closed(question) or either_or(question, intent) \
            or shared(question) else []
        draft = await self._extract(question, intent, sources)
        return draft.model_copy(update={"notes": draft.notes + notes})

    async def _extract(self, question: str, intent: QueryIntent, sources: list[Source]
                       ) -> Draft:
        # only passages tied to what the question names are quoted, where there are such
        names = [e for e in intent.entities if plain_words(e)]
        tied = {n for n, source in enumerate(sources)
                if names and tied_to(source, names, sources)}
        # nor the passage about another of a numbered series than the one it names
        others = {n for n, source in enumerate(sources) if numbered_sibling(source, names)}
        candidates = [c for c in _candidates(sources) if (not tied or c.source_index in tied)
                      and c.source_index not in others]
        if not candidates:
            return Draft(summary=NO_ANSWER)
        joined = [c.text for c in candidates if c.text != c.focus]
        vectors, whole = await asyncio.to_thread(self._embed, question, candidates, joined)
        question_terms = set(intent.key_terms or terms(question))
        wanted = answer_type(question)
        for candidate, vector in zip(candidates, vectors[1:], strict=True):
            candidate.semantic = float(max(0.0, vector @ vectors[0]))
            if candidate.text in whole:  # a referring sentence: half its own, half with its
                candidate.semantic = 0.5 * candidate.semantic + 0.5 * float(  # subject's
                    max(0.0, whole[candidate.text] @ vectors[0]))
            found = set(terms(candidate.focus))
            context = set(terms(candidate.text)) - found  # what its antecedent adds counts half
            candidate.lexical = (len(question_terms & found) + 0.5 * len(question_terms & context)
                                 ) / len(question_terms) if question_terms else 0.0
            if wanted:
                candidate.bonus = ANSWER_TYPE_BONUS * holds_answer_type(candidate.focus, wanted,
                                                                        question)
        keep = [n for n, c in enumerate(candidates) if c.score >= self._min_score]
        if not keep:
            return Draft(summary=NO_ANSWER)
        picked = [keep[k] for k in maximal_marginal_relevance(
            np.asarray([candidates[n].score for n in keep]),
            vectors[1:][keep],
            self._max_sentences,
            trade_off=0.85,
        )]
        picked = _cover_entities(picked, candidates, keep, intent, sources)
        picked = [n for n in picked if not _redundant(n, picked, vectors[1:])]
        picked = [n for n in picked if not _inside_another(n, picked, candidates)]
        chosen = [candidates[n] for n in picked]
        # the answer is in the passage about what the question names or one that passage
        # names, not in another sharing the rest of the question's words (another
        # laureate's Nobel Prize for "the author of The Captive Mind")
        reach = _reached_through(question, names, sources)
        leading = [c for c in chosen if c.source_index in reach] or chosen
        lead = max(leading, key=lambda c: c.score)
        answering = [c for c in leading if c.bonus >= ANSWER_TYPE_BONUS]
        if lead.bonus < ANSWER_TYPE_BONUS and answering:
            # the sentence that holds the answer next to the question's words goes first,
            # when it is nearly as good a match: "... was born in Budapest" before "Casablanca
            # is a 1942 film directed by Michael Curtiz"
            best = max(answering, key=lambda c: c.score)
            if best.score >= lead.score - LEAD_MARGIN:
                lead = best
        asked, kind = phrase(question), asked_kind(question)
        asked_of = None if kind else _go_between(question)
        between = asked_of.group(2) if asked_of else None
        # of a go-between the question asks about ("a historian who died when?"), any
        # passage of its kind the named one's passage names, however far behind
        kinds = [c for c in (candidates if between else chosen) if c.position == 0
                 and c.bonus > 0 and (between or c.score >= lead.score - KIND_MARGIN)
                 and (_described_as(between, sources[c.source_index]) if between
                      else _is_kind(kind, sources[c.source_index]))
                 and not any(in_phrase(subject, asked) and not _another_of_its_name(
                     subject, sources[c.source_index], question)
                     for subject in subjects_of(sources[c.source_index]))]
        written = " ".join(f"{s.title} {s.content or s.snippet}" for s in sources
                           if any(is_about(phrase(n), s) for n in names)) if kinds else ""
        named = phrase(written) if written else ""

        def named_at(c: _Candidate) -> int:  # where the named one's passage names it
            # first, -1 for nowhere; "Erskine Childers" names "Robert Erskine Childers": the
            # last two words of a name of three or more; not "fishing lake" for "Fishing Lake"
            title = title_subject(sources[c.source_index].title)
            places = [named.find(said) for subject in subjects_of(sources[c.source_index])
                      if len(subject) > 5 for said in (subject, *(
                          [f" {' '.join(subject.split()[-2:])} "]
                          if len(subject.split()) >= 3 else []))
                      if not only_in_lower_case(title, said, written,
                                                "(" in sources[c.source_index].title)]
            return min((p for p in places if p >= 0), default=-1)

        def named_by_them(c: _Candidate) -> bool:
            return named_at(c) >= 0

        if between:  # only one the named one's passage names
            kinds = [c for c in kinds if named_by_them(c)]
        if kinds:
            # the passage whose opening says its subject is the kind of thing asked for, a
            # thing the question does not name, is the answer: "Arena of Khazan is a 1979
            # game adventure for Tunnels & Trolls" for "the adventure in Tunnels and Trolls";
            # first one that the passage about a named thing names (the pilot L'Oiseau Blanc's
            # passage names, of two French ace pilots)
            # of a go-between, the one its opening describes as the question does: "a
            # heavy metal band", not another band the same man founded
            described = set(terms(asked_of.group(1))) if asked_of else set()
            clause = _clause_asked(asked_of) if asked_of else set()

            def fits(c: _Candidate) -> int:  # the most the passage says of what is asked
                return max(len(clause & _told(o.focus)) for o in candidates
                           if o.source_index == c.source_index)

            # ... and the one it names first ("an 1851 novel by Herman Melville" before the
            # friend it was dedicated to)
            lead = max(kinds, key=lambda c: (named_by_them(c), len(described & set(terms(
                (sentences(sources[c.source_index].content or "") or [""])[0]))),
                -named_at(c) if between else 0, fits(c), c.score))
            if clause:
                lead = max((c for c in candidates if c.source_index == lead.source_index),
                           key=lambda c: (len(clause & _told(c.focus)), c.bonus, c.score))
        defined = _defined(question, names)
        if defined is not None:  # "What is Opry Mills?": what its own passage says first
            openings = [c for c in candidates if c.position == 0
                        and is_about(phrase(defined), sources[c.source_index])]
            if openings:
                lead = max(openings, key=lambda c: c.score)
        chain = [lead]
        # the go-between's own passage answers: no hop beyond it
        hop = None if between and kinds else _second_hop(
            question, lead, candidates, sources, question_terms, self._min_score / 2,
            through_another(question, names), names)
        if hop is not None:  # the answer is about what the best sentence names: it leads,
            # unless what it names is the answer ("Which film director hosted ...?": the
            # sentence naming the host leads, the passage saying he is a director follows),
            # or the best sentence's own passage is of the kind asked for (the film "based on
            # the scam" for "turned into a movie of what name?")
            chain = [lead, hop] if _is_kind(kind, sources[hop.source_index]) \
                or _is_kind(kind, sources[lead.source_index]) else [hop, lead]
        attribute = set(terms(asked_attribute(question)))
        if attribute and not attribute <= set(terms(chain[0].focus)):
            # the link that names what is asked ("Its county seat is Newport", "roles such as
            # Princess Jessica") leads the one that only reaches it
            linked = {c.source_index for c in chain}
            naming = [c for c in [*chain[1:], *chosen] if c.source_index in linked
                      and attribute <= set(terms(c.focus)) and c.bonus > 0]
            if naming:
                chain = [naming[0], *(c for c in chain if c is not naming[0])]
        stating = _stating(question, wanted, chain, candidates, sources)
        if stating is not None:
            chain = [stating, *(c for c in chain if c is not stating)]
        rest = sorted(_earning(chain, chosen, sources, names),
                      key=lambda c: (c.source_index, c.position))
        short = between is not None and between not in _ANYONE and not any(
            _reaches(between, sources[c.source_index]) for c in chain)
        return Draft(
            notes=[SHORT_OF.format(kind=between)] if short else [],
            summary=_cite(chain[0]),
            detail=" ".join(_cite(c) for c in chain[1:] + rest),
            citations=[
                Citation(claim=c.text, source_id=sources[c.source_index].id, quote=c.text)
                for c in [*chain, *rest]
            ],
        )

    def _embed(self, question: str, candidates: list[_Candidate], joined: list[str]
               ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        vectors = self._embedder.embed([question] + [c.focus for c in candidates] + joined)
        count = len(candidates) + 1
        return vectors[:count], dict(zip(joined, vectors[count:], strict=True))


def _reached_through(question: str, names: list[str], sources: list[Source]) -> set[int]:
    """The passages about the things a question names ("The Captive Mind" of "the author
    of The Captive Mind"), a country or nationality aside, or whose titles hold one ("1925
    Birthday Honours", "George Hammond (Stargate)"), and those such a passage names as a
    name; empty when no passage is about them. The answer is there whether the question
    reaches it through a go-between ("the author of ...") or asks of the named thing itself,
    not in another passage sharing the question's other words ("Fishing Lake" for "a lake
    ... named after whom?")."""
    things = [phrase(n) for n in names if not countries_in(n)]
    about = {n for n, s in enumerate(sources)
             if any(is_about(t, s) or in_phrase(t, phrase(s.title)) for t in things)}
    said = " ".join(f"{sources[n].title} {sources[n].content or sources[n].snippet}"
                    for n in about)
    # a thing with a passage of its own may be named by the go-between's ("Travis co-wrote
    # Jackson's hit ..." in a passage about Travis's album)
    anchors = [t for t in things if any(is_about(t, sources[n]) for n in about)]
    return about | {n for n, s in enumerate(sources) if about and n not in about and (
        named_subjects(said, s, 3)
        or any(in_phrase(t, phrase(f"{s.title} {s.content or s.snippet}")) for t in anchors))}


def _second_hop(question: str, lead: _Candidate, candidates: list[_Candidate],
                sources: list[Source], question_terms: set[str], floor: float,
                go_between: bool, names: Sequence[str] = ()) -> _Candidate | None:
    """The best sentence of a passage about something the lead's passage names (Masakazu
    Katsura, in "I"s is a manga written and illustrated by Masakazu Katsura"), scored on
    the question's words the lead's passage lacks ("born", "year") and what the question
    asks for: the question reaches its answer through that thing. Only when the lead's
    passage lacks some of the question's words, and the other passage has some of them or
    the question asks through a go-between ("the woman who portrayed ...")."""
    asked = phrase(question)
    lead_source = sources[lead.source_index]
    said = f"{lead_source.title} {lead_source.content or lead_source.snippet}"
    rest = question_terms - set(terms(f"{lead_source.title} {lead_source.content}"))
    if not rest:
        if not (go_between and _about_a_name(lead_source, names)) \
                or _names_its_kind(lead.focus, question):
            return None
        # the named thing's own passage says of it what the question asks of the go-between
        # ("The White EP ... produced by Ken Thomas" for "The EP that the White EP followed
        # up was produced by whom?"): the go-between's passage answers, unless the lead
        # names an answer of the kind asked ("... Lake Corvane, which lies in Pine County")
        rest = question_terms - set(terms(" ".join(names)))
        if not rest:
            return None
    reached = {n for n, source in enumerate(sources)
               if not _same_thing(source, lead_source, question)
               and any(not in_phrase(subject, asked)
                       or _another_of_its_name(subject, source, question)
                       for subject in named_subjects(said, source, 3))}
    best: tuple[float, _Candidate] | None = None
    asked_of = _go_between(question)  # "a Tunisian historian who died ...": a historian's
    # passage, not the town where the named one died
    of_kind = {n for n in reached if asked_of
               and _described_as(asked_of.group(2), sources[n])}
    for candidate in candidates:
        if candidate.source_index not in reached:
            continue
        covered = len(rest & _told(candidate.text)) / len(rest)
        # what is asked may stand in other words: a year of birth as "(3 June 1865 - ...)"
        if not covered and not go_between and candidate.bonus < ANSWER_TYPE_BONUS:
            continue
        score = 0.65 * candidate.semantic + 0.35 * covered + candidate.bonus \
            + (KIND_BONUS if candidate.source_index in of_kind else 0.0)
        # through a go-between, the opening of the passage the lead names is the next link,
        # however little of the question it shares ("William Goldman is an American novelist")
        opens = go_between and candidate.position == 0
        if (score >= floor or opens) and (best is None or score > best[0]):
            best = (score, candidate)
    return best[1] if best else None


# the go-between a question asks its answer of, named by its kind: "historian" of "... the
# work of a Tunisian historian who died on what date?"
_GO_BETWEEN_KIND = re.compile(r"\b(?:an?|the)\s+((?:[\w'-]+\s+){0,2}?)([a-z]{3,})\s+"
                              r"(?:who|whom|whose|which|that|(?P<born>born)|(?P<done>formed|founded|"
                              r"established|created|released|published|built|opened|"
                              r"located|based|named|headquartered|designed|directed|"
                              r"written|produced|composed|recorded|launched))\b[^?]*?"
                              r"\b(?:what|which|when|where|whom|who|how)\b[^?]*\?\s*$")


def _clause_asked(asked_of: re.Match[str]) -> set[str]:
    """What the question says of its go-between, as terms, its names and numbers aside
    (given, not asked): "shown", "channel" of "a British sitcom that was shown on which
    channel from 1982 to 1984?"; the go-between's passage's sentence that has most of them
    says it ("Ambler used the pseudonym Eliot Reed" for "a writer who used what
    pseudonym?")."""
    return {t for t in _told(_NAME.sub(" ", asked_of.group(0))) if not t.isdigit()} \
        - set(terms(asked_of.group(2)))


def _go_between(question: str) -> re.Match[str] | None:
    """The go-between a question's last clause asks about, its noun (group 2: "historian",
    "president", "musician") a word of the language, and the words before that noun (group
    1: "Tunisian"); else None."""
    found = _GO_BETWEEN_KIND.search(question)
    if found is None:
        return None
    # or a participle of making or placing after it, of "a" or "an" one: "an actress born on
    # what date?", "a band formed in what city?"; not "the youngest mayor elected in which
    # city?", the subject's own
    noun = found.group(2)
    if (found.group("done") or found.group("born")) and (
            not found.group(0).startswith("a") or noun in _NO_KIND):
        return None
    return found if noun not in STOPWORDS and lexicon().is_noun(noun) else None


# words before a participle that say when, not what: "a novel first published in"
_NO_KIND = frozenset({"first", "last", "later", "once", "originally", "also", "since",
                      "still", "recently", "newly", "then", "only"})


def _stating(question: str, wanted: str, chain: list[_Candidate],
             candidates: list[_Candidate], sources: list[Source]) -> _Candidate | None:
    """A sentence of the chain's passages that states the answer in the question's terms,
    when the first does not: "directed by Brian Fee" for "Who directed the 2017 film ...?";
    for "when" or "how many", the sentence of the first one's own passage holding a year or
    number next to the question's words ("David Kohan (born 1964) is ..." before "Kohan
    co-created Will & Grace") or None."""
    verb = _asked_verb(question)
    if verb is not None:
        linked = {c.source_index for c in chain}
        asked = frozenset(terms(question))
        if _made_by(verb, chain[0].focus, asked):
            return None
        found = [c for c in candidates if c.source_index in linked
                 and _made_by(verb, c.focus, asked)]
        return max(found, key=lambda c: (c in chain, c.score)) if found else None
    # the value stands by the word the question ends on: "(born 1964)" for "... born?",
    # never a birth year for "In what year did he retire?"; or by the verb before "in which
    # city?": "(born 26 April 1977 in Milan)" for "... was born in which city?"
    where = _EVENT_IN.search(question) or _IN_WHICH_FIRST.search(question)
    event = where or re.search(r"([A-Za-z]+)\W*$", question)
    if (wanted not in ("time", "number") and where is None) or event is None \
            or event.group(1).casefold() in STOPWORDS:
        return None
    ending = set(terms(event.group(1)))

    nouns = _with_event_nouns(ending) - ending

    # of a place, the event's word is followed by where it took place: "formed in
    # Minneapolis", not "Motion City Soundtrack, formed in 1997"
    placed = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(ending | nouns))
                        + r")\w*\b[^.;]{0,40}?\b(?:in|at)\s+(?:the\s+)?[" + CAPITAL + "]", re.I)

    def tells(text: str) -> bool:  # the event, as its verb or its noun ("his death in")
        said = set(terms(text))
        return (ending <= said or bool(said & nouns)) \
            and (where is None or wanted != "name" or placed.search(text) is not None)

    if holds_answer_type(chain[0].focus, wanted, question) and tells(chain[0].focus):
        return None
    # within the first link's own passage: another's place or year is another thing's;
    # else, of a place, within the passage about what the first link names ("formed in
    # Minneapolis" of the band the album's sentence names)
    named = phrase(chain[0].text)
    links = chain[:1] + [c for c in chain[1:2] if where is not None and any(
        in_phrase(subject, named) for subject in subjects_of(sources[c.source_index]))]
    for link in links:
        found = [c for c in candidates if c.source_index == link.source_index
                 and holds_answer_type(c.focus, wanted, question) == 1.0 and tells(c.focus)]
        if found:
            return max(found, key=lambda c: c.score)
    return None


# the nouns of the events a question asks the place or time of, by the verb's term: "his
# death in San Francisco" for "died in which city?"
_EVENT_NOUNS = {term: set(terms(nouns)) for term, nouns in (
    ("died", "death"), ("die", "death"), ("born", "birth"), ("marry", "marriage"),
    ("bury", "burial"), ("retir", "retirement"), ("elect", "election"),
    ("crown", "coronation"), ("baptiz", "baptism"), ("execut", "execution"),
    ("murder", "murder"), ("kill", "killing"), ("found", "foundation founding"))}


def _with_event_nouns(said: set[str]) -> set[str]:
    """The terms, with the nouns of the events they tell by their verbs ("born": "birth")."""
    return said | {noun for term in said for noun in _EVENT_NOUNS.get(term, ())}


def _told(text: str) -> set[str]:
    """The text's terms, with the nouns of the events it tells by their verbs ("born":
    "birth", for "whose birth name is what?")."""
    return _with_event_nouns(set(terms(text)))


# "... was born in which city?", "... founded in what year?": the event the value is of
_EVENT_IN = re.compile(r"\b([A-Za-z]+)\s+(?:in|on|at)\s+(?:which|what)\s+[a-z]+\W*$")
# the same asked first: "In which city was the director of Serafino born?"
_IN_WHICH_FIRST = re.compile(r"^\W*(?i:in|on|at)\s+(?i:which|what)\s+[a-z]+\s.*?\b([a-z]+)\W*$")


_ASKED_VERB = re.compile(r"^\W*who\s+(?:first\s+)?([a-z]+)\b", re.I)
_BY = re.compile(r"\b([A-Za-z]+)(?:,?\s+and\s+[a-z]+)?\s+by\s+(?:the\s+)?[A-Z]")


def _asked_verb(question: str) -> str | None:
    """The base of the verb a "who" question asks the maker by ("direct" of "Who directed
    ...?", "write" of "Who wrote ...?"); None for "Who is ...?" and other questions."""
    asked = _ASKED_VERB.match(question)
    if asked is None or asked.group(1).casefold() in STOPWORDS:
        return None
    word = asked.group(1).casefold()
    base = lexicon().participle_base(word)
    return base if base and base != word else None


def _made_by(verb: str, sentence: str, asked: frozenset[str] = frozenset()) -> bool:
    """Whether the sentence names who did `verb` to something: "directed by B", "written
    and directed by B", "Directed by B, the film ...". A thing named right before that the
    question does not ask about is another one's maker: "The screenplay was written by B"
    for "Who wrote the score ...?", "a film written and directed by B" for "Who wrote the
    lyrics ...?"."""
    for made in _BY.finditer(sentence):
        words = re.findall(r"[A-Za-z]+", made.group(0)[:made.group(0).rfind(" by ")])
        if not any(lexicon().participle_base(w.casefold()) == verb for w in words if w != "and"):
            continue
        thing = re.search(r"\b([a-z]+)\s+(?:(?:is|was|are|were|has been|had been|have been)\s+)?$",
                          sentence[:made.start()])
        if thing and lexicon().is_noun(thing.group(1)) and thing.group(1) not in STOPWORDS \
                and not set(terms(thing.group(1))) & asked:
            continue
        return True
    return False


_DEFINING = re.compile(r"^\W*(?:what|who)\s+(?:is|was|are|were)\s+(?:an?\s+|the\s+)?", re.I)


def _defined(question: str, names: list[str]) -> str | None:
    """The name a question asks to define ("What is Opry Mills in Nashville?", "Who was
    Ebba Strand?"), or None."""
    asks = _DEFINING.match(question)
    if not asks:
        return None
    rest = question[asks.end():].casefold()
    return next((n for n in names if rest.startswith(n.casefold())), None)


_ASKED_KIND = (re.compile(r"^\W*(?:which|what)\s+((?:[\w'-]+\s+){1,4})", re.I),
               re.compile(r"\b(?:name|title) (?:of|for) (?:the|a|an) ((?:[\w'-]+\s+){1,3})",
                          re.I),
               # "was turned into a movie of what name?"
               re.compile(r"\b(?:a|an|the)\s+((?:[\w'-]+\s+){1,2})(?=(?:of|by|with|under)\s+"
                          r"(?:what|which)\s+(?:name|title)\b)", re.I))


_ATTRIBUTE = (re.compile(r"^\W*(?:what|which)\s+(?:is|was|are|were)\s+the\s+((?:[\w-]+\s+){1,3}?)"
                        r"(?:of|for|in|at|that|which|who|whose|did|does|do)\b", re.I),
              re.compile(r"^\W*(?:in|for|as|of|at)?\s*(?:which|what)\s+([\w-]+)\s+(?:did|does|do|"
                         r"was|is|were)\b", re.I))
_VALUE_WORDS = frozenset({"year", "date", "day", "month", "century", "decade", "time", "number",
                          "age", "name", "type", "kind", "sort"})


def asked_attribute(question: str) -> str:
    """The words naming what a question asks of its subject: "county seat" in "What is the
    county seat of ...?", "role" in "In which role did A play ...?"; "" when it names none,
    or only a year, a number or a name (found by their form, `answer_type`)."""
    for pattern in _ATTRIBUTE:
        asked = pattern.search(question)
        if asked:
            words = [w for w in asked.group(1).split() if w.casefold() not in STOPWORDS]
            if not words or {w.casefold() for w in words} & _VALUE_WORDS \
                    or not lexicon().is_noun(words[-1]):
                return ""
            return " ".join(words)
    return ""


def asked_kind(question: str) -> str | None:
    """The noun for the kind of thing a which / what question asks for: "director" in
    "Which American film director hosted ...?", "adventure" in "What is the name for the
    adventure in ...?", "adaptation" in "the name of the 1996 loose adaptation"; None when it
    names none."""
    if _BIRTH_NAME_ASKED.search(question):  # "the birth name of the actress who ...": the
        return None  # actress's name at birth, not the actress
    for pattern in _ASKED_KIND:
        asked = pattern.search(question)
        words: list[str] = []
        for word in asked.group(1).split() if asked else ():
            if word.casefold() in STOPWORDS:
                break
            if lexicon().is_noun(word):
                words.append(word)
            elif words:
                break  # "which film director hosted": the nouns' run has ended
            # else a year or a describing word before the noun: "the 1996 loose adaptation"
        if words:
            return words[-1]
    return None


def _is_kind(kind: str | None, source: Source) -> bool:
    """Whether a passage's opening says its subject is the `kind` of thing a which / what
    question asks for (`asked_kind`): "Which American film director hosted ...?" and "John
    Waters is an American film director"; not "What government position ...?" and an
    actress."""
    if kind is None:
        return False
    opening = (sentences(source.content or source.snippet) or [""])[0]
    # the noun or one of its sense: "film" for "movie"; a word of the language, or the last
    # of a name ("The Baz Prize is ..."), not another of a name's ("Motion City Soundtrack")
    words = set(re.findall(r"(?<![\w'-])[a-z][a-z'-]*", opening)) | {
        name.split()[-1].casefold() for name in re.findall(
            rf"[{CAPITAL}][\w'-]*(?:\s+[{CAPITAL}][\w'-]*)*", opening)}
    return bool(set(terms(kind)) & set(terms(" ".join(words)))) or any(
        lexicon().synonyms(kind, word) for word in words
        if len(word) >= 4 and word not in STOPWORDS)


def _described_as(kind: str, source: Source) -> bool:
    """Whether the passage's opening says its subject is a `kind` or a kind of it ("was the
    lead guitarist" of "musician", "was an American historian" of "historian"), not only
    that it has one ("a band formed by guitarist B")."""
    return any(word.casefold() == kind or lexicon().is_kind_of(word.casefold(), kind)
               for word in _described_words(source).split())


def _described_words(source: Source) -> str:
    """What the passage's opening says its subject is, the first thing only: "a rock band",
    not "a rock band and record label"; "" when it says no "is a"."""
    described = IS_A.search((sentences(source.content or source.snippet) or [""])[0])
    return described.group(1).split(" and ")[0] if described else ""


def _reaches(kind: str, source: Source) -> bool:
    """Whether the passage may be about the go-between asked of, a `kind` of thing: its
    opening says its subject is one (`_described_as`, `_is_kind`), or something `kind` is a
    kind of ("an English actor" of "an actress"), or, of things other than people, a thing of
    the same sort ("a synth-pop duo" of "a band", "a sitcom" of "a series")."""
    if _described_as(kind, source) or _is_kind(kind, source):
        return True
    # the noun before what is said of it: "an English rock group formed in", "a 1972
    # single by"
    words = re.split(r"\s(?:by|[a-z]+ed)\b", _described_words(source))[0].split()
    head = words[-1].casefold() if words else ""
    return bool(head) and lexicon().is_noun(head) and (
        lexicon().is_kind_of(kind, head)
        or (not lexicon().is_person(kind) and lexicon().same_category(kind, head)))


def _about_a_name(source: Source, names: Sequence[str]) -> bool:
    """Whether the passage is about one of the question's names, or its subject is part of
    one ("White EP" of "Vib Gyor's White EP")."""
    return any(is_about(phrase(n), source)
               or any(in_phrase(subject, phrase(n)) for subject in subjects_of(source))
               for n in names)


def _names_its_kind(sentence: str, question: str) -> bool:
    """Whether the sentence gives a name of the kind the question asks for ("Pine County"
    for "... in which county?")."""
    asked = re.search(r"\b(?:which|what)\s+([a-z]{3,})\b", question, re.I)
    kind = asked.group(1) if asked else ""
    return bool(kind) and lexicon().is_noun(kind) and re.search(
        rf"\b[{CAPITAL}][\w'-]*\s+(?:[{CAPITAL}][\w'-]*\s+)*(?i:{re.escape(kind)})\b",
        sentence) is not None


def _same_thing(source: Source, other: Source, question: str = "") -> bool:
    """Two passages of one document, or about one subject: no hop between them; unless the
    question names that subject as a kind of thing the first one is not (the film Ed Wood
    and the filmmaker Ed Wood)."""
    return (source.id == other.id or (bool(source.document_id)
            and source.document_id == other.document_id)
            or any(not _another_of_its_name(subject, source, question)
                   for subject in subjects_of(source) & subjects_of(other)))


def _another_of_its_name(subject: str, source: Source, question: str) -> bool:
    """Whether the question names a passage's `subject` (as a phrase) right after a noun
    for a kind of thing that the passage's title and first sentence do not say it is, while
    they say it is the go-between the question asks of: "the 1994 film Ed Wood is about a
    cult filmmaker who ..." of the passage about the filmmaker Ed Wood (not "the co-creator
    of Good Morning", nor a novel of a film's name for "the movie ... directed by a man")."""
    between = _go_between(question)
    if between is None or not _described_as(between.group(2), source):
        return False
    name = r"\W+".join(map(re.escape, subject.split()))
    kind = re.search(rf"\b([a-z]+)\s+(?i:{name})\b", question) if question and name else None
    if kind is None or kind.group(1) in STOPWORDS or not lexicon().is_noun(kind.group(1)):
        return False
    first = (sentences(source.content or source.snippet) or [""])[0]
    return not set(terms(kind.group(1))) <= set(terms(f"{source.title} {first}"))


def _earning(chain: list[_Candidate], chosen: list[_Candidate], sources: list[Source],
             names: list[str]) -> list[_Candidate]:
    """The other sentences that earn their place: from a passage (or its document) of the
    chain, from one passage about something the chain's passages name, from the
    passage that brings in a name of the question the chain does not mention (the other side
    of a comparison), or from the passage about a name of the question (the actress whose
    film the question asks for). A passage that only shares words with the question is left
    out."""
    documents = {sources[c.source_index].document_id for c in chain} - {None, ""}
    passages = {n for n, source in enumerate(sources)
                if n in {c.source_index for c in chain} or source.document_id in documents}
    links = 0
    named_by_passage = {name for name in names for n in passages
                        if is_about(phrase(name), sources[n])}

    def raw(n: int) -> str:
        return f"{sources[n].title} {sources[n].content or sources[n].snippet}"

    def text(n: int) -> str:
        return phrase(raw(n))

    kept = []
    for candidate in sorted(chosen, key=lambda c: -c.score):
        if candidate in chain:
            continue
        n = candidate.source_index
        if n not in passages and not names:  # nothing named: as good a match earns it
            if candidate.score < EARNING_SHARE * chain[-1].score:
                continue
        elif n not in passages:
            said = " ".join(text(m) for m in passages)
            brings = [name for name in names if phrase(name) in text(n)
                      and phrase(name) not in said]
            linked = links < 1 and bool(named_subjects(" ".join(raw(m) for m in passages),
                                                       sources[n], 3))
            about = [name for name in names if is_about(phrase(name), sources[n])
                     and name not in named_by_passage]
            if not brings and not linked and not about:
                continue
            for name in about:
                named_by_passage.add(name)
            links += not brings
            passages.add(n)
        kept.append(candidate)
    return kept


def _decided(verdict: Verdict, sources: list[Source]) -> Draft:
    """"No: <the sentence about one> [1] <the sentence about the other> [2]"; a sentence
    that refers back ("The population was 4,160") with those before it that name what it
    is about."""
    units = [_Candidate(n, 0, _standing(text, sources[n]), text) for n, text in verdict.reasons]
    return Draft(summary=f"{verdict.answer}: " + " ".join(_cite(u) for u in units),
                 citations=[Citation(claim=u.text, source_id=sources[u.source_index].id,
                                     quote=u.text) for u in units])


def _standing(sentence: str, source: Source) -> str:
    """`sentence` as its passage's units quote it: joined with the sentences before it back
    to the one naming its subject when it refers back."""
    return next((unit for _, unit, focus in _units(sentences(source.content or source.snippet))
                 if focus == sentence), sentence)


def _candidates(sources: list[Source]) -> list[_Candidate]:
    found: list[_Candidate] = []
    seen: set[str] = set()
    for index, source in enumerate(sources):
        if is_hatnote(source.content or source.snippet):
            continue  # "For the author, see ...": it says nothing of anything
        for position, unit, focus in _units(sentences(source.content or source.snippet)):
            key = " ".join(terms(unit))
            if _usable(focus) and len(unit) <= 900 and key not in seen:
                seen.add(key)
                found.append(_Candidate(index, position, unit, focus))
    return found


def _units(passage: list[str]) -> list[tuple[int, str, str]]:
    """(position, quoted text, the sentence itself): each sentence that can stand alone, and
    each referring sentence joined with those before it back to the one that names its
    subject (at most two back, every sentence between referring too); a referring sentence
    with no such sentence in reach is left out, except one about the person the passage
    opens with ("In 1980 he was awarded ..." late in a life), which stands alone."""
    units = []
    head = -1
    for position, sentence in enumerate(passage):
        if not refers_back(sentence, position):
            head = position
            units.append((position, sentence, sentence))
        elif head >= 0 and position - head <= MAX_ANTECEDENT_DISTANCE:
            units.append((head, " ".join(passage[head:position + 1]), sentence))
        elif head == 0 and _PERSONAL.match(sentence) \
                and not any(_ANOTHER_PERSON.search(s) for s in passage[1:position]):
            units.append((position, sentence, sentence))
    return units


def refers_back(sentence: str, position: int) -> bool:
    """Whether the sentence's subject is a pronoun or "the <thing>" named earlier."""
    return (bool(_REFERRING.match(sentence) or _REFERRING_AFTER.match(sentence))
            or (position > 0 and bool(_DEFINITE_COMMON.match(sentence))))


def answer_type(question: str) -> str:
    """What kind of thing would answer the question: "time", "number", "name" or ""."""
    asked = question.casefold()
    if re.search(r"\b(when|what year|which year|what date|what day|what century)\b", asked):
        return "time"
    if re.search(r"\bhow (many|much|old|long|tall|high|far|big|large|deep|wide|heavy)\b|"
                 r"(?<!-)\b(population|capacity|number of|percentage|height|length)\b", asked):
        # "full-length" asks no length
        return "number"
    if re.search(r"^\W*(who|whom|whose|where|which|what)\b|\b(who|whom|whose|where|which)\b|"
                 r"\bwhat\s+(?:name|title)\b", asked):
        return "name"
    return ""


def holds_answer_type(text: str, wanted: str, question: str) -> float:
    """How strongly `text` holds something of the wanted kind that the question does not:
    1 when it stands next to one of the question's own words ("born in Budapest" for
    "where was ... born"), 0.5 anywhere else in the sentence, 0 when absent."""
    asked = question.casefold()
    if wanted == "name" and _BIRTH_NAME_ASKED.search(question):
        # a name someone was born under stands after "born": "(born Lucille Wood Smith; ..."
        return 1.0 if _BORN_NAMED.search(text) else 0.0
    if wanted == "time":
        found = [m for m in _YEAR_OR_DATE.finditer(text) if m.group(0) not in question]
    elif wanted == "number":
        found = [m for m in re.finditer(r"\d[\d,.]*", text) if m.group(0) not in question]
    else:
        found = [m for m in _NAME.finditer(text) if m.group(0).casefold() not in asked
                 and ((m.start() > 0 and text[m.start() - 2:m.start() - 1] not in ".!?")
                      or m.group(0).split()[0].casefold() not in STOPWORDS)]
    if not found:
        return 0.0
    # its words, not its names, and the nouns of its events ("death" for "died")
    anchors = _with_event_nouns(set(terms(_NAME.sub(" ", question))) - STOPWORDS)
    for match in found:
        window = text[max(0, match.start() - 60):match.end() + 60]
        if anchors & set(terms(window)):
            return 1.0
    return 0.5


# "What was the birth name of ...?", "born under what name?", "the real name of ...?"
# (a "real name" only of a go-between person: "of the country music star who released ...",
# not the secret identity of a character)
_BIRTH_NAME_ASKED = re.compile(r"\b(?:birth\s+name|name\s+at\s+birth|born\s+(?:under|with|as)"
                               r"\s+(?:what|which)\b|real\s+name\s+of\s+(?:the|an?)\s+"
                               r"(?:[\w'-]+\s+){1,5}?(?:who|that|whose)\b)", re.I)
# ... after "born", or opening a passage that says its subject is better known otherwise
# ("Randy Bruce Traywick (born May 4, 1959), better known by his stage name, Randy Travis")
_BORN_NAMED = re.compile(r"\b(?:born|n[ée]e?)\s+(?!(?:in|on|at|to|into|of)\b)"
                         r"[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)+|\b(?:better|professionally|"
                         r"popularly)\s+known\s+(?:by\s+(?:his|her|their)\s+stage\s+name|as)\b")


def _usable(sentence: str) -> bool:
    if not 25 <= len(sentence) <= 600 or ">>>" in sentence:
        return False  # interactive-session code flattened into prose reads as noise
    letters = sum(c.isalpha() for c in sentence)
    return letters / len(sentence) > 0.55 and len(sentence.split()) >= 5


def _cover_entities(
    picked: list[int], candidates: list[_Candidate], keep: list[int], intent: QueryIntent,
    sources: list[Source],
) -> list[int]:
    """Each thing the question names is represented by its best sentence: for a comparison,
    one that names each side or is from a passage about it; for a question naming two things
    or more ("Which tournament have A and B both been finalists in?"), one from a passage
    about each, where there is such a passage."""
    names = [e for e in intent.entities if plain_words(e)]
    if intent.question_type == QuestionType.COMPARISON:
        def holds(n: int, name: str) -> bool:
            return (name.casefold() in candidates[n].text.casefold()
                    or is_about(phrase(name), sources[candidates[n].source_index]))
    elif len(names) >= 2:
        def holds(n: int, name: str) -> bool:
            return is_about(phrase(name), sources[candidates[n].source_index])
    else:
        return picked
    result = list(picked)
    for name in names:
        if any(holds(n, name) for n in result):
            continue
        matches = [n for n in keep if holds(n, name)]
        if matches:
            result.append(max(matches, key=lambda n: candidates[n].score))
    return result


def _inside_another(n: int, picked: list[int], candidates: list[_Candidate]) -> bool:
    """A sentence already quoted inside a longer unit (with its referring sentence): the
    unit takes its place, and its score."""
    text = candidates[n].text
    for m in picked:
        if m != n and text in candidates[m].text and len(candidates[m].text) > len(text):
            candidates[m].floor = max(candidates[m].floor, candidates[n].score)
            return True
    return False


def _redundant(n: int, picked: list[int], vectors: np.ndarray) -> bool:
    """A sentence almost identical to a better-placed one adds nothing."""
    earlier = picked[: picked.index(n)]
    return any(float(vectors[n] @ vectors[m]) > 0.95 for m in earlier)


def _cite(candidate: _Candidate) -> str:
    text = re.sub(r"\s+", " ", candidate.text).strip()
    marker = f"[{candidate.source_index + 1}]"
    if text[-1:] in ".!?":
        return f"{text[:-1]} {marker}{text[-1]}"
    return f"{text} {marker}"
