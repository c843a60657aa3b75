"""How to ask again when the evidence does not answer a question (an Insufficient answer):
built from the question itself, so the person learns which of its names no document
mentions, which of its words the documents may not use, and what would narrow it or let the
knowledge base answer it. Code, not a model: it is said the same way with or without one."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.grading import listing, mentions, specifics
from core.models import QueryIntent, Source
from core.text import STOPWORDS, phrase

MAX_NAMED = 3  # names or words quoted back in the suggestion


def refine_suggestion(question: str, intent: QueryIntent, passages: Sequence[Source],
                      only_local: bool) -> str:
    """One sentence: how to refine `question`, given the `passages` found for it."""
    names = specifics(intent, question)[:MAX_NAMED]
    found = [phrase(f"{s.title} {s.content or s.snippet}") for s in passages]
    unfound = [name for name in names if not any(mentions(name, text) for text in found)]
    subject = unfound or names or _content_words(question)
    steps = [_naming(unfound, names, subject),
             "add a time frame (a year or a period)" if intent.time_constraint is None
             else "widen the period it asks about",
             "say which field or kind of thing you mean (a person, a place, a work, "
             "a medical or technical term)",
             f"add documents about {_quoted(subject)} to the knowledge base"
             + (" (only the knowledge base was searched)" if only_local else "")]
    return "To refine the question: " + "; ".join(steps) + "."


def _naming(unfound: list[str], names: list[str], subject: list[str]) -> str:
    """What to change in the question's own words."""
    if unfound:
        it = "it" if len(unfound) == 1 else "them"
        return (f"no document found mentions {_quoted(unfound, 'or')}: try another name or "
                f"spelling for {it} (a full name, or what it is also called)")
    if names:
        return (f"documents mention {_quoted(names, 'and')} but none answers the question: "
                "ask one thing at a time, in the words a document about it would use")
    return (f"the documents may not use the words {_quoted(subject, 'or')}: try other words "
            "for them, or name the thing you mean")


def _content_words(question: str) -> list[str]:
    """The question's own words that carry its meaning, as written."""
    words = re.findall(r"[^\W_][\w'-]*", question)
    kept = [w for w in words if w.casefold() not in STOPWORDS and len(w) > 2]
    return list(dict.fromkeys(kept))[:MAX_NAMED]


def _quoted(items: Sequence[str], conjunction: str = "and") -> str:
    return listing([f'"{item}"' for item in items], conjunction) if items else "it"
