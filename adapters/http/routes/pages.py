"""The answer pages, rendered on the server (adapters/http/page.py):

    GET /jobs/{id}?token=...    the job's page, live while it runs; 404 page without its token
    GET /assets/{name}          the page's stylesheet and script

The page is served with a strict Content-Security-Policy, no caching and no referrer, and
gives the browser its reader cookie (what its ratings are recorded as)."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Response
from fastapi.responses import HTMLResponse

from adapters.http import page
from adapters.http.auth import READER_COOKIE
from adapters.http.errors import job_not_found
from adapters.http.job_views import find_job, result_of
from adapters.http.services import Services

READER_COOKIE_SECONDS = 365 * 86400

router = APIRouter()


@router.get("/jobs/{job_id}", response_class=HTMLResponse, tags=["pages"],
            summary="The job's answer page", include_in_schema=True)
async def answer_page(job_id: str, services: Services, token: str = "") -> HTMLResponse:
    job = await find_job(services.jobs, job_id)
    if job is None or not token or not services.links.check(job_id, token):
        return HTMLResponse(page.not_found(), status_code=404)
    events = await services.jobs.stored_events(job_id)
    response = HTMLResponse(page.render(job, events, token, result_of(job)), headers={
        "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": page.CONTENT_SECURITY_POLICY})
    response.set_cookie(READER_COOKIE, secrets.token_hex(8), max_age=READER_COOKIE_SECONDS,
                        httponly=True, samesite="strict")
    return response


@router.get("/assets/{name}", include_in_schema=False)
async def assets(name: str) -> Response:
    if name not in page.ASSETS:
        raise job_not_found()  # as before the split: the same 404 as an unknown job
    return Response(page.asset(name), media_type=page.ASSETS[name],
                    headers={"Cache-Control": "public, max-age=3600",
                             "X-Content-Type-Options": "nosniff"})
