"""The knowledge base's documents, per tenant (the key's):

    GET    /v1/documents?limit=&cursor=   the tenant's documents, by path, a page at a time
    GET    /v1/documents/{id}             one document
    DELETE /v1/documents/{id}             take it out of search at once: its chunks and
                                          vectors, and the answers cached from the knowledge
                                          base (they are not served again)

Another tenant's document is answered 404, as one that does not exist."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import APIRouter, Query

from adapters.http.auth import ApiCaller
from adapters.http.errors import ApiError
from adapters.http.schemas import DocumentBody, DocumentList, DocumentRemoved
from adapters.http.services import Services
from core.store.catalogue import CatalogueDocument

router = APIRouter()

MAX_PAGE = 200


@router.get("/v1/documents", response_model=DocumentList, tags=["documents"],
            summary="The tenant's documents")
async def list_documents(
    who: ApiCaller, services: Services,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Documents a page.")] = 50,
    cursor: Annotated[str | None, Query(max_length=8192, description="`next_cursor` of "
                                        "the page before.")] = None,
) -> DocumentList:
    after = _path_of(cursor) if cursor else ""
    found = await services.documents.documents(who.tenant, limit + 1, after)
    page = found[:limit]
    more = len(found) > limit
    return DocumentList(documents=[document_body(d) for d in page],
                        next_cursor=_cursor_of(page[-1].path) if more else None)


@router.get("/v1/documents/{document_id}", response_model=DocumentBody, tags=["documents"],
            summary="A document")
async def get_document(document_id: str, who: ApiCaller, services: Services) -> DocumentBody:
    document = await services.documents.document(who.tenant, document_id)
    if document is None:
        raise _not_found()
    return document_body(document)


@router.delete("/v1/documents/{document_id}", response_model=DocumentRemoved,
               tags=["documents"], summary="Remove a document from the knowledge base")
async def remove_document(document_id: str, who: ApiCaller,
                          services: Services) -> DocumentRemoved:
    removed = await services.documents.remove_document(who.tenant, document_id)
    if removed is None:
        raise _not_found()
    return DocumentRemoved(document_id=removed.document_id, status="removed")


def document_body(document: CatalogueDocument) -> DocumentBody:
    return DocumentBody(
        document_id=document.document_id, title=document.title, authors=document.author,
        date=document.published, origin=document.origin, path=document.path,
        chunks=document.chunks, words=document.words, status="indexed",
        added_at=document.indexed_at)


def _not_found() -> ApiError:
    return ApiError(404, "not_found", "no such document")


def _cursor_of(path: str) -> str:
    return base64.urlsafe_b64encode(path.encode()).decode().rstrip("=")


def _path_of(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ApiError(400, "invalid_request", "cursor is not one this API gave: pass "
                       "next_cursor from the page before") from None
