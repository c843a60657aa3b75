"""How the HTTP API fails: every error is one JSON shape, whatever raised it.

    {"error": {"type": "not_found", "message": "no such job", "retryable": false}}

    ApiError                    an answer a route chose (status, type, message, headers)
    RequestValidationError      a body or parameter the schemas refuse: 422 invalid_request
    HTTPException (Starlette)   routing and body reading: 404 no such route, 405, 400, 413
    UnavailableError (core)     the database or the queue is away for now: 503 unavailable
                                with Retry-After (a database driver's connection error too,
                                recognised by core.store.outage)
    any other exception         500 internal, logged with its traceback, shown without it

`ApiError` is a plain Exception, not a `core.errors.ResearchBotError`: it is not a failure of
the research core but this adapter's HTTP answer (a status code and headers), and it never
leaves the app (`EXCEPTION_HANDLERS` turns it into a response). A core error that reaches a
route is translated there (InvalidQuestionError to 400 invalid_question), never re-raised as
an ApiError subclass of it.

`BodySizeLimit` refuses a request body over `MAX_BODY_BYTES` (a documents upload: over its own
limit) before it is read whole."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapters.http.headers import SAFETY_HEADERS
from adapters.http.schemas import ErrorResponse
from core.errors import UnavailableError
from core.store.outage import store_outage
from core.text import without_lone_surrogates

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024

# The statuses any route may answer with the error shape, for the OpenAPI document.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 409, 413, 422, 429, 503)}

_STATUS_KINDS = {400: "invalid_request", 401: "unauthorized", 404: "not_found",
                 405: "invalid_request", 409: "conflict", 413: "payload_too_large",
                 415: "unsupported_type", 429: "rate_limited", 503: "unavailable"}


class ApiError(Exception):
    """An error answer: `status` with `{"error": {"type": kind, message, retryable}}`."""

    def __init__(self, status: int, kind: str, message: str, retryable: bool = False,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.headers = headers or {}


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


def job_not_found() -> ApiError:
    """A job that does not exist, or that the caller may not see: the same answer."""
    return ApiError(404, "not_found", "no such job")


def error_response(status: int, kind: str, message: str, retryable: bool = False,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """The error shape, with the safety headers (a 500 bypasses the middleware adding them).
    A message quoting the request (a field name in a 422) holds no lone surrogate, which
    would fail the response's encoding."""
    body = {"error": {"type": kind, "message": without_lone_surrogates(message),
                      "retryable": retryable}}
    return JSONResponse(body, status_code=status, headers={**SAFETY_HEADERS, **(headers or {})})


async def _api_error(_: Request, error: ApiError) -> JSONResponse:
    return error_response(error.status, error.kind, error.message, error.retryable,
                          error.headers)


async def _invalid_request(_: Request, error: RequestValidationError) -> JSONResponse:
    problems = []
    for item in error.errors()[:5]:
        where = ".".join(str(part) for part in item.get("loc", ()) if part != "body")
        problems.append(f"{where or 'body'}: {item.get('msg', 'invalid')}")
    return error_response(422, "invalid_request", "; ".join(problems) or "invalid request")


async def _http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
    kind = _STATUS_KINDS.get(error.status_code, "invalid_request")
    message = error.detail if isinstance(error.detail, str) else "request refused"
    if error.status_code == 404:
        message = "no such route"
    return error_response(error.status_code, kind, message, error.status_code >= 500,
                          getattr(error, "headers", None))


def unavailable(error: UnavailableError) -> JSONResponse:
    """503 with the reason and when to ask again: nothing was lost, the request may be
    made again."""
    return error_response(503, "unavailable", str(error), retryable=True,
                          headers={"Retry-After": str(max(1, round(error.retry_after_s)))})


async def _unavailable(_: Request, error: UnavailableError) -> JSONResponse:
    log.warning("request refused for now: %s", error)
    return unavailable(error)


async def _driver_error(request: Request, error: Exception) -> JSONResponse:
    """A database driver's error (or a bare OSError) that reached a route: 503 when it
    means the database is away, else a crash like any other."""
    outage = store_outage(error)
    if outage is not None:
        return await _unavailable(request, outage)
    return await _crashed(request, error)


async def _crashed(_: Request, error: Exception) -> JSONResponse:
    log.exception("request failed: %s", type(error).__name__)
    return error_response(500, "internal", "the server failed to answer this request; try "
                          "again", retryable=True)


# FastAPI(exception_handlers=...): each error type to its answer.
EXCEPTION_HANDLERS: dict[int | type[Exception],
                         Callable[[Request, Any], Coroutine[Any, Any, Response]]] = {
    ApiError: _api_error,
    RequestValidationError: _invalid_request,
    StarletteHTTPException: _http_error,
    UnavailableError: _unavailable,
    # Answered inside the app, unlike `Exception` (Starlette's last-resort handler re-raises
    # and drops the keep-alive connection): a database restart is no crash.
    OSError: _driver_error,
    SQLAlchemyError: _driver_error,
    Exception: _crashed,
}


class BodySizeLimit:
    """Refuse a request body over `limit` bytes with 413 before it is read whole, whether it
    says its length or streams chunks."""

    def __init__(self, app: ASGIApp, limit: int, larger: dict[str, int] | None = None) -> None:
        """`larger`: the limit of a path that takes more (the documents upload)."""
        self.app = app
        self.limit = limit
        self.larger = larger or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope.get("path", ""), self.limit)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            too_large = error_response(413, "payload_too_large", _too_large(limit))
            await too_large(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:  # the route's body reading answers 413
                    raise StarletteHTTPException(413, _too_large(limit))
            return message

        await self.app(scope, counted, send)


def _too_large(limit: int) -> str:
    if limit >= 2**20:
        return f"the request body is larger than {limit / 2**20:g} MB"
    return f"the request body is larger than {limit // 1024} KB"
