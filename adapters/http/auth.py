"""Who is asking, and whether they may.

A request names its tenant with an API key (`Authorization: Bearer rb_...`). Without one it
is served as the default tenant only while keyless access is open: always with
web.allow_anonymous, otherwise on a loopback address until the first key exists (asked per
request, so creating a key closes the door without a restart). A job's own routes also take
the job's page token (`?token=`): the page, shared without a key, streams and rates its one
job. Another tenant's job is answered 404, as if it did not exist. Questions are admitted by
the limiter per key and per tenant; over the limit is 429 with Retry-After."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request

from adapters.http.errors import ApiError, job_not_found, unauthorized
from adapters.http.job_views import find_job
from adapters.http.services import ApiServices, Services
from core.errors import RateLimitedError
from core.models import Job
from core.store.access import ApiKeys

# The answer page gives each browser this cookie: its feedback is recorded as one rater.
READER_COOKIE = "rb_reader"


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


async def api_caller(request: Request, services: Services) -> Caller:
    """The caller by API key, or the default tenant's anonymous caller; 401 otherwise."""
    header = request.headers.get("authorization", "")
    if not header:
        if await keyless_allowed(services.keys, loopback=services.loopback,
                                 allow_anonymous=services.allow_anonymous):
            return Caller(services.default_tenant, "anonymous", "api")
        raise unauthorized("an API key is required: send Authorization: Bearer <key> "
                           "(researchbot keys create --tenant T makes one)")
    scheme, _, key = header.partition(" ")
    found = await services.keys.verify(key.strip()) if scheme.lower() == "bearer" else None
    if found is None:
        raise unauthorized("the API key is not valid (unknown, mistyped or revoked)")
    return Caller(found.tenant, f"key:{found.id}", "api")


@dataclass(frozen=True)
class JobAccess:
    job: Job
    caller: Caller


async def job_access(job_id: str, request: Request, services: Services,
                     token: Annotated[str | None, Query(
                         description="The job's page token, instead of an API key.")] = None,
                     ) -> JobAccess:
    """The job, if the caller may see it; 404 otherwise (whether or not it exists)."""
    job = await find_job(services.jobs, job_id)
    if token is not None:
        if job is None or not services.links.check(job_id, token):
            raise job_not_found()
        return JobAccess(job, Caller(job.tenant, "page", "web"))
    who = await api_caller(request, services)
    if job is None or job.tenant != who.tenant:
        raise job_not_found()
    return JobAccess(job, who)


ApiCaller = Annotated[Caller, Depends(api_caller)]
AccessedJob = Annotated[JobAccess, Depends(job_access)]


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


def rater_of(who: Caller, request: Request) -> str:
    """Who a rating is recorded as: the API caller, or the page's browser by its cookie."""
    if who.channel == "api":
        return f"api:{who.user}"
    return f"web:{request.cookies.get(READER_COOKIE) or secrets.token_hex(8)}"
