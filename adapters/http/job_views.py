"""What the API and the answer page show of a job: its links, its JSON (the `ask --json`
object once completed) and its summary line in a list. A job's fields are typed
(core.models.Job): nothing here parses them again."""

from __future__ import annotations

from typing import Any

from adapters.http.schemas import JobResponse, JobSummary, Links
from core.errors import JobNotFoundError
from core.jobs.service import JobService
from core.models import DocumentsRequest, Job, JobStatus, ResearchResult
from core.store.access import ShareLinks


def result_of(job: Job) -> ResearchResult | None:
    """The answer of a completed job; None before, or when it ended without one."""
    if job.status != JobStatus.COMPLETED or job.result is None:
        return None
    return job.result


async def find_job(jobs: JobService, job_id: str) -> Job | None:
    try:
        return await jobs.result(job_id)
    except JobNotFoundError:
        return None


def links_of(job_id: str, share: ShareLinks) -> Links:
    return Links(self=f"/v1/jobs/{job_id}", events=f"/v1/jobs/{job_id}/events",
                 page=f"/jobs/{job_id}?token={share.token(job_id)}")


def job_response(job: Job, links: Links) -> JobResponse:
    # Set explicitly, so that they are shown (null, empty) while the job runs; sources leave
    # out the fields they do not have, exactly as `ask --json` does.
    fields: dict[str, Any] = {"answer": None, "citations": [], "references": [], "sources": [],
                              "metadata": {}}
    result = result_of(job)
    if result is not None:
        fields = result.to_public_json(job.trace)
        fields.pop("status", None)
    if isinstance(job.request, DocumentsRequest):
        fields["documents"] = [d.model_dump() for d in job.added.documents] \
            if job.added is not None else []
    else:
        fields.update(context=job.request.context, max_iterations=job.request.max_iterations)
    return JobResponse.model_validate({
        **fields, "job_id": job.id, "status": job.status, "question": job.subject,
        "kind": _kind(job), "stage": job.stage, "progress": job.progress,
        "created_at": job.created_at, "completed_at": job.completed_at, "error": job.error,
        "links": links})


def job_summary(job: Job, links: Links) -> JobSummary:
    result = result_of(job)
    return JobSummary(job_id=job.id, status=job.status, question=job.subject,
                      platform=job.platform, created_at=job.created_at,
                      completed_at=job.completed_at,
                      confidence=result.answer.confidence if result else None,
                      links=links)


def _kind(job: Job) -> str:
    """research: a question's job; documents: one adding documents (`documents` says what
    became of each)."""
    return "documents" if isinstance(job.request, DocumentsRequest) else "research"
