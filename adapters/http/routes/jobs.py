"""The research API: submit a question, list, read, cancel and retry jobs, rate an answer.

    POST   /v1/research              submit a question: 202 with the job's links
    GET    /v1/jobs                  the caller's tenant's recent jobs
    GET    /v1/jobs/{id}             a job (once completed: the `ask --json` object)
    DELETE /v1/jobs/{id}             cancel it (with a key: the page token does not)
    POST   /v1/jobs/{id}/retry       ask its question again, bypassing the answer cache (ditto)
    POST   /v1/jobs/{id}/feedback    rate its answer
    POST   /v1/jobs/{id}/improve     revise its answer following feedback (needs a model)
    GET    /v1/jobs/{id}/export      its answer as a document (?format=md|html|pdf|docx; by key
                                     or page token: the page's Download links)"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from adapters.http.auth import AccessedJob, ApiCaller, Caller, KeyedJob, admit, rater_of
from adapters.http.errors import ApiError
from adapters.http.job_views import job_response, job_summary, links_of
from adapters.http.schemas import (
    Accepted,
    FeedbackBody,
    FeedbackStored,
    ImproveBody,
    JobList,
    JobResponse,
    ResearchBody,
)
from adapters.http.services import ApiServices, Services
from core.answer.export import (
    FORMATS,
    MEDIA_TYPES,
    ExportFormat,
    export_answer,
    export_filename,
)
from core.errors import InvalidQuestionError
from core.models import ConversationTurn, JobStatus, ResearchRequest
from core.store.feedback import Feedback

log = logging.getLogger(__name__)
router = APIRouter()

REFUSED_RETRY_AFTER_S = 10


@router.post("/v1/research", status_code=202, response_model=Accepted, tags=["research"],
             summary="Research a question")
async def research(body: ResearchBody, response: Response, who: ApiCaller,
                   services: Services) -> Accepted:
    history = [ConversationTurn(question=turn.question, answer=turn.answer)
               for turn in body.history]
    request = ResearchRequest(question=body.question, context=body.context, history=history,
                              tenant=who.tenant, user=who.user, platform="api",
                              depth=body.depth, max_iterations=body.max_iterations,
                              bypass_cache=body.bypass_cache, controls=body.controls)
    if body.turns_in_context:
        log.info("POST /v1/research with earlier turns in `context` (deprecated: `history`)",
                 extra={"tenant": who.tenant})
        response.headers["Deprecation"] = "true"
        response.headers["Warning"] = ('299 - "context as a list of earlier turns is '
                                       'deprecated: send them as history"')
    return await _submit(services, request, who, response)


@router.get("/v1/jobs", response_model=JobList, tags=["jobs"], summary="Recent jobs")
async def recent(who: ApiCaller, services: Services,
                 limit: Annotated[int, Query(ge=1, le=100)] = 20,
                 status: JobStatus | None = None) -> JobList:
    jobs = await services.jobs.recent(who.tenant, limit, status)
    return JobList(jobs=[job_summary(job, links_of(job.id, services.links)) for job in jobs])


@router.get("/v1/jobs/{job_id}", response_model=JobResponse, tags=["jobs"],
            response_model_exclude_unset=True,
            summary="A job, with its answer once completed")
async def get_job(access: AccessedJob, services: Services) -> JobResponse:
    return job_response(access.job, links_of(access.job.id, services.links))


@router.delete("/v1/jobs/{job_id}", status_code=202, response_model=JobResponse,
               response_model_exclude_unset=True, tags=["jobs"], summary="Cancel a job")
async def cancel(access: KeyedJob, services: Services) -> JobResponse:
    job = access.job
    if not await services.jobs.cancel(job.id):
        raise ApiError(409, "conflict", f"the job already ended ({job.status.value})")
    return job_response(await services.jobs.result(job.id), links_of(job.id, services.links))


@router.post("/v1/jobs/{job_id}/retry", status_code=202, response_model=Accepted,
             tags=["jobs"], summary="Ask the job's question again, bypassing the cache")
async def retry(access: KeyedJob, response: Response, services: Services) -> Accepted:
    who = access.caller
    if not isinstance(access.job.request, ResearchRequest):
        raise ApiError(409, "conflict", "only a question can be asked again: add the "
                       "documents again with POST /v1/documents")
    request = access.job.request.model_copy(update={
        "bypass_cache": True, "user": who.user, "platform": "api"})
    return await _submit(services, request, who, response)


@router.post("/v1/jobs/{job_id}/improve", status_code=202, response_model=Accepted,
             tags=["jobs"], summary="Revise the job's answer following feedback")
async def improve(access: KeyedJob, body: ImproveBody, response: Response,
                  services: Services) -> Accepted:
    """A new job revising this answer (the same claim checks as any answer); needs a model
    (llm.fast_model): without one, 400 saying so."""
    who = access.caller
    if not isinstance(access.job.request, ResearchRequest):
        raise ApiError(409, "conflict", "only an answer can be improved")
    await admit(services, who)
    try:
        job_id = await services.jobs.improve(body.feedback, who.tenant, access.job.id)
    except InvalidQuestionError as error:
        raise ApiError(400, "invalid_question", str(error)) from None
    response.headers["Location"] = f"/v1/jobs/{job_id}"
    return Accepted(job_id=job_id, status=JobStatus.PENDING,
                    links=links_of(job_id, services.links))


@router.get("/v1/jobs/{job_id}/export", tags=["jobs"], response_class=Response,
            summary="The answer as a document to download",
            responses={200: {"description": "The answer, its confidence, limitations and "
                             "references, as a file (Content-Disposition: attachment).",
                             "content": {MEDIA_TYPES[kind].split(";")[0]: {"schema": {
                                 "type": "string", "format": "binary"}} for kind in FORMATS}}})
async def export(access: AccessedJob,
                 format: Annotated[ExportFormat, Query(description="md, html, pdf or docx")]
                 = "md") -> Response:
    job = access.job
    if job.result is None or job.status != JobStatus.COMPLETED:
        raise ApiError(409, "conflict", f"the job has no answer to export ({job.status.value})")
    result = job.result
    data = await asyncio.to_thread(export_answer, result, format)
    name = export_filename(result, format, job.completed_at or job.created_at)
    return Response(data, media_type=MEDIA_TYPES[format], headers={
        "Content-Disposition": f'attachment; filename="{name}"',
        "Cache-Control": "no-store"})


@router.post("/v1/jobs/{job_id}/feedback", status_code=201, response_model=FeedbackStored,
             tags=["jobs"], summary="Rate a job's answer")
async def rate(access: AccessedJob, body: FeedbackBody, request: Request, response: Response,
               services: Services) -> FeedbackStored:
    job, who = access.job, access.caller
    rater = rater_of(who, request, response, services.links)
    await services.feedback.add(Feedback(job_id=job.id, rater=rater,
                                         tenant=job.tenant, channel=who.channel,
                                         rating=body.rating, comment=body.comment))
    return FeedbackStored(job_id=job.id, rating=body.rating, comment=body.comment)


async def _submit(services: ApiServices, request: ResearchRequest, who: Caller,
                  response: Response) -> Accepted:
    """Queue the question once the limiter admits it; 202 with Location and links. The job
    service validates the request (400 when it cannot be researched). 503 while something
    the job needs is down (it could only fail), or the queue cannot take it."""
    refusal = await services.admission() if services.admission is not None else None
    if refusal is not None:
        raise ApiError(503, "unavailable", refusal, retryable=True,
                       headers={"Retry-After": str(REFUSED_RETRY_AFTER_S)})
    wait_s = await admit(services, who)
    try:
        job_id = await services.jobs.submit(request, start_after_s=wait_s)
    except InvalidQuestionError as error:
        raise ApiError(400, "invalid_question", str(error)) from None
    response.headers["Location"] = f"/v1/jobs/{job_id}"
    return Accepted(job_id=job_id, status=JobStatus.PENDING,
                    links=links_of(job_id, services.links))
