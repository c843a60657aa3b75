"""The answer pages, rendered on the server (adapters/http/page.py):

    GET /jobs/{id}?token=...    the job's page, live while it runs; 404 page without its token
    GET /assets/{name}          the page's stylesheet and script

The page, and its 404, are served with a strict Content-Security-Policy, no caching, no
referrer and no type sniffing; the page gives a browser without one its reader cookie (what
its ratings are recorded as: adapters/http/auth.py), and keeps the one it has."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from adapters.http import page
from adapters.http.auth import check_page_token, give_reader_cookie, new_reader, reader_of
from adapters.http.errors import ApiError, job_not_found
from adapters.http.job_views import find_job, result_of
from adapters.http.services import Failures, Services

PAGE_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": page.CONTENT_SECURITY_POLICY}

router = APIRouter()


@router.get("/jobs/{job_id}", response_class=HTMLResponse, tags=["pages"],
            summary="The job's answer page", include_in_schema=True)
async def answer_page(job_id: str, request: Request, services: Services, failures: Failures,
                      token: str = "") -> Response:
    if not token:
        return _refused(404)
    try:
        await check_page_token(services.links, failures, request, job_id, token)
    except ApiError as refused:  # 404, or 429 after too many wrong tokens: said as a page
        return _refused(refused.status, refused.headers)
    job = await find_job(services.jobs, job_id)
    if job is None:
        return _refused(404)
    events = await services.jobs.stored_events(job_id)
    response = HTMLResponse(page.render(job, events, token, result_of(job)),
                            headers=PAGE_HEADERS)
    if reader_of(request) is None:
        give_reader_cookie(response, new_reader())
    return response


def _refused(status: int, headers: dict[str, str] | None = None) -> HTMLResponse:
    html = page.not_found() if status == 404 else page.too_many_attempts()
    return HTMLResponse(html, status_code=status, headers={**PAGE_HEADERS, **(headers or {})})


@router.get("/assets/{name}", include_in_schema=False)
async def assets(name: str) -> Response:
    if name not in page.ASSETS:
        raise job_not_found()  # as before the split: the same 404 as an unknown job
    return Response(page.asset(name), media_type=page.ASSETS[name],
                    headers={"Cache-Control": "public, max-age=3600",
                             "X-Content-Type-Options": "nosniff"})
