"""A job's progress as Server-Sent Events:

    GET /v1/jobs/{id}/events    `progress` events (id: seq) up to the job's end, then `result`

A running job is followed through the app's one shared feed per job; an ended one is replayed
from what is stored, as one response body (no stream to keep open, no pings: a third less
server time for a cache hit's events, bench/api.py 4). Last-Event-ID resumes after the last
event a client saw."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Request, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from adapters.http.auth import AccessedJob
from adapters.http.errors import ApiError
from adapters.http.feeds import JobFeeds
from adapters.http.job_views import job_response, links_of
from adapters.http.schemas import Links, ProgressEventBody
from adapters.http.services import Feeds, Services
from core.jobs.service import JobService
from core.models import Job, JobEvent, JobStatus

PING_SECONDS = 15
_NO_STORE = {"Cache-Control": "no-store"}

router = APIRouter()


@router.get("/v1/jobs/{job_id}/events", tags=["jobs"], summary="Progress, live",
            response_class=EventSourceResponse, responses={200: {
                "description": "Server-Sent Events: `progress` events (data: "
                "ProgressEventBody, id: its seq) up to the one that ends the job, then one "
                "`result` event (data: JobResponse), then the stream closes. Reconnect with "
                "Last-Event-ID to resume after the last event seen.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}}}})
async def events(access: AccessedJob, request: Request, services: Services,
                 feeds: Feeds) -> Response:
    job = access.job
    stream = job_events(services.jobs, feeds, job, _last_event_id(request),
                        links_of(job.id, services.links))
    if job.status not in (JobStatus.PENDING, JobStatus.IN_PROGRESS):
        body = b"".join([event.encode() async for event in stream])
        return Response(body, media_type="text/event-stream", headers=_NO_STORE)
    return EventSourceResponse(stream, ping=PING_SECONDS, headers=_NO_STORE)


async def job_events(jobs: JobService, feeds: JobFeeds, job: Job, after: int,
                     links: Links) -> AsyncIterator[ServerSentEvent]:
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
    yield ServerSentEvent(final.model_dump_json(exclude_unset=True), event="result")


def _progress(event: JobEvent) -> ServerSentEvent:
    body = ProgressEventBody(seq=event.seq, kind=event.kind, stage=event.stage,
                             progress=event.progress, message=event.message,
                             detail=event.detail, at=event.at)
    return ServerSentEvent(body.model_dump_json(), event="progress", id=str(event.seq))


def _last_event_id(request: Request) -> int:
    value = request.headers.get("last-event-id") or "0"
    try:
        return max(0, int(value))
    except ValueError:
        raise ApiError(400, "invalid_request",
                       "Last-Event-ID must be the id of an event received") from None
