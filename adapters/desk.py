"""What every chat front end needs around the research core, whatever the platform: the
research entry point, thread memory, question limits and redelivery dedupe."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.conversations import ConversationStore
from core.dedupe import EventLog
from core.limits import QuestionLimiter, RateLimitedError
from core.models import Depth, ProgressEvent, ResearchRequest, ResearchResult
from core.redact import REDACTOR

Research = Callable[[ResearchRequest, Callable[[ProgressEvent], Awaitable[None]]],
                    Awaitable[ResearchResult]]

FAILURE = "Sorry, the research failed before it finished. Please try again in a moment."
PROGRESS_INTERVAL_S = 1.0


@dataclass(frozen=True)
class ResearchDesk:
    research: Research
    conversations: ConversationStore
    limiter: QuestionLimiter
    events: EventLog
    depth: Depth = Depth.AUTO

    def __post_init__(self) -> None:
        object.__setattr__(self, "research", _redacted(self.research))


def _redacted(research: Research) -> Research:
    """`research` whose answers are redacted (core.redact) before a platform shows them."""

    async def redacted(request: ResearchRequest,
                       progress: Callable[[ProgressEvent], Awaitable[None]]) -> ResearchResult:
        result = await research(request, progress)
        return ResearchResult.model_validate(REDACTOR.data(result.model_dump(mode="json")))

    return redacted


def throttled(send: Callable[[ProgressEvent], Awaitable[object]], *,
              shown_now: bool = True) -> Callable[[ProgressEvent], Awaitable[None]]:
    """A progress callback passing finished stages to `send` at most once a second: each
    update is a rate-limited platform call on the research's critical path, and the skipped
    ones would be replaced before anyone read them. `shown_now`: a status was just shown."""
    last = time.monotonic() if shown_now else -math.inf

    async def progress(event: ProgressEvent) -> None:
        nonlocal last
        if event.kind == "finished" and time.monotonic() - last >= PROGRESS_INTERVAL_S:
            last = time.monotonic()
            await send(event)

    return progress


def refusal(error: RateLimitedError, group: str) -> str:
    """What to tell someone over a limit; `group` names the tenant ("workspace", "server")."""
    who = "You have" if error.scope == "user" else f"This {group} has"
    return (f"{who} asked {error.limit} questions in the last {_duration(error.window_s)}. "
            f"Please ask again in {_duration(error.retry_after_s)}.")


def queued(wait_s: float) -> str:
    return f"Queued behind the questions just asked: starting in about {_duration(wait_s)}."


def _duration(seconds: float) -> str:
    whole = max(1, math.ceil(seconds))
    if whole < 120:
        return f"{whole} second{'s' if whole != 1 else ''}"
    return f"{math.ceil(whole / 60)} minutes"
