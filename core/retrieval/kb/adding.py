"""Adding documents to a tenant's knowledge base as a job: files sent (the API's uploads, a
chat's attachments) or a web page and its site. The job service runs it as it runs research:

    admit_files / admit_url   refuse at once what cannot be added (too large, a type it cannot
                              read, a URL it may not fetch): nothing stored, nothing queued
    run(request, sink)        read and index them, reporting each file to the progress sink;
                              questions asked meanwhile are answered from what is indexed so far

Uploaded files wait in the job database (core.store.uploads) until their job has read them, so
a worker on another machine can run the job, and a job taken up again after a restart finds
them. What they say is untrusted like any web page: search passes it to the model fenced."""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from core.config import KnowledgeBaseSettings
from core.errors import DocumentRefusedError, FetchError
from core.models import (
    AddedDocument,
    DocumentsOutcome,
    DocumentsRequest,
    DocumentUpload,
    Stage,
    StageEvent,
    utcnow,
)
from core.retrieval.kb.documents import SUPPORTED_SUFFIXES
from core.retrieval.kb.indexer import IndexReport, SentFile, file_id_of
from core.store.uploads import UploadStore

if TYPE_CHECKING:
    from core.retrieval.kb.knowledge_base import KnowledgeBase
    from core.web.fetch import PageFetcher

ProgressSink = Callable[[StageEvent], Awaitable[None]]
FetcherFactory = Callable[[], AbstractAsyncContextManager["PageFetcher"]]

MAX_FILES = 20  # a request's files
MAX_FILENAME_CHARS = 200
MAX_CRAWL_PAGES = 500
_UNSAFE = re.compile(r"[\x00-\x1f\x7f<>:\"|?*]")


class DocumentAdder:
    def __init__(self, knowledge_base: KnowledgeBase, uploads: UploadStore,
                 open_fetcher: FetcherFactory, settings: KnowledgeBaseSettings) -> None:
        """`open_fetcher` opens the guarded page fetcher (core.web.fetch) for a URL's job."""
        self._knowledge_base = knowledge_base
        self._uploads = uploads
        self._open_fetcher = open_fetcher
        self._settings = settings
        self._indexing = asyncio.Lock()

    @property
    def max_bytes(self) -> int:
        """The largest file accepted (advanced.knowledge_base.max_file_mb)."""
        return int(self._settings.max_file_mb * 1024 * 1024)

    async def admit_files(self, tenant: str, files: list[tuple[str, bytes]]
                          ) -> list[DocumentUpload]:
        """Keep files sent by a tenant for their job, each under a safe name; all of them
        or none: DocumentRefusedError when one is too large, of a type that cannot be read,
        or when there are none or too many."""
        if not files:
            raise DocumentRefusedError("no file was sent", "invalid")
        if len(files) > MAX_FILES:
            raise DocumentRefusedError(f"at most {MAX_FILES} files at a time", "invalid")
        named = [(safe_filename(name), data) for name, data in files]
        for name, data in named:
            self.check_size(name, len(data))
            suffix = PurePosixPath(name).suffix.lower()
            if suffix not in SUPPORTED_SUFFIXES:
                raise DocumentRefusedError(
                    f"{name}: {suffix or 'a file without a type'} cannot be read; send "
                    f"{supported_types()}", "unsupported")
            if not data:
                raise DocumentRefusedError(f"{name} is empty", "invalid")
        return [await self._uploads.keep(tenant, name, data) for name, data in named]

    def check_size(self, name: str, size: int) -> None:
        """DocumentRefusedError when a file of `size` bytes is too large to add (a front end
        asks before it downloads or reads a file; `admit_files` asks again)."""
        if size > self.max_bytes:
            raise DocumentRefusedError(
                f"{name} is larger than the {self._settings.max_file_mb:g} MB a file may be "
                "(advanced.knowledge_base.max_file_mb)", "too_large")

    async def admit_url(self, url: str, max_pages: int) -> str:
        """The URL to read, once the guarded fetcher may read it (http(s), no private
        address, robots.txt allows it): DocumentRefusedError saying why not."""
        if max_pages > MAX_CRAWL_PAGES:
            raise DocumentRefusedError(f"at most {MAX_CRAWL_PAGES} pages a site", "invalid")
        async with self._open_fetcher() as fetcher:
            try:
                return await fetcher.admissible(url)
            except FetchError as error:
                raise DocumentRefusedError(str(error), "not_allowed") from None

    async def discard(self, request: DocumentsRequest) -> None:
        """The job has read its files, or will not (it failed): they are not kept."""
        await self._uploads.discard([upload.upload_id for upload in request.uploads])

    async def discard_stale(self, older_than: timedelta) -> int:
        """Files kept longer than a job may wait (their job failed as stale, was cancelled or
        given up): how many were discarded."""
        return await self._uploads.discard_older(utcnow() - older_than)

    async def run(self, request: DocumentsRequest, sink: ProgressSink) -> DocumentsOutcome:
        """Index what `request` sends, each file's or page's fate in the outcome. The
        documents jobs of one process index one at a time (embedding takes every core: ten
        jobs at once took longer than one after another)."""
        outcome = DocumentsOutcome()
        if self._indexing.locked():
            await sink(StageEvent(stage=Stage.INDEX, kind="started", progress=0.0,
                                  message="Waiting for the documents sent before"))
        async with self._indexing:
            if request.uploads:
                outcome.documents += await self._read_uploads(request, sink)
            if request.url:
                outcome.documents += await self._read_site(request, sink)
        await self.discard(request)
        return outcome

    async def _read_uploads(self, request: DocumentsRequest, sink: ProgressSink
                            ) -> list[AddedDocument]:
        """The job's files, read from the job database and indexed in one run; a progress
        event a file, as each is done."""
        sent, gone = [], []
        for upload in request.uploads:
            data = await self._uploads.read(request.tenant, upload.upload_id)
            if data is None:  # an earlier attempt read it and ended
                gone.append((upload.key, "already read by an earlier attempt: send it again "
                             "if it is not listed"))
            else:
                sent.append(SentFile(upload.key, upload.filename, data))
        names = {upload.key: upload.filename for upload in request.uploads}
        total = len(sent)
        told: list[asyncio.Task[None]] = []

        def on_file(key: str, what: str) -> None:
            """Each file as it is done, in order (the sink's calls start in that order)."""
            told.append(asyncio.ensure_future(sink(StageEvent(
                stage=Stage.INDEX, kind="finished", progress=(len(told) + 1) / total,
                message=f"{what.capitalize()} {names.get(key, key)} ({len(told) + 1} of "
                        f"{total})"))))

        await sink(StageEvent(stage=Stage.INDEX, kind="started", progress=0.0,
                              message=f"Reading {total} file{'s' if total != 1 else ''}: "
                                      + ", ".join(names.get(f.key, f.key) for f in sent[:5])))
        report = await self._knowledge_base.index_sent(request.tenant, sent, on_file,
                                                       added_by=request.user or None)
        await asyncio.gather(*told)
        report.skipped += gone
        return _documents(report, names)

    async def _read_site(self, request: DocumentsRequest, sink: ProgressSink
                         ) -> list[AddedDocument]:
        assert request.url is not None
        pages = f"up to {request.max_pages} pages of " if request.max_pages > 1 else ""
        await sink(StageEvent(stage=Stage.INDEX, kind="started", progress=0.0,
                              message=f"Reading {pages}{request.url}"))
        async with self._open_fetcher() as fetcher:
            read = await self._knowledge_base.read_site(
                fetcher, request.tenant, request.url, request.max_pages, request.max_depth,
                added_by=request.user or None)
        report = read.report
        added = _documents(report, {})
        await sink(StageEvent(stage=Stage.INDEX, kind="finished", progress=1.0,
                              message=_said(added), counts={"chunks": report.chunks,
                                                            "pages": read.pages}))
        return added


