"""The kind of failure a SourceError is, told apart in one place: the answer's outage notes
(SourceFailure.kind), the metric search_provider_errors_total and a paused source (the kind
that opened its circuit, kept by name in Redis) all read it from here."""

from __future__ import annotations

from core.errors import (
    SourceBusyError,
    SourceDroppedError,
    SourceError,
    SourceResponseTooLargeError,
    SourceTimeoutError,
    SourceUnreachableError,
)

_BY_CLASS: tuple[tuple[type[SourceError], str], ...] = (
    (SourceUnreachableError, "unreachable"), (SourceTimeoutError, "timeout"),
    # never sent: our own limits, not the source, ran out of time
    (SourceBusyError, "busy"), (SourceResponseTooLargeError, "too_large"))

# The kinds a paused source reports as their own class; any other is a plain SourceError.
_PAUSED: dict[str, type[SourceError]] = {"unreachable": SourceUnreachableError,
                                         "timeout": SourceTimeoutError}


def failure_kind(error: SourceError) -> str:
    """unreachable, timeout, busy, too_large, rate_limited, refused or error."""
    kind = next((name for cls, name in _BY_CLASS if isinstance(error, cls)), None)
    if kind is not None:
        return kind
    if error.status == 429:
        return "rate_limited"
    if error.status in (401, 403):
        return "refused"
    return "error"


def metric_kind(error: SourceError) -> str:
    """failure_kind, with "error" told apart further for operators: dropped connections and
    the HTTP status class (http_5xx)."""
    kind = failure_kind(error)
    if kind != "error":
        return kind
    if isinstance(error, SourceDroppedError):
        return "dropped"
    return f"http_{error.status // 100}xx" if error.status else "error"


def paused_error(source: str, kind: str, status: int | None) -> SourceError:
    """What a call refused by an open circuit reports: the kind of failure that opened it
    (unreachable, timed out, or its HTTP status), so that users are told the same."""
    cls = _PAUSED.get(kind, SourceError)
    return cls(source, "paused after repeated failures (circuit open)", status)
