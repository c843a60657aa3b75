"""Search controls as chat front ends take them: Discord's /research options, and the
`recency:week include:nature.com exclude:example.com type:academic` words a Slack
`/research` line may start or end with. Both become one SearchControls, or a message saying
what was wrong."""

from __future__ import annotations

import re

from pydantic import ValidationError

from core.models import ContentType, Recency, SearchControls

USAGE = ("Options: recency:day|week|month|year|any, include:SITE, exclude:SITE (sites "
         "comma-separated), type:news|academic|general. For example: /research recency:week "
         "exclude:example.com What changed in Python 3.13?")
_NAMES = {"recency": "recency", "include": "include_domains", "exclude": "exclude_domains",
          "type": "content_type"}
# An option word at the start or the end of the line (not inside the question's text).
_OPTION = re.compile(r"(?i)^(recency|include|exclude|type):(\S*)$")


class ControlsError(ValueError):
    """Options a person gave that cannot be used; the message says which and why."""


def search_controls(recency: str | None = None, include: str | None = None,
                    exclude: str | None = None, content_type: str | None = None
                    ) -> SearchControls:
    """The controls of a chat request's options (domains comma- or space-separated)."""
    try:
        return SearchControls(recency=recency or None, include_domains=include or (),
                              exclude_domains=exclude or (),
                              content_type=content_type or ContentType.GENERAL)
    except ValidationError as error:
        raise ControlsError("; ".join(_problem(e) for e in error.errors())) from None


def split_options(text: str) -> tuple[str, SearchControls]:
    """The question of a `/research` line and the options around it; ControlsError for an
    option it cannot use."""
    words = text.split()
    given: dict[str, list[str]] = {}
    for name, value in _edge_options(words):
        given.setdefault(name, []).append(value)
    if not given:
        return text, SearchControls()
    if any(not value for values in given.values() for value in values):
        raise ControlsError("an option needs a value after its colon, like recency:week")
    if any(len(given.get(name, ())) > 1 for name in ("recency", "content_type")):
        raise ControlsError("recency and type are given once")
    joined = {name: ",".join(values) for name, values in given.items()}
    controls = search_controls(joined.get("recency"), joined.get("include_domains"),
                               joined.get("exclude_domains"), joined.get("content_type"))
    return " ".join(words), controls


def _edge_options(words: list[str]) -> list[tuple[str, str]]:
    """The option words leading and trailing `words`, in the order written, taken out of
    `words` (a question's own colons, inside it, stay)."""
    leading: list[tuple[str, str]] = []
    while words and (match := _OPTION.match(words[0])):
        leading.append((_NAMES[match[1].lower()], match[2]))
        words.pop(0)
    trailing: list[tuple[str, str]] = []
    while words and (match := _OPTION.match(words[-1])):
        trailing.insert(0, (_NAMES[match[1].lower()], match[2]))
        words.pop()
    return leading + trailing


def _problem(error: object) -> str:
    details = error if isinstance(error, dict) else {}
    where = str((details.get("loc") or ("",))[0])
    message = str(details.get("msg", "invalid")).removeprefix("Value error, ")
    if where == "recency":
        return f"recency must be one of {', '.join(r.value for r in Recency)}"
    if where == "content_type":
        return f"type must be one of {', '.join(c.value for c in ContentType)}"
    return f"{where.replace('_domains', '')}: {message}"
