"""How to ask again when the evidence does not answer a question (an Insufficient answer):
built from the question itself, so the person learns which of its names no document
mentions, which of its words the documents may not use, what would narrow it, and what would
let the knowledge base answer it. Code, not a model: said the same way with or without one."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.grading import listing, mentions, specifics
from core.answer.lexicon import is_word, lexicon
from core.models import QueryIntent, Source
from core.text import STOPWORDS, phrase

MAX_NAMED = 3  # names or words quoted back in the suggestion


def refine_suggestion(question: str, intent: QueryIntent, passages: Sequence[Source]) -> str:
    """One sentence: how to refine `question`, given the `passages` found for it."""
    found = [phrase(f"{s.title} {s.content or s.snippet}") for s in passages]
    asked = specifics(intent, question)
    names = [n for n in asked if not _number(n)][:MAX_NAMED]
    unfound = [n for n in names if not any(mentions(n, text) for text in found)]
    dates = [n for n in asked if _number(n) and not any(mentions(n, text) for text in found)]
    subject = unfound or names or _things_named(question)
    steps = [_naming(unfound, names, subject), _period(intent, dates), _kind(subject),
             f"add documents about {_quoted(subject)} to the knowledge base"]
    return "To refine the question: " + "; ".join(steps) + "."


def _naming(unfound: list[str], names: list[str], subject: list[str]) -> str:
    """What to change in the question's own words."""
    if unfound:
        it = "it" if len(unfound) == 1 else "them"
        return (f"no document found mentions {_quoted(unfound, 'or')}: try another name or "
                f"spelling for {it} (a full name, or what it is also called)")
    if names:
        return (f"documents mention {_quoted(names)} but none answers the question: ask one "
                "thing at a time, in the words a document about it would use")
    if subject:
        return (f"the documents may not use the words {_quoted(subject, 'or')}: try other "
                "words for them, or name the thing you mean")
    return "name the thing you mean, in the words a document about it would use"


def _period(intent: QueryIntent, dates: list[str]) -> str:
    if intent.time_constraint is None:
        return "add a time frame (a year or a period)"
    unsaid = f" (no document found mentions {_quoted(dates, 'or')})" if dates else ""
    return f"widen the period it asks about{unsaid}"


def _kind(subject: list[str]) -> str:
    what = f"{_quoted(subject[:1])} is" if subject else "you mean"
    return (f"say which field or kind of thing {what} (a person, a place, a work, a term of "
            "medicine, law or computing)")


def _things_named(question: str) -> list[str]:
    """The question's words that name things, as written: nouns and words no dictionary
    holds (a term of art), not its verbs ("won") or numbers."""
    words = re.findall(r"[^\W\d_][\w'-]*", question)
    kept = [w for w in words if w.casefold() not in STOPWORDS and len(w) > 2
            and (lexicon().is_noun(w) or not is_word(w))
            and lexicon().participle_base(w) is None]
    return list(dict.fromkeys(kept))[:MAX_NAMED]


def _number(text: str) -> bool:
    return text.replace(",", "").replace(".", "").isdigit()


def _quoted(items: Sequence[str], conjunction: str = "and") -> str:
    return listing([f'"{item}"' for item in items], conjunction) if items else "it"
