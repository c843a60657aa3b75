"""The HTTP API and the answer pages, as a FastAPI app over the job service.

    POST   /v1/research              submit a question: 202 with the job's links
    GET    /v1/jobs                  the caller's tenant's recent jobs
    GET    /v1/jobs/{id}             a job (once completed: the `ask --json` object)
    GET    /v1/jobs/{id}/events      its progress as Server-Sent Events, then the result
    DELETE /v1/jobs/{id}             cancel it
    POST   /v1/jobs/{id}/retry       ask its question again, bypassing the answer cache
    POST   /v1/jobs/{id}/feedback    rate its answer
    GET    /jobs/{id}?token=...      its answer page, live while it runs
    GET    /healthz, /readyz, /metrics, /openapi.json

A request names its tenant with an API key (`Authorization: Bearer rb_...`); another tenant's
job is answered 404, as if it did not exist. A job's own routes also take the job's page token
(`?token=`), which is how the page, shared without a key, streams and rates its one job.
Every error is `{"error": {"type", "message", "retryable"}}`."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name
# dependencies local to create_app.
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from sse_starlette import EventSourceResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapters.chat.limits import QuestionLimiter, RateLimitedError
from adapters.http import page
from adapters.http.feeds import JobFeeds
from adapters.http.schemas import (
    Accepted,
    ErrorResponse,
    FeedbackBody,
    FeedbackStored,
    Health,
    JobList,
    JobResponse,
    JobSummary,
    Links,
    ProgressEventBody,
    Readiness,
    ResearchBody,
)
from core.errors import InvalidQuestionError, JobNotFoundError
from core.jobs.service import JobService
from core.models import (
    ConversationTurn,
    Job,
    JobEvent,
    JobStatus,
    ResearchRequest,
    ResearchResult,
)
from core.research.intake import validate_question
from core.store.access import ApiKeys, ShareLinks
from core.store.feedback import Feedback, FeedbackStore

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
READER_COOKIE = "rb_reader"


@dataclass(frozen=True)
class ApiServices:
    """What the app serves from; opened and closed by the caller (bot/serve.py)."""

    jobs: JobService
    keys: ApiKeys
    links: ShareLinks
    feedback: FeedbackStore
    limiter: QuestionLimiter
    default_tenant: str
    # Whether a request without a key is served (as `default_tenant`): asked per request, so
    # the first key created closes the door without a restart.
    anonymous_allowed: Callable[[], Awaitable[bool]]
    readiness: Callable[[], Awaitable[dict[str, str]]]
    metrics: Callable[[], Awaitable[tuple[bytes, str]]] | None = None


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, retryable: bool = False,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.headers = headers or {}


@dataclass(frozen=True)
class Caller:
    """Who is asking: a tenant, and what their feedback is recorded as."""

    tenant: str
    user: str  # "key:<id>", "anonymous" or "page"
    channel: str  # api or web


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 409, 413, 422, 429, 503)}


def create_app(services: ApiServices) -> FastAPI:
    feeds = JobFeeds(services.jobs)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await feeds.close()

    app = FastAPI(title="researchbot", version="1", summary="Cited research answers.",
                  docs_url=None, redoc_url=None, responses=ERRORS, lifespan=lifespan)
    app.state.services = services
    _handlers(app)
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)

    async def caller(request: Request) -> Caller:
        header = request.headers.get("authorization", "")
        if not header:
            if await services.anonymous_allowed():
                return Caller(services.default_tenant, "anonymous", "api")
            raise _unauthorized("an API key is required: send Authorization: Bearer <key> "
                                "(researchbot keys create --tenant T makes one)")
        scheme, _, key = header.partition(" ")
        found = await services.keys.verify(key.strip()) if scheme.lower() == "bearer" else None
        if found is None:
            raise _unauthorized("the API key is not valid (unknown, mistyped or revoked)")
        return Caller(found.tenant, f"key:{found.id}", "api")

    async def job_for(job_id: str, request: Request,
                      token: Annotated[str | None, Query(
                          description="The job's page token, instead of an API key.")] = None,
                      ) -> tuple[Job, Caller]:
        """The job, if the caller may see it; 404 otherwise (whether or not it exists)."""
        job = await _find(services.jobs, job_id)
        if token is not None:
            if job is None or not services.links.check(job_id, token):
                raise _not_found()
            return job, Caller(job.tenant, "page", "web")
        who = await caller(request)
        if job is None or job.tenant != who.tenant:
            raise _not_found()
        return job, who

    JobAccess = Annotated[tuple[Job, Caller], Depends(job_for)]

    def links(job_id: str) -> Links:
        token = services.links.token(job_id)
        return Links(self=f"/v1/jobs/{job_id}", events=f"/v1/jobs/{job_id}/events",
                     page=f"/jobs/{job_id}?token={token}")

    async def submit(request: ResearchRequest, who: Caller) -> str:
        try:
            wait_s = await services.limiter.admit(who.tenant, who.user)
        except RateLimitedError as error:
            seconds = max(1, int(error.retry_after_s + 0.999))
            raise ApiError(429, "rate_limited",
                           f"{'this key' if error.scope == 'user' else 'this tenant'} asked "
                           f"{error.limit} questions in the last {error.window_s:g} s; ask "
                           f"again in {seconds} s", retryable=True,
                           headers={"Retry-After": str(seconds)}) from None
        return await services.jobs.submit(request, start_after_s=wait_s)

    @app.post("/v1/research", status_code=202, response_model=Accepted, tags=["research"],
              summary="Research a question")
    async def research(body: ResearchBody, response: Response,
                       who: Annotated[Caller, Depends(caller)]) -> Accepted:
        try:
            question = validate_question(body.question)
            context = [ConversationTurn(question=validate_question(turn.question),
                                        answer=turn.answer) for turn in body.context]
        except InvalidQuestionError as error:
            raise ApiError(400, "invalid_question", str(error)) from None
        request = ResearchRequest(question=question, context=context, tenant=who.tenant,
                                  user=who.user, platform="api", depth=body.depth,
                                  bypass_cache=body.bypass_cache)
        job_id = await submit(request, who)
        response.headers["Location"] = f"/v1/jobs/{job_id}"
        return Accepted(job_id=job_id, status=JobStatus.PENDING, links=links(job_id))

    @app.get("/v1/jobs", response_model=JobList, tags=["jobs"], summary="Recent jobs")
    async def recent(who: Annotated[Caller, Depends(caller)],
                     limit: Annotated[int, Query(ge=1, le=100)] = 20,
                     status: JobStatus | None = None) -> JobList:
        jobs = await services.jobs.recent(who.tenant, limit, status)
        return JobList(jobs=[_summary(job, links(job.id)) for job in jobs])

    @app.get("/v1/jobs/{job_id}", response_model=JobResponse, tags=["jobs"],
             response_model_exclude_unset=True,
             summary="A job, with its answer once completed")
    async def get_job(access: JobAccess) -> JobResponse:
        job, _ = access
        return job_response(job, links(job.id))

    @app.delete("/v1/jobs/{job_id}", status_code=202, response_model=JobResponse,
                response_model_exclude_unset=True, tags=["jobs"], summary="Cancel a job")
    async def cancel(access: JobAccess) -> JobResponse:
        job, _ = access
        if not await services.jobs.cancel(job.id):
            raise ApiError(409, "conflict", f"the job already ended ({job.status.value})")
        return job_response(await services.jobs.result(job.id), links(job.id))

    @app.post("/v1/jobs/{job_id}/retry", status_code=202, response_model=Accepted,
              tags=["jobs"], summary="Ask the job's question again, bypassing the cache")
    async def retry(access: JobAccess, response: Response) -> Accepted:
        job, who = access
        earlier = job.request
        request = earlier.model_copy(update={"bypass_cache": True, "user": who.user,
                                             "platform": "api" if who.channel == "api"
                                             else "web"})
        job_id = await submit(request, who)
        response.headers["Location"] = f"/v1/jobs/{job_id}"
        return Accepted(job_id=job_id, status=JobStatus.PENDING, links=links(job_id))

    @app.post("/v1/jobs/{job_id}/feedback", status_code=201, response_model=FeedbackStored,
              tags=["jobs"], summary="Rate a job's answer")
    async def rate(access: JobAccess, body: FeedbackBody, request: Request) -> FeedbackStored:
        job, who = access
        rater = f"api:{who.user}" if who.channel == "api" \
            else f"web:{request.cookies.get(READER_COOKIE) or secrets.token_hex(8)}"
        await services.feedback.add(Feedback(job_id=job.id, rater=rater, tenant=job.tenant,
                                             channel=who.channel, rating=body.rating,
                                             comment=body.comment))
        return FeedbackStored(job_id=job.id, rating=body.rating, comment=body.comment)

    @app.get("/v1/jobs/{job_id}/events", tags=["jobs"], summary="Progress, live",
             response_class=EventSourceResponse, responses={200: {
                 "description": "Server-Sent Events: `progress` events (data: "
                 "ProgressEventBody, id: its seq) up to the one that ends the job, then one "
                 "`result` event (data: JobResponse), then the stream closes. Reconnect with "
                 "Last-Event-ID to resume after the last event seen.",
                 "content": {"text/event-stream": {"schema": {"type": "string"}}}}})
    async def events(access: JobAccess, request: Request) -> EventSourceResponse:
        job, _ = access
        after = _last_event_id(request)
        return EventSourceResponse(_stream(services.jobs, feeds, job, after, links(job.id)),
                                   ping=15, headers={"Cache-Control": "no-store"})

    @app.get("/jobs/{job_id}", response_class=HTMLResponse, tags=["pages"],
             summary="The job's answer page", include_in_schema=True)
    async def answer_page(job_id: str, token: str = "") -> HTMLResponse:
        job = await _find(services.jobs, job_id)
        if job is None or not token or not services.links.check(job_id, token):
            return HTMLResponse(page.not_found(), status_code=404)
        events = await services.jobs.stored_events(job_id)
        html = page.render(job, events, token, _result_of(job))
        response = HTMLResponse(html, headers={
            "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": page.CONTENT_SECURITY_POLICY})
        response.set_cookie(READER_COOKIE, secrets.token_hex(8), max_age=365 * 86400,
                            httponly=True, samesite="strict")
        return response

    @app.get("/assets/{name}", include_in_schema=False)
    async def assets(name: str) -> Response:
        if name not in page.ASSETS:
            raise _not_found()
        return Response(page.asset(name), media_type=page.ASSETS[name],
                        headers={"Cache-Control": "public, max-age=3600",
                                 "X-Content-Type-Options": "nosniff"})

    @app.get("/healthz", response_model=Health, tags=["operations"])
    async def healthz() -> Health:
        return Health(status="ok")

    @app.get("/readyz", response_model=Readiness, tags=["operations"],
             responses={503: {"model": Readiness}})
    async def readyz() -> JSONResponse:
        checks = await services.readiness()
        ready = all(value in ("ok", "not used") for value in checks.values())
        body = Readiness(status="ready" if ready else "not_ready", checks=checks)
        return JSONResponse(body.model_dump(), status_code=200 if ready else 503)

    if services.metrics is not None:
        metrics = services.metrics

        @app.get("/metrics", tags=["operations"], include_in_schema=False)
        async def prometheus() -> Response:
            body, content_type = await metrics()
            return Response(body, media_type=content_type)

    return app


def job_response(job: Job, links: Links) -> JobResponse:
    # Set explicitly, so that they are shown (null, empty) while the job runs; sources leave
    # out the fields they do not have, exactly as `ask --json` does.
    fields: dict[str, Any] = {"answer": None, "citations": [], "references": [], "sources": [],
                              "metadata": {}}
    result = _result_of(job)
    if result is not None:
        fields = result.to_public_json()
        fields.pop("status", None)
    return JobResponse.model_validate({
        **fields, "job_id": job.id, "status": job.status, "question": _question(job),
        "stage": job.stage, "progress": job.progress, "created_at": job.created_at,
        "completed_at": job.completed_at, "error": job.error, "links": links})


def _summary(job: Job, links: Links) -> JobSummary:
    result = _result_of(job)
    return JobSummary(job_id=job.id, status=job.status, question=_question(job),
                      platform=job.platform, created_at=job.created_at,
                      completed_at=job.completed_at,
                      confidence=result.answer.confidence if result else None,
                      links=links)


async def _find(jobs: JobService, job_id: str) -> Job | None:
    try:
        return await jobs.result(job_id)
    except JobNotFoundError:
        return None


def _result_of(job: Job) -> ResearchResult | None:
    if job.status != JobStatus.COMPLETED or job.result is None:
        return None
    return job.result


def _question(job: Job) -> str:
    return job.request.question


def _last_event_id(request: Request) -> int:
    value = request.headers.get("last-event-id") or "0"
    try:
        return max(0, int(value))
    except ValueError:
        raise ApiError(400, "invalid_request",
                       "Last-Event-ID must be the id of an event received") from None


async def _stream(jobs: JobService, feeds: JobFeeds, job: Job, after: int,
                  links: Links) -> AsyncIterator[dict[str, str]]:
    """Each event after `after` up to the job's end, then its result. A finished job replays
    from what is stored; a running one follows the live feed."""
    if job.status in (JobStatus.PENDING, JobStatus.IN_PROGRESS):
        async for event in feeds.listen(job.id, after):
            yield _progress(event)
        job = await jobs.result(job.id)  # as it ended
    else:
        for event in await jobs.stored_events(job.id, after):
            yield _progress(event)
            if event.terminal:
                break
    final = job_response(job, links)
    yield {"event": "result", "data": final.model_dump_json(exclude_unset=True)}


def _progress(event: JobEvent) -> dict[str, str]:
    body = ProgressEventBody(seq=event.seq, kind=event.kind, stage=event.stage,
                             progress=event.progress, message=event.message, at=event.at)
    return {"id": str(event.seq), "event": "progress", "data": body.model_dump_json()}


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


def _not_found() -> ApiError:
    return ApiError(404, "not_found", "no such job")


def _error(status: int, kind: str, message: str, retryable: bool = False,
           headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": {"type": kind, "message": message, "retryable": retryable}}
    return JSONResponse(body, status_code=status, headers=headers)


_STATUS_KINDS = {400: "invalid_request", 401: "unauthorized", 404: "not_found",
                 405: "invalid_request", 409: "conflict", 413: "payload_too_large",
                 429: "rate_limited", 503: "unavailable"}


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Request, error: ApiError) -> JSONResponse:
        return _error(error.status, error.kind, error.message, error.retryable, error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = []
        for item in error.errors()[:5]:
            where = ".".join(str(part) for part in item.get("loc", ()) if part != "body")
            problems.append(f"{where or 'body'}: {item.get('msg', 'invalid')}")
        return _error(422, "invalid_request", "; ".join(problems) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        kind = _STATUS_KINDS.get(error.status_code, "invalid_request")
        message = error.detail if isinstance(error.detail, str) else "request refused"
        if error.status_code == 404:
            message = "no such route"
        return _error(error.status_code, kind, message, error.status_code >= 500,
                      getattr(error, "headers", None))

    @app.exception_handler(Exception)
    async def crashed(_: Request, error: Exception) -> JSONResponse:
        log.exception("request failed: %s", type(error).__name__)
        return _error(500, "internal", "the server failed to answer this request; try again",
                      retryable=True)


class BodyLimit:
    """Refuse a request body over `limit` bytes with 413 before it is read whole, whether it
    says its length or streams chunks."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _too_large(self.limit)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:  # the route's body reading answers 413
                    raise StarletteHTTPException(413, _too_large_message(self.limit))
            return message

        await self.app(scope, counted, send)


def _too_large(limit: int) -> JSONResponse:
    return _error(413, "payload_too_large", _too_large_message(limit))


def _too_large_message(limit: int) -> str:
    return f"the request body is larger than {limit // 1024} KB"
