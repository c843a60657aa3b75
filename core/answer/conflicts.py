"""Passages that disagree: two sources giving different values for the same thing.

A pure function from passages to their disagreements. "The same thing" is established, not
guessed: one subject (a name, or the passage's own subject when a sentence says "it", "he",
"the film"), one attribute said by a cue word (born, founded, released, population, tall,
directed by ...), and a value of that attribute's kind right by the cue. A person's birth
year and a film's release year are two things; so are the populations of two censuses and
a release in Japan and one in Europe. Equal values written differently agree (core.answer.
values): "3 June 1990" and "June 3, 1990", "5 km" and "5,000 m", "about 3,700" and "3,677".
A sentence whose subject cannot be told ("The band's debut album was released in 1990")
gives no claim: a missed disagreement costs less than a false one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.answer.values import Amount, When, amounts_in, dates_in, same_name, year_text
from core.text import NAME, STOPWORDS, fold, plain_words, sentences, title_subject

Value = When | Amount | str


@dataclass(frozen=True)
class Passage:
    key: str  # what the caller knows it by (a source id)
    title: str
    text: str


@dataclass(frozen=True)
class Attribute:
    name: str  # what is disputed: "founded", "population"
    kind: str  # "date", "name", or the measure of an amount ("count", "length", "area")
    cue: re.Pattern[str]
    before: bool = False  # the value stands before the cue ("324 metres tall")
    regional: bool = False  # said per country or per census: qualified values are apart


def _cue(words: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{words})\b", re.I)


# One entry per way of saying an attribute; entries of one name are one attribute.
ATTRIBUTES = (
    Attribute("born", "date", _cue("born")),
    Attribute("died", "date", _cue("died")),
    Attribute("founded", "date", _cue("founded|established|incorporated")),
    Attribute("released", "date", _cue("released"), regional=True),
    Attribute("premiered", "date", _cue("premiered"), regional=True),
    Attribute("published", "date", _cue("published|first published"), regional=True),
    Attribute("opened", "date", _cue("opened"), regional=True),
    Attribute("completed", "date", _cue("completed")),
    Attribute("built", "date", _cue("built|constructed")),
    Attribute("discovered", "date", _cue("discovered")),
    Attribute("happened", "date", _cue("took place|was fought")),
    Attribute("population", "count", _cue("population"), regional=True),
    Attribute("population", "count", _cue("inhabitants|residents"), before=True,
              regional=True),
    Attribute("employees", "count", _cue("employees"), before=True, regional=True),
    Attribute("capacity", "count", _cue("capacity|seating capacity"), regional=True),
    Attribute("height", "length", _cue("height"), regional=True),
    Attribute("height", "length", _cue("tall"), before=True, regional=True),
    Attribute("length", "length", _cue("length"), regional=True),
    Attribute("length", "length", _cue("long"), before=True, regional=True),
    Attribute("elevation", "length", _cue("elevation|altitude"), regional=True),
    Attribute("elevation", "length", _cue("above sea level"), before=True, regional=True),
    Attribute("area", "area", _cue("area"), regional=True),
    Attribute("directed", "name", _cue("directed by")),
    Attribute("founder", "name", _cue("founded by")),
    Attribute("designed", "name", _cue("designed by")),
    Attribute("composed", "name", _cue("composed by")),
    Attribute("capital", "name", _cue("capital(?: city)?")),
)
_DATE_VERB = {"born": "born", "died": "died", "founded": "founded", "released": "released",
              "premiered": "premiered", "published": "published", "opened": "opened",
              "completed": "completed", "built": "built", "discovered": "discovered",
              "happened": "took place"}
_NAME_QUESTION = {"directed": "who directed {s}", "founder": "who founded {s}",
                  "designed": "who designed {s}", "composed": "who composed {s}",
                  "capital": "the capital of {s}"}
_AMOUNT_NOUN = {"employees": "the number of employees of {s}"}


@dataclass(frozen=True)
class Claim:
    """One passage's value for one attribute of one subject."""

    subject: str
    attribute: Attribute
    value: Value
    written: str
    key: str
    condition: str = ""  # a census year or a country the value is said for
    sense: str = ""  # which of its namesakes the subject is: "film" in "Astro Boy (film)"


@dataclass(frozen=True)
class Disagreement:
    subject: str
    attribute: str
    disputed: str  # "the year Harwick College was founded"
    values: tuple[tuple[str, tuple[str, ...]], ...]  # each value as written, the passages