def safe_filename(name: str) -> str:
    """A sent file's name as kept: its last path part only (never a folder: "../../etc/passwd"
    is "passwd"), without control or reserved characters, at most MAX_FILENAME_CHARS."""
    name = unicodedata.normalize("NFC", name or "").replace("\\", "/")
    base = PurePosixPath(name).name
    base = _UNSAFE.sub("", base).strip().lstrip(".")
    if len(base) > MAX_FILENAME_CHARS:
        suffix = PurePosixPath(base).suffix[:16]
        base = base[:MAX_FILENAME_CHARS - len(suffix)] + suffix
    return base or "upload"


def supported_types() -> str:
    return ", ".join(sorted(suffix.lstrip(".") for suffix in SUPPORTED_SUFFIXES))


def _documents(report: IndexReport, names: dict[str, str]) -> list[AddedDocument]:
    """Each file or page of an index run as a documents job tells it."""
    found = []
    for status, keys in (("added", report.added), ("updated", report.updated),
                         ("unchanged", report.unchanged), ("removed", report.removed)):
        for key in keys:
            stored = report.stored.get(key)
            found.append(AddedDocument(
                document_id=file_id_of(key), name=names.get(key, key), status=status,
                title=stored.title if stored else "", chunks=stored.chunks if stored else 0,
                pages=stored.pages if stored else None))
    for key, why in report.skipped:
        found.append(AddedDocument(document_id=file_id_of(key), name=names.get(key, key),
                                   status="skipped", reason=why))
    return found


def _said(documents: list[AddedDocument]) -> str:
    """A progress line: what became of a file, or of a site's pages."""
    if len(documents) == 1:
        document = documents[0]
        if document.status == "skipped":
            return f"Skipped {document.name}: {document.reason}"
        pages = f", {document.pages} pages" if document.pages else ""
        return f"{document.status.capitalize()} {document.title or document.name}{pages}"
    return "Pages: " + DocumentsOutcome(documents=documents).summary
