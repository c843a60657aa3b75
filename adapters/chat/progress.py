"""A progress line from a stage event's typed detail, for every front end: the search round
of the tier's maximum with the queries each source is sent, the results being processed.
Queries quote the question, so each goes through the platform's escaping (`quote`); the
rest of a line is the event's message, escaped the same way."""

from __future__ import annotations

from collections.abc import Callable

from core.models import ProgressEvent, Stage
from core.research.tracing import queries_line


def progress_line(event: ProgressEvent, quote: Callable[[str], str],
                  round_always: bool = False) -> str:
    """`round_always`: a round's finished stages say which round too (a chat status line
    shows one event at a time; a terminal lists them under the round's first line)."""
    detail = event.detail
    of = f"Round {detail.round}/{detail.rounds_allowed}" if detail.round else ""
    if event.kind == "started" and event.stage == Stage.SEARCH and detail.queries and of:
        return f"{of}: searching {queries_line(detail.queries, quote)}"
    if event.kind == "started" and event.stage == Stage.RANK and detail.results is not None \
            and of:
        return f"{of}: processing {detail.results} results"
    if round_always and of:
        return f"{of}: {quote(event.message)}"
    return quote(event.message)