def disagreements(passages: Sequence[Passage], question: str = "") -> list[Disagreement]:
    """The things the passages give different values for, each with the values and the
    passages (by key) giving each; those about what the question names first."""
    claims = [c for p in passages for c in claims_in(p)]
    found = []
    for group in _same_things(claims):
        disagreement = _disagreement(group)
        if disagreement is not None:
            found.append(disagreement)
    asked = set(plain_words(question))
    return sorted(found, key=lambda d: not set(plain_words(d.subject)) & asked)


def claims_in(passage: Passage) -> list[Claim]:
    """What one passage says of which subject, sentence by sentence."""
    own = title_subject(passage.title) or _opening_name(passage.text)
    claims = []
    for sentence in sentences(passage.text):
        claims += _life_dates(sentence, own, passage.key)
        plain = _APPOSITIVE.sub(" ", _PARENTHESES.sub("", sentence))
        for attribute in ATTRIBUTES:
            for cue in attribute.cue.finditer(plain):
                claim = _claim(plain, cue, attribute, own, passage.key)
                if claim is not None:
                    claims.append(claim)
    sense = _SENSE.search(passage.title)
    if sense is None:
        return claims
    itself = {own, _opening_name(passage.text)}  # "Dave Bailey (athlete)": "David Bailey"
    return [replace(c, sense=sense.group(1).casefold()) if c.subject in itself else c
            for c in claims]


_SENSE = re.compile(r"\(([^()]+)\)\s*$")
_PARENTHESES = re.compile(r"\s*\([^()]*\)")
# ", a liberal arts school in Vermont," between a subject and its verb
_APPOSITIVE = re.compile(r",[^,]{1,80},\s+(?=(?:was|were|is|are|has|had|became)\b)")
_CLAUSE_END = re.compile(r"[;:]|\.(?:\s|$)|,\s*(?:and|but|while|whereas|which|who|although|"
                         r"though)\b|\s(?:and|but)\s+(?=[a-z])|\s(?:while|whereas)\s")
_WINDOW = 90  # characters between a cue and its value, at most


