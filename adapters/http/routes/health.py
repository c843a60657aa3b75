"""Operations endpoints:

    GET /healthz    the process answers
    GET /readyz     what answering needs is reachable (200), or which part is not (503)
    GET /metrics    Prometheus text; its router is mounted only when the server renders them"""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from adapters.http.schemas import Health, Readiness
from adapters.http.services import Services

router = APIRouter(tags=["operations"])
metrics_router = APIRouter(tags=["operations"])


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    return Health(status="ok")


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(services: Services) -> JSONResponse:
    checks = await services.readiness()
    ready = all(value in ("ok", "not used") for value in checks.values())
    body = Readiness(status="ready" if ready else "not_ready", checks=checks)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


@metrics_router.get("/metrics", include_in_schema=False)
async def prometheus(services: Services) -> Response:
    render = services.metrics
    assert render is not None, "metrics_router is mounted only with ApiServices.metrics"
    body, content_type = await render()
    return Response(body, media_type=content_type)
