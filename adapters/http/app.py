"""The HTTP API and the answer pages, as a FastAPI app over the job service.

    POST   /v1/research              submit a question: 202 with the job's links
    GET    /v1/jobs                  the caller's tenant's recent jobs
    GET    /v1/jobs/{id}             a job (once completed: the `ask --json` object)
    GET    /v1/jobs/{id}/events      its progress as Server-Sent Events, then the result
    DELETE /v1/jobs/{id}             cancel it
    POST   /v1/jobs/{id}/retry       ask its question again, bypassing the answer cache
    POST   /v1/jobs/{id}/feedback    rate its answer
    GET    /v1/jobs/{id}/export      its answer as a document (md, html, pdf, docx)
    POST   /v1/documents             add files or a web page (a job) (routes/documents.py)
    GET    /v1/documents             the tenant's documents
    GET    /v1/documents/{id}        one document
    DELETE /v1/documents/{id}        remove it from the knowledge base
    GET    /jobs/{id}?token=...      its answer page, live while it runs
    POST   /v1/search                passages about a query, without an answer
    POST   /mcp                      the MCP server (adapters/mcp), behind the same keys
    GET    /healthz, /readyz, /metrics, /openapi.json

`create_app` only assembles: the routers (routes/), who may ask (auth, failed_auth), how
errors are answered and bodies limited (errors), the headers every response carries
(headers), and the services in the app's state (services)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI
from starlette.middleware import Middleware
from starlette.routing import Route

from adapters.http.errors import ERROR_RESPONSES, EXCEPTION_HANDLERS, MAX_BODY_BYTES, BodySizeLimit
from adapters.http.failed_auth import FailedAuthentications
from adapters.http.feeds import JobFeeds
from adapters.http.headers import SafetyHeaders
from adapters.http.mcp_endpoint import PATH as MCP_PATH
from adapters.http.mcp_endpoint import McpEndpoint
from adapters.http.routes import documents, events, health, jobs, pages, search
from adapters.http.services import ApiServices

__all__ = ["ApiServices", "create_app"]


def create_app(services: ApiServices) -> FastAPI:
    app = FastAPI(title="researchbot", version="1", summary="Cited research answers.",
                  docs_url=None, redoc_url=None, responses=ERROR_RESPONSES,
                  exception_handlers=EXCEPTION_HANDLERS, lifespan=_close_feeds_on_shutdown,
                  middleware=[Middleware(SafetyHeaders),
                              Middleware(BodySizeLimit, limit=MAX_BODY_BYTES,
                                         larger=documents.body_limits(services))])
    app.state.services = services
    app.state.feeds = JobFeeds(services.jobs)
    app.state.failed_authentications = FailedAuthentications()
    app.state.mcp_sessions = None
    for router in (jobs.router, events.router, documents.router, search.router,
                   pages.router, health.router):
        app.include_router(router)
    if services.metrics is not None:
        app.include_router(health.metrics_router)
    if services.mcp is not None:
        # The SDK's app is built for its session manager only: /mcp is served here, behind
        # the API's keys. Stateless: any API process can serve any request.
        services.mcp.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True,
                                         host=services.host)
        sessions = services.mcp.session_manager
        app.state.mcp_sessions = sessions
        app.router.routes.append(Route(MCP_PATH, McpEndpoint(
            sessions, services, app.state.failed_authentications),
            methods=["GET", "POST", "DELETE"]))
    return app


@contextlib.asynccontextmanager
async def _close_feeds_on_shutdown(app: FastAPI) -> AsyncIterator[None]:
    async with contextlib.AsyncExitStack() as stack:
        if app.state.mcp_sessions is not None:
            await stack.enter_async_context(app.state.mcp_sessions.run())
        yield
    await app.state.feeds.close()
