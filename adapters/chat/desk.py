"""What every chat front end needs around the job service, whatever the platform: thread
memory, question limits, redelivery dedupe, and the wording of refusals and queue waits."""

from __future__ import annotations

import math
from dataclasses import dataclass

from adapters.chat.dedupe import EventLog
from adapters.chat.limits import QuestionLimiter, RateLimitedError
from core.jobs.conversations import ConversationStore
from core.jobs.service import JobService
from core.models import Depth


@dataclass(frozen=True)
class ResearchDesk:
    jobs: JobService
    conversations: ConversationStore
    limiter: QuestionLimiter
    events: EventLog
    depth: Depth = Depth.AUTO


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
