"""What every chat front end needs around the job service, whatever the platform: thread
memory, question limits, redelivery dedupe, readers' ratings, links to answer pages, and the
wording of refusals and queue waits."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from adapters.chat.dedupe import EventLog
from adapters.chat.limits import QuestionLimiter
from core.errors import RateLimitedError
from core.jobs.service import JobService
from core.models import Depth, DocumentsOutcome
from core.store.conversations import ConversationStore
from core.store.feedback import Feedback, FeedbackStore, Rating
from core.web.files import fetch_platform_file
from core.web.net import AddressGuard

# A job id -> the address of its answer page (a signed link), when web.public_url is set.
AnswerPage = Callable[[str], str]


@dataclass(frozen=True)
class ChatServices:
    jobs: JobService
    conversations: ConversationStore
    limiter: QuestionLimiter
    events: EventLog
    feedback: FeedbackStore
    depth: Depth = Depth.AUTO
    answer_page: AnswerPage | None = None  # None: answers carry no "View full analysis"
    # chat.document_adders: "everyone", or the user and role ids who may add documents
    document_adders: frozenset[str] = frozenset({"everyone"})

    def may_add_documents(self, user: str, roles: Iterable[str] = ()) -> bool:
        """Whether this person (with these roles, on Discord) may add documents from chat."""
        adders = self.document_adders
        return "everyone" in adders or user in adders or any(r in adders for r in roles)

    async def rate(self, platform: str, tenant: str, message: str, rater: str,
                   rating: Rating, *, added: bool) -> bool:
        """A 👍/👎 put on (`added`) or taken off `message`: stored as, or removed from, the
        rater's feedback on the job it answers. False when `message` is not an answer."""
        job_id = await self.conversations.job_answered_by(platform, tenant, message)
        if job_id is None:
            return False
        if added:
            await self.feedback.add(Feedback(job_id=job_id, rater=rater, tenant=tenant,
                                             channel=platform, rating=rating))
        else:
            await self.feedback.remove(job_id, rater, rating)
        return True


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


@dataclass(frozen=True)
class FileHosts:
    """Where files shared in a chat are downloaded from: the platform's own file hosts only
    ("host" or "host:port"), through `guard` (tests trust their local fake's address)."""

    hosts: frozenset[str]
    guard: AddressGuard = field(default_factory=AddressGuard)

    async def download(self, url: str, max_bytes: int,
                       headers: Mapping[str, str] | None = None) -> bytes:
        """The file's bytes (core.errors.FetchError saying why not)."""
        return await fetch_platform_file(url, hosts=self.hosts, guard=self.guard,
                                         max_bytes=max_bytes, headers=headers)


# "refine: shorter" in an answer's thread: revise that answer with the feedback
_REFINE = re.compile(r"^\s*refine\s*[:\-\u2013\u2014]\s*(?P<feedback>\S.*)$", re.I | re.S)


def refinement(text: str) -> str | None:
    """The feedback of a "refine: ..." message; None for any other message."""
    match = _REFINE.match(text)
    return match.group("feedback").strip() if match else None


NOT_ALLOWED = ("Adding documents from chat is limited to the people an admin listed "
               "(chat.document_adders).")


def added_lines(outcome: DocumentsOutcome) -> list[str]:
    """What a documents job did, a line a file or page, as plain text for any platform:
    "Added Title (12 pages)", "Skipped notes.exe: unsupported file type"."""
    lines = []
    for document in outcome.documents[:10]:
        name = document.title or document.name
        if document.status == "skipped":
            lines.append(f"Skipped {document.name}: {document.reason}")
        elif document.status == "unchanged":
            lines.append(f"Already added: {name} (unchanged)")
        else:
            pages = f" ({document.pages} pages)" if document.pages else ""
            lines.append(f"{document.status.capitalize()} {name}{pages}")
    if len(outcome.documents) > 10:
        lines.append(f"… and {len(outcome.documents) - 10} more ({outcome.summary})")
    return lines or ["Nothing was added."]
