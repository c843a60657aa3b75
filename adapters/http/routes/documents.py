"""The knowledge base's documents, per tenant (the key's):

    POST   /v1/documents                  add files (multipart, field `file`, one or more) or
                                          a web page (JSON {"url", "crawl"?}): 202 with a
                                          job whose events say how it goes; 413 a file too
                                          large, 415 a type it cannot read, 422 a URL it may
                                          not fetch
    GET    /v1/documents?limit=&cursor=   the tenant's documents, by path, a page at a time
    GET    /v1/documents/{id}             one document
    DELETE /v1/documents/{id}             take it out of search at once: its chunks and
                                          vectors, and the answers cached from the knowledge
                                          base (they are not served again)

Another tenant's document is answered 404, as one that does not exist."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from adapters.http.auth import ApiCaller, admit
from adapters.http.errors import ApiError
from adapters.http.job_views import links_of
from adapters.http.schemas import (
    AddUrl,
    DocumentBody,
    DocumentList,
    DocumentQueued,
    DocumentRemoved,
    DocumentsAccepted,
    ErrorResponse,
)
from adapters.http.services import ApiServices, Services
from core.errors import DocumentRefusedError
from core.models import DocumentsRequest, Job, JobStatus
from core.retrieval.kb.adding import MAX_FILES, DocumentAdder
from core.retrieval.kb.indexer import file_id_of
from core.store.catalogue import CatalogueDocument
from core.web.crawl import page_key

router = APIRouter()

MAX_PAGE = 200
PATH = "/v1/documents"
_REFUSALS = {"too_large": (413, "payload_too_large"), "unsupported": (415, "unsupported_type"),
             "not_allowed": (422, "invalid_request"), "invalid": (400, "invalid_request")}
# The request bodies the route reads (for the OpenAPI document: it reads them itself, to take
# either kind at one path)
_BODIES: dict[str, Any] = {"requestBody": {"required": True, "content": {
    "multipart/form-data": {"schema": {
        "type": "object", "required": ["file"],
        "properties": {"file": {"type": "array", "maxItems": MAX_FILES,
                                "items": {"type": "string", "format": "binary"}}}}},
    "application/json": {"schema": {"$ref": "#/components/schemas/AddUrl"}}}}}


def body_limits(services: ApiServices) -> dict[str, int]:
    """The largest body POST /v1/documents takes: its files at their largest, and a margin
    for the form's framing."""
    if not services.jobs.adds_documents:
        return {}
    return {PATH: services.jobs.documents.max_bytes * MAX_FILES + 2**20}


@router.post(PATH, status_code=202, response_model=DocumentsAccepted, tags=["documents"],
             summary="Add files or a web page to the knowledge base",
             openapi_extra=_BODIES,
             responses={415: {"model": ErrorResponse,
                              "description": "A file of a type that cannot be read."}})
async def add_documents(request: Request, response: Response, who: ApiCaller,
                        services: Services) -> DocumentsAccepted:
    if not services.jobs.adds_documents:
        raise ApiError(503, "unavailable", "this server adds no documents", retryable=False)
    await admit(services, who)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    try:
        if kind == "multipart/form-data":
            files = await _files_of(request, services.jobs.documents)
            job = await services.jobs.add_files(who.tenant, who.user, "api", files)
        elif kind == "application/json":
            asked = _url_of(await request.body())
            crawl = asked.crawl
            job = await services.jobs.add_url(
                who.tenant, who.user, "api", asked.url,
                crawl.max_pages if crawl else 1, crawl.max_depth if crawl else 2)
        else:
            raise ApiError(415, "unsupported_type", "send files as multipart/form-data "
                           "(field `file`) or a URL as application/json ({\"url\": ...})")
    except DocumentRefusedError as error:
        status, error_kind = _REFUSALS[error.reason]
        raise ApiError(status, error_kind, str(error)) from None
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return DocumentsAccepted(documents=_queued(job), job_id=job.id, status=JobStatus.PENDING,
                             links=links_of(job.id, services.links))


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
        chunks=document.chunks, words=document.words, pages=document.pages,
        status="indexed", added_at=document.indexed_at, added_by=document.added_by)


async def _files_of(request: Request, adder: DocumentAdder) -> list[tuple[str, bytes]]:
    """The files of the form's `file` field (Starlette spools each to disk as it arrives);
    one too large is refused before it is read into memory."""
    try:
        form = await request.form(max_files=MAX_FILES, max_fields=10)
    except StarletteHTTPException as error:  # too many files or fields, a broken form
        raise ApiError(400, "invalid_request", str(error.detail)) from None
    try:
        sent = [item for item in form.getlist("file") if isinstance(item, UploadFile)]
        if not sent:
            raise ApiError(400, "invalid_request", "send the files in the form field `file`")
        for item in sent:
            if item.size is not None:
                adder.check_size(item.filename or "a file", item.size)
        return [(item.filename or "", await item.read()) for item in sent]
    finally:
        await form.close()


def _url_of(body: bytes) -> AddUrl:
    """The JSON body, validated as FastAPI validates a declared one (422 naming the fields)."""
    try:
        return AddUrl.model_validate_json(body)
    except ValidationError as error:
        raise RequestValidationError(error.errors()) from None


def _queued(job: Job) -> list[DocumentQueued]:
    request = job.request
    assert isinstance(request, DocumentsRequest)
    if request.url:
        return [DocumentQueued(document_id=file_id_of(page_key(request.url)),
                               name=request.url, status="queued")]
    return [DocumentQueued(document_id=file_id_of(upload.key), name=upload.filename,
                           status="queued") for upload in request.uploads]


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
