"""Search without answering, per tenant (the key's):

    POST /v1/search {"query", "limit"?}   the passages that answer the query best, from the
                                          knowledge base and the sources the tenant may use,
                                          ranked as research ranks them; no job, no answer"""

from __future__ import annotations

from fastapi import APIRouter

from adapters.http.auth import ApiCaller, admit
from adapters.http.errors import ApiError
from adapters.http.schemas import SearchBody, SearchFound
from adapters.http.services import Services
from core.errors import InvalidQuestionError

router = APIRouter()


@router.post("/v1/search", response_model=SearchFound, tags=["research"],
             summary="Passages about a query, without an answer")
async def search(body: SearchBody, who: ApiCaller, services: Services) -> SearchFound:
    if services.search is None:
        raise ApiError(503, "unavailable", "this server does not search", retryable=False)
    await admit(services, who)
    try:
        found = await services.search(body.query, who.tenant, body.limit)
    except InvalidQuestionError as error:
        raise ApiError(400, "invalid_question", str(error)) from None
    return SearchFound.model_validate(found)
