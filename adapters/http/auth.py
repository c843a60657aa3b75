"""Who is asking, and whether they may.

A request names its tenant with an API key (`Authorization: Bearer rb_...`). Without one it
is served as the default tenant only while keyless access is open: always with
web.allow_anonymous, otherwise on a loopback address until the first key exists (asked per
request, the answer kept for at most a second, core.store.access.KEYS_RECHECK_S: a key made
by `researchbot keys create` closes the door within a second, without a restart). A job's
page token (`?token=`) opens its one job and nothing else: the page, shared without a key, reads,
streams and rates the job; cancelling or retrying it needs a key. Another tenant's job is
answered 404, as if it did not exist. A key or token that is not of its shape is refused
before any database query (core.store.access). Failed authentication is counted per client
address (failed_auth): too many is 429 with Retry-After. Questions are admitted by the
limiter per key and per tenant; over the limit is 429 with Retry-After.

A rating from the page is recorded as the browser's: its reader cookie, which the page gives
a browser that has none; a rating posted without the cookie is recorded as its address's
reader (keyed, so the address is not stored) and the cookie is set to that, so posting again,
with or without the cookie, replaces the rating instead of adding one."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request, Response

from adapters.http.errors import ApiError, job_not_found, unauthorized
from adapters.http.failed_auth import FailedAuthentications
from adapters.http.job_views import find_job
from adapters.http.services import ApiServices, Failures, Services
from core.errors import RateLimitedError
from core.models import Job
from core.store.access import ApiKeys, ShareLinks

# The answer page gives each browser this cookie: its feedback is recorded as one rater.
READER_COOKIE = "rb_reader"
READER_COOKIE_SECONDS = 365 * 86400
_READER = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Caller:
    """Who is asking: a tenant, and what their feedback is recorded as."""

    tenant: str
    user: str  # "key:<id>", "anonymous" or "page"
    channel: str  # api or web


async def keyless_allowed(keys: ApiKeys, *, loopback: bool, allow_anonymous: bool) -> bool:
    """Whether a request without a key is served now (see the module docstring)."""
    if allow_anonymous:
        return True
    return loopback and not await keys.any_active()


async def api_caller(request: Request, services: Services, failures: Failures) -> Caller:
    """The caller by API key, or the default tenant's anonymous caller; 401 otherwise (and
    429 once the address failed too often)."""
    address = client_address(request)
    await _not_locked_out(failures, address)
    header = request.headers.get("authorization", "")
    if not header:
        if await keyless_allowed(services.keys, loopback=services.loopback,
                                 allow_anonymous=services.allow_anonymous):
            return Caller(services.default_tenant, "anonymous", "api")
        await failures.failed(address)
        if "token" in request.query_params:
            raise unauthorized("a page token opens and rates its job only: cancelling or "
                               "retrying it needs an API key (Authorization: Bearer <key>)")
        raise unauthorized("an API key is required: send Authorization: Bearer <key> "
                           "(researchbot keys create --tenant T makes one)")
    scheme, _, key = header.partition(" ")
    found = await services.keys.verify(key.strip()) if scheme.lower() == "bearer" else None
    if found is None:
        await failures.failed(address)
        raise unauthorized("the API key is not valid (unknown, mistyped or revoked)")
    return Caller(found.tenant, f"key:{found.id}", "api")


@dataclass(frozen=True)
class JobAccess:
    job: Job
    caller: Caller


async def job_access(job_id: str, request: Request, services: Services, failures: Failures,
                     token: Annotated[str | None, Query(
                         description="The job's page token, instead of an API key.")] = None,
                     ) -> JobAccess:
    """The job, if the caller may see it (by key, or by its page token); 404 otherwise,
    whether or not it exists."""
    if token is not None:
        await check_page_token(services.links, failures, request, job_id, token)
        job = await find_job(services.jobs, job_id)
        if job is None:
            raise job_not_found()
        return JobAccess(job, Caller(job.tenant, "page", "web"))
    return await keyed_job_access(job_id, request, services, failures)


async def keyed_job_access(job_id: str, request: Request, services: Services,
                           failures: Failures) -> JobAccess:
    """The job, if the caller's key (or keyless access) may see it: what a page token does
    not allow (cancel, retry) asks for this."""
    who = await api_caller(request, services, failures)
    job = await find_job(services.jobs, job_id)
    if job is None or job.tenant != who.tenant:
        raise job_not_found()
    return JobAccess(job, who)


async def check_page_token(links: ShareLinks, failures: FailedAuthentications,
                           request: Request, job_id: str, token: str) -> None:
    """404 unless `token` is the job's page token (429 once the address failed too often)."""
    address = client_address(request)
    await _not_locked_out(failures, address)
    if not links.check(job_id, token):
        await failures.failed(address)
        raise job_not_found()


def client_address(request: Request) -> str:
    """The client's address as the ASGI server reports it (see failed_auth on proxies)."""
    return request.client.host if request.client is not None else "unknown"


async def _not_locked_out(failures: FailedAuthentications, address: str) -> None:
    seconds = await failures.refused_for(address)
    if seconds is not None:
        raise ApiError(429, "rate_limited", f"too many failed attempts to authenticate from "
                       f"this address; try again in {seconds} s", retryable=True,
                       headers={"Retry-After": str(seconds)})


ApiCaller = Annotated[Caller, Depends(api_caller)]
AccessedJob = Annotated[JobAccess, Depends(job_access)]  # by key or page token
KeyedJob = Annotated[JobAccess, Depends(keyed_job_access)]  # by key only


async def admit(services: ApiServices, who: Caller) -> float:
    """Seconds the caller's question waits before it starts; 429 if over a limit."""
    try:
        return await services.limiter.admit(who.tenant, who.user)
    except RateLimitedError as error:
        seconds = max(1, int(error.retry_after_s + 0.999))
        raise ApiError(429, "rate_limited",
                       f"{'this key' if error.scope == 'user' else 'this tenant'} asked "
                       f"{error.limit} questions in the last {error.window_s:g} s; ask "
                       f"again in {seconds} s", retryable=True,
                       headers={"Retry-After": str(seconds)}) from None


def rater_of(who: Caller, request: Request, response: Response, links: ShareLinks) -> str:
    """Who a rating is recorded as: the API caller, or the page's browser (see the module
    docstring), whose cookie is set when it had none."""
    if who.channel == "api":
        return f"api:{who.user}"
    reader = reader_of(request)
    if reader is None:
        reader = links.reader(client_address(request))
        give_reader_cookie(response, reader)
    return f"web:{reader}"


def reader_of(request: Request) -> str | None:
    """The browser's reader id from its cookie; None without one (or with a forged shape)."""
    value = request.cookies.get(READER_COOKIE, "")
    return value if _READER.fullmatch(value) else None


def new_reader() -> str:
    return secrets.token_hex(8)


def give_reader_cookie(response: Response, reader: str) -> None:
    response.set_cookie(READER_COOKIE, reader, max_age=READER_COOKIE_SECONDS, httponly=True,
                        samesite="strict")
