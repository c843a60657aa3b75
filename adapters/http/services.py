"""What the app serves from, and how a route asks for it: `ApiServices` is opened and closed
by the caller (bot/serve.py) and kept in the app's state with the app's one `JobFeeds` and
its count of failed authentication; a route declares `services: Services`, `feeds: Feeds` or
`failures: Failures` and FastAPI hands them over."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request

from adapters.chat.limits import QuestionLimiter
from adapters.http.failed_auth import FailedAuthentications
from adapters.http.feeds import JobFeeds
from core.jobs.service import JobService
from core.store.access import ApiKeys, ShareLinks
from core.store.feedback import FeedbackStore

if TYPE_CHECKING:  # loaded by whoever builds the services
    from mcp.server.mcpserver import MCPServer

    from core.retrieval.kb.knowledge_base import KnowledgeBase

MetricsRenderer = Callable[[], Awaitable[tuple[bytes, str]]]
# (query, tenant, limit) -> {"query", "passages", "failures"} (bot.wiring.searcher)
Searcher = Callable[[str, str, int], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ApiServices:
    """What the app serves from; opened and closed by the caller (bot/serve.py)."""

    jobs: JobService
    documents: KnowledgeBase  # the tenants' documents: listed and removed here
    keys: ApiKeys
    links: ShareLinks
    feedback: FeedbackStore
    limiter: QuestionLimiter
    default_tenant: str
    # Whether a request without a key is served (as `default_tenant`): adapters/http/auth.py
    loopback: bool  # the server listens on a loopback address only
    allow_anonymous: bool  # web.allow_anonymous: keyless requests are served whatever keys exist
    readiness: Callable[[], Awaitable[dict[str, str]]]
    metrics: MetricsRenderer | None = None  # GET /metrics is served only with it
    # Why a question would be refused now (503), e.g. the vector store is down; None: taken
    admission: Callable[[], Awaitable[str | None]] | None = None
    search: Searcher | None = None  # POST /v1/search is served only with it
    host: str = "127.0.0.1"  # the address served: /mcp's DNS-rebinding check follows it
    mcp: MCPServer | None = None  # /mcp (the MCP server over streamable HTTP) only with it


async def services_of(request: Request) -> ApiServices:
    """(The dependencies here are coroutines: FastAPI runs a plain function on a thread.)"""
    services: ApiServices = request.app.state.services
    return services


async def feeds_of(request: Request) -> JobFeeds:
    feeds: JobFeeds = request.app.state.feeds
    return feeds


async def failures_of(request: Request) -> FailedAuthentications:
    failures: FailedAuthentications = request.app.state.failed_authentications
    return failures


Services = Annotated[ApiServices, Depends(services_of)]
Feeds = Annotated[JobFeeds, Depends(feeds_of)]
Failures = Annotated[FailedAuthentications, Depends(failures_of)]