def _claim(sentence: str, cue: re.Match[str], attribute: Attribute, own: str,
           key: str) -> Claim | None:
    start = _clause_start(sentence, cue.start())
    prefix, after = sentence[start:cue.start()], sentence[cue.end():]
    if attribute.kind == "date" and _active(prefix, after):
        return None  # "He later founded J Records in 2000": what was founded is J Records
    value = None
    if attribute.before:  # "The tower is 324 metres tall": the subject stands before both
        value = _value(prefix[-_WINDOW // 2:], attribute)
        prefix = prefix[:prefix.rfind(value[1])] if value else prefix
    subject, after = _clause_subject(prefix, after, own)
    if not attribute.before:
        # a sentence opening on its cue says it before its first comma: "Born in Kyoto, he
        # joined the company in 1965"
        window = after.split(",")[0] if not prefix.strip() else after[:_end(after)]
        value = _value(window[:_WINDOW], attribute)
    if not subject or value is None:
        return None
    condition = _condition(prefix, after[:_end(after)], value[1], attribute) \
        if attribute.regional else ""
    return Claim(subject, attribute, value[0], value[1], key, condition)


def _clause_subject(prefix: str, after: str, own: str) -> tuple[str | None, str]:
    """Whom a cue is said of, and the words after the cue that are not its subject: "The
    population of Lakeview was ..." names it after the cue, "Founded in 1713, Harwick College
    is ..." after the comma."""
    named = re.match(rf"\s+of\s+(?:the\s+)?({_FULL_NAME})", after)
    if named is not None:
        return _as_own(_bare(named.group(1)), own), after[named.end():]
    subject = _subject(prefix, own)
    if subject is None and not prefix.strip():
        subject = _subject_after(after, own)
    return subject, after


_AUXILIARY = re.compile(r"\b(?:was|were|is|are|been|be|being|and|or)\s+(?:\w+ly\s+|later\s+|"
                        r"first\s+|then\s+|also\s+|not\s+|once\s+)*$", re.I)


def _active(prefix: str, after: str) -> bool:
    """Whether a subject does the cue's verb to something named after it ("Hellogoodbye
    released their third album ... on October 29"): active, with no preposition bringing the
    date straight after the verb ("It opened in 1874" is about it)."""
    if not prefix.strip() or _AUXILIARY.search(prefix):
        return False
    ends = re.search(r"(?:\b(?:he|she|it|they|we|who)|[A-Z][\w'.-]*)\s+(?:\w+ly\s+|later\s+|"
                     r"first\s+|then\s+|also\s+|once\s+)*$", prefix)
    return ends is not None and not re.match(r"\s+(?:in|on|at|during|around|c\.)\s", after)


def _clause_start(sentence: str, at: int) -> int:
    """Where the clause holding position `at` begins (after a semicolon or "; and")."""
    starts = [m.end() for m in re.finditer(r";\s*|,\s*(?:and|but|while|whereas)\s+",
                                           sentence[:at])]
    return starts[-1] if starts else 0


def _end(text: str) -> int:
    stop = _CLAUSE_END.search(text)
    return stop.start() if stop else len(text)


def _value(clause: str, attribute: Attribute) -> tuple[Value, str] | None:
    """The attribute's value in `clause`: the first after its cue, the last before it."""
    if attribute.kind == "date":
        dates = [(w, m) for w, m in dates_in(clause) if not _in_range(clause, m)]
        if not dates:
            return None
        when, match = dates[-1] if attribute.before else dates[0]
        return when, match.group()
    if attribute.kind == "name":
        name = re.match(rf"\s*(?:(?:is|was)\s+)?(?:the\s+)?({_FULL_NAME})", clause)
        if name is None or not set(plain_words(name.group(1))) - STOPWORDS:
            return None
        return name.group(1), name.group(1)
    amounts = amounts_in(clause, attribute.kind)
    if not amounts:
        return None
    amount, match = amounts[-1] if attribute.before else amounts[0]
    if attribute.before and clause[match.end():].strip(" ,") and \
            len(clause[match.end():].split()) > 3:
        return None  # "324 metres tall": the number sits right before its cue
    unit = re.match(r"\s*(?:square\s+\w+|sq\s+\w+|[A-Za-z²2]+)", clause[match.end():])
    written = match.group() + (unit.group() if unit and attribute.kind != "count" else "")
    return amount, written.strip()


def _in_range(clause: str, match: re.Match[str]) -> bool:
    """A date that starts or ends a span ("from 1887 to 1889", "1887–1889") dates no one
    event."""
    before, after = clause[:match.start()], clause[match.end():]
    return bool(re.match(r"\s*(?:–|-|—|to|and|until|through)\s*\d", after)
                or re.search(r"(?:\b(?:between|from|until|till|through|to)|–|-|—)\s*$", before))


_LEAD_IN = re.compile(r"^\s*(?:(?:In|On|By|As of|After|Before|During|Since|At|Following|"
                      r"According to)\b[^,]{0,60},\s*|[A-Z][a-z]+(?:ed|ing)\b[^,]{0,80},\s*|"
                      r"(?:However|Originally|Today|Officially|Later|Eventually),\s*)")
_FILLER = (r"(?:\s+(?:was|were|is|are|has|had|have|been|be|being|first|originally|officially|"
           r"later|also|then|formally|reportedly|estimated|total|current|a|an|the|its|"
           r"whose|once|now|stands|rises|measures|reaches|runs|about|approximately|around|"
           r"nearly|roughly|some|over|almost|with|just|more|than|under))*\s*")
_ANAPHOR = re.compile(rf"(?:(?:he|she|it|they|its|his|her|their)|(?:the|this|that)\s+[a-z]+"
                      rf"(?:'s)?|the){_FILLER}", re.I)
# "Dunmore F.C.", "Brenner & Holt", "Zephyr OS 2"
_FULL_NAME = rf"{NAME.pattern}\.?(?:\s*&\s*{NAME.pattern})?(?:\s+\d{{1,2}}\b)?"
# "the town of Novy Brod" is Novy Brod
_PLACE_KIND = (r"town|city|village|hamlet|municipality|borough|county|state|province|island|"
               r"kingdom|republic|port|district|region|commune|parish")
_PREPOSITION = r"(?:of|at|in|on|for|from|by|with|to|near|behind|under|inside|outside)"
# What an encyclopedia says a thing is before a cue: "is a 1998 thriller", "is a boarding
# school in Wales,", "is a maker of warehouse robots with"
_DESCRIBED = (r"(?:\s+(?:is|was|are|were)\s+(?:a|an|the)\s+(?:[a-z0-9][\w'-]*\s+|"
              rf"(?:in|of|from|for|by)\s+(?:the\s+)?{NAME.pattern}\s+)*?[a-z0-9][\w'-]*,?)?")
# "The cellist Ilse Marendt", "Harwick College in Vermont"; not "The library at Harwick
# College", which is about the library
_NAMED = re.compile(rf"(?:[Tt]he\s+(?:(?:{_PLACE_KIND})\s+of\s+|"
                    rf"(?:(?!{_PREPOSITION}\b)[a-z][\w-]*\s+){{0,2}}))?"
                    rf"(?P<name>{_FULL_NAME})(?P<own>'s)?(?:\s+in\s+{NAME.pattern})?"
                    rf"{_DESCRIBED}(?:\s*,\s*(?:which|who))?{_FILLER}")


def _subject(prefix: str, own: str) -> str | None:
    """Whom the clause before a cue is about: a name standing alone as its subject, or the
    passage's own subject for a pronoun or "the film"; None when it is something else."""
    prefix = _LEAD_IN.sub("", prefix).strip()
    if not prefix or _ANAPHOR.fullmatch(prefix):
        return own or None
    if own and re.fullmatch(rf"(?:the\s+)?{re.escape(own)}(?:'s)?{_DESCRIBED}{_FILLER}", prefix,
                            re.I):
        return own  # as the title writes it: "Kingsmere station opened in 1847"
    named = _NAMED.fullmatch(prefix)
    if named is None:
        return None
    if named.group("own") and named.end("own") < len(prefix.rstrip()):
        return None  # "Marie Curie's daughter was born ..." is not about Marie Curie
    name = _bare(named.group("name"))
    return _as_own(name, own) if _a_name(name) else None


def _as_own(name: str, own: str) -> str:
    """The passage's own subject when `name` is a shorter way of saying it ("Tarsenia" in
    the passage on the Republic of Tarsenia); a longer name is something more particular
    ("Zephyr OS 2" in the passage on Zephyr OS)."""
    shorter = len(name_words(name)) <= len(name_words(own))
    return own if own and shorter and _same_subject(name, own) else name


def _a_name(name: str) -> bool:
    """Not a capitalised word that opens a sentence: "With", "Originally", "When"."""
    first = re.sub(r"^the\s+", "", name.casefold()).split()[0]
    return first not in STOPWORDS and first not in _OPENERS and not first.endswith("ly")


_OPENERS = frozenset({"although", "though", "despite", "today", "however", "following",
                      "upon", "unlike", "like", "according", "including", "its", "his", "her",
                      "their"})


def _subject_after(after: str, own: str) -> str | None:
    """The subject a sentence opening on its cue names after the comma."""
    _, comma, rest = after.partition(",")
    named = re.match(rf"\s*(?:the\s+)?({_FULL_NAME})", rest) if comma else None
    if named is None:
        pronoun = comma and re.match(r"\s*(?:it|he|she|the\s+[a-z]+)\b", rest, re.I)
        return own if pronoun and own else None
    name = _bare(named.group(1))
    return _as_own(name, own) if _a_name(name) else None


def _bare(name: str) -> str:
    return re.sub(r"'s$|^[Tt]he\s+", "", name.strip())


def _opening_name(text: str) -> str:
    found = NAME.match(text.strip())
    return _bare(found.group()) if found else ""


_LIFE = re.compile(r"\(([^()]*)\)")


def _life_dates(sentence: str, own: str, key: str) -> list[Claim]:
    """A person's dates as an encyclopedia gives them after the name: "(born 3 June 1990)",
    "(April 23, 1928 – February 10, 2014)". A span of bare years ("(1943–1956)") may be a
    programme's run, so only full dates count as a life."""
    claims: list[Claim] = []
    for group in _LIFE.finditer(sentence):
        subject = _subject(sentence[:group.start()], own)
        if subject is None:
            continue
        inside = group.group(1)
        dates = dates_in(inside)
        born = re.search(r"\bborn\b", inside)
        if born and dates and dates[0][1].start() > born.end():
            claims.append(Claim(subject, _LIFE_BORN, dates[0][0], dates[0][1].group(), key))
        elif len(dates) == 2 and all(w.day for w, _ in dates) \
                and re.search(r"[–—-]", inside[dates[0][1].end():dates[1][1].start()]):
            claims.append(Claim(subject, _LIFE_BORN, dates[0][0], dates[0][1].group(), key))
            claims.append(Claim(subject, _LIFE_DIED, dates[1][0], dates[1][1].group(), key))
    return claims


_LIFE_BORN = ATTRIBUTES[0]
_LIFE_DIED = ATTRIBUTES[1]
# "in Japan", "on the Pop network"; not "on June 3"
_REGION = re.compile(rf"\b(?:in|on|for|across)\s+(?:the\s+)?({NAME.pattern})\b(?!\s*\d)")


def _condition(before: str, after: str, written: str, attribute: Attribute) -> str:
    """What a value is said for, in its clause (the words `before` and `after` its cue):
    the census or survey years beside an amount ("3,677 at the 2010 census"); the country,
    the medium or the later time of a release ("in Japan", "on DVD", "later published"); ""
    when nothing qualifies it."""
    clause = f"{before} {after}"
    if attribute.kind != "date":
        return " ".join(sorted({m.group() for _, m in dates_in(clause)
                                if m.group() not in written}))
    found = {m.group(1) for m in _REGION.finditer(after) if not dates_in(m.group(1))}
    found |= {m.group(1).casefold() for m in _MEDIUM.finditer(after)}
    found |= {m.group().casefold() for m in _LATER.finditer(clause)}
    return " ".join(sorted(found))


_MEDIUM = re.compile(r"\b(?:on|as|in)\s+(?:an?\s+|the\s+)?(?:separate\s+|limited\s+)?(DVD|Blu-ray|"
                     r"VHS|video|vinyl|CD|cassette|single|download|paperback|hardcover|e-?book|"
                     r"streaming|television|radio)\b", re.I)
_LATER = re.compile(r"\b(?:later|then|again|subsequently|eventually|re-?(?:released|issued|"
                    r"published|opened))\b", re.I)


def _same_subject(a: str, b: str) -> bool:
    """Within one passage, one name for one thing: the same words, or a longer name and a
    part of it that ends it ("Einstein" of "Albert Einstein") or holds two of its words."""
    first, second = name_words(a), name_words(b)
    if not first or not second:
        return False
    short, long = sorted((first, second), key=len)
    if short == long:
        return True
    return set(short) <= set(long) and (len(short) >= 2 or long[-1] == short[0])


def name_words(name: str) -> list[str]:
    """A name's words, initials kept: "David H. Bailey" is not "David Bailey"."""
    return [w for w in re.findall(r"[^\W_]+", fold(name)) if w != "the"]


def _same_things(claims: list[Claim]) -> list[list[Claim]]:
    """Claims grouped by subject, attribute and condition. Across passages a subject is one
    thing only by its whole name: Warren Buffett is not Howard Warren Buffett, nor OK Go
    Twelve Days of OK Go; and namesakes told apart by their titles ("Esma Sultan (daughter
    of Abdülaziz)") are apart."""
    groups: list[list[Claim]] = []
    for claim in claims:
        for group in groups:
            first = group[0]
            if (first.attribute.name == claim.attribute.name
                    and first.condition == claim.condition and first.sense == claim.sense
                    and name_words(first.subject) == name_words(claim.subject)):
                group.append(claim)
                break
        else:
            groups.append([claim])
    return groups


def _disagreement(group: list[Claim]) -> Disagreement | None:
    """The values of one thing that do not agree, when two passages give them."""
    classes: list[list[Claim]] = []
    for claim in sorted(group, key=_precision):
        for members in classes:
            if _agree(members[0].value, claim.value):
                members.append(claim)
                break
        else:
            classes.append([claim])
    if len(classes) < 2 or len({c.key for c in group}) < 2:
        return None
    subject = max((c.subject for c in group), key=len)
    attribute = group[0].attribute
    ordered = sorted(classes, key=lambda members: group.index(members[0]))
    values = tuple((_written(members[0]), tuple(dict.fromkeys(c.key for c in members)))
                   for members in ordered)
    return Disagreement(subject, attribute.name, _disputed(subject, attribute, classes), values)


def _precision(claim: Claim) -> float:
    """The most precise value first, so that a bare year joins the full date it agrees
    with."""
    value = claim.value
    if isinstance(value, When):
        return -((value.month is not None) + (value.day is not None))
    if isinstance(value, Amount):
        return value.slack
    return 0.0


def _agree(a: Value, b: Value) -> bool:
    if isinstance(a, When) and isinstance(b, When):
        return a.agrees(b)
    if isinstance(a, Amount) and isinstance(b, Amount):
        return a.agrees(b)
    if isinstance(a, str) and isinstance(b, str):
        return same_name(a, b)
    return True


def _written(claim: Claim) -> str:
    return year_text(claim.value) if isinstance(claim.value, When) else claim.written


def _disputed(subject: str, attribute: Attribute, classes: list[list[Claim]]) -> str:
    """What the sources disagree on, in words: "the year Harwick College was founded"."""
    if attribute.kind == "date":
        dated = any(isinstance(m[0].value, When) and m[0].value.day for m in classes)
        return f"the {'date' if dated else 'year'} {subject} was {_DATE_VERB[attribute.name]}"
    if attribute.kind == "name":
        return _NAME_QUESTION[attribute.name].format(s=subject)
    return _AMOUNT_NOUN.get(attribute.name, f"the {attribute.name} of {{s}}").format(s=subject)
