"""The one protocol every search source implements (SearchSource), and what each remote
source declares about itself for the composition root and `researchbot check` (SourceSpec)."""

from __future__ import annotations

import contextvars
import enum
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from core.models import ContentType, QueryIntent, Recency, SearchControls, Source

if TYPE_CHECKING:
    import aiohttp

    from core.config import SourcesSettings
    from core.sources.policy import SourcePolicy

PROBE_QUERY = "test"  # what `researchbot check` searches for


# The search stage owns the time a source call may take: it sets this deadline (event loop
# time) around each call, and the source's policy fits its attempts inside it, so that a
# retry after a slow first attempt can still run.
CALL_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "source_call_deadline", default=None)



class SearchQuery(BaseModel):
    text: str
    tenant: str
    limit: int = 8
    intent: QueryIntent = QueryIntent()
    controls: SearchControls = SearchControls()

    @property
    def recency(self) -> Recency | None:
        """The date limit a source applies: the request's, else a month for a question that
        asks for recent things; None for no limit."""
        chosen = self.controls.recency
        if chosen is None:
            constraint = self.intent.time_constraint
            chosen = Recency.MONTH if constraint is not None and constraint.recent else None
        return None if chosen is Recency.ANY else chosen

    @property
    def content_type(self) -> ContentType:
        return self.controls.content_type


class SourceKind(enum.StrEnum):
    LOCAL = "local"  # the tenant's own documents: searched first, always
    WEB = "web"  # a web search engine
    REFERENCE = "reference"  # an encyclopedia: general facts, and a backstop for specialists
    SPECIALIST = "specialist"  # searched only for questions on its topics


@dataclass(frozen=True)
class Capabilities:
    """What a source is and can do, declared by the source itself: planning routes queries
    by it, the page reader reads the pages of snippet hits, grading names what was searched.
    `topics` are the question topics (core.research.planning.question_topics) a specialist
    answers; `preference` orders sources of one kind (lower first); `key_setting` names the
    setting that switches it on when it needs a key. What it does with a request's
    SearchControls: `dates`, it limits results by date; `content`, the kinds of content
    (news, academic) it is searched for; `site`, the one site all its results come from
    (skipped when the domain controls refuse it); `semantic`, a meaning-based search asked
    only explanation and conceptual questions (and for the kinds of content it serves)."""

    kind: SourceKind
    topics: frozenset[str] = frozenset()
    snippets: bool = False  # hits are search snippets: the page behind them says more
    preference: int = 0
    key_setting: str | None = None
    dates: bool = False
    content: frozenset[ContentType] = frozenset()
    site: str | None = None
    semantic: bool = False


class SearchSource(Protocol):
    """A place to search. Raises SourceError on an outage; returns [] only for "nothing found"."""

    name: str
    label: str  # how progress messages name it, e.g. "the knowledge base"
    capabilities: Capabilities

    async def search(self, query: SearchQuery) -> list[Source]: ...


class PolicyFactory(Protocol):
    """The composition root's SourcePolicy for a source, at the configured rate unless the
    source's API allows another (`rate_per_s`)."""

    def __call__(self, name: str, rate_per_s: float | None = None) -> SourcePolicy: ...


@dataclass(frozen=True)
class SourceProbe:
    """The one quick request that shows a source answers; a `body` is POSTed as JSON."""

    url: str
    params: dict[str, str] | None = None
    body: dict[str, Any] | None = None
    headers: dict[str, str] | None = None


# A source opened from the settings slice, the search APIs' HTTP session and the policy
# factory; closing the context closes whatever client the source opened for itself.
OpenSource = Callable[["SourcesSettings", "aiohttp.ClientSession", PolicyFactory],
                      AbstractAsyncContextManager[SearchSource]]


@dataclass(frozen=True)
class SourceSpec:
    """What a remote source module declares, once: its name and label, the setting that
    names it (check's row), whether the settings switch it on (and why not), its configured
    endpoint (trusted by the API session although it may be private), how it is opened, and
    the request `researchbot check` makes, built by the code that makes its real requests."""

    name: str
    label: str
    setting: str
    enabled: Callable[[SourcesSettings], bool]
    off_reason: str
    endpoint: Callable[[SourcesSettings], str | None]
    open: OpenSource
    probe: Callable[[SourcesSettings], SourceProbe]
