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
    GET    /healthz, /readyz, /metrics, /openapi.json

`create_app` only assembles: the routers (routes/), who may ask (auth, failed_auth), how
errors are answered and bodies limited (errors), the headers every response carries
(headers), and the services in the app's state (services)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI
from starlette.middleware import Middleware

from adapters.http.errors import ERROR_RESPONSES, EXCEPTION_HANDLERS, MAX_BODY_BYTES, BodySizeLimit
from adapters.http.failed_auth import FailedAuthentications
from adapters.http.feeds import JobFeeds
from adapters.http.headers import SafetyHeaders
from adapters.http.routes import documents, events, health, jobs, pages
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
    for router in (jobs.router, events.router, documents.router, pages.router,
                   health.router):
        app.include_router(router)
    if services.metrics is not None:
        app.include_router(health.metrics_router)
    return app


@contextlib.asynccontextmanager
async def _close_feeds_on_shutdown(app: FastAPI) -> AsyncIterator[None]:
    yield
    await app.state.feeds.close()
