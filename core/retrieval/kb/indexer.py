"""Index a tenant's files: read, hash and chunk them, store their vectors and catalogue rows,
and remove the files that are gone.

Consistency: a changed file's catalogue rows are removed before its vectors change and written
back only after all of its vectors are stored. Search ignores vectors without catalogue rows,
so an index run stopped at any point leaves a store that answers from complete files. The
transaction that removes a file's rows also records the file as pending, and the one that
writes them back (or the end of a removal) clears it: the next index run first deletes the
vectors of recorded files that are not catalogued, so even a file removed from disk while its
removal was cut short (kill -9, power loss) leaves no vectors behind.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from core.config import KnowledgeBaseSettings
from core.errors import IndexingError, UnreadableDocumentError
from core.models import utcnow
from core.retrieval.embedding import Embedder
from core.retrieval.kb.chunking import Chunk, chunk_sections
from core.retrieval.kb.documents import (
    READER_VERSION,
    SUPPORTED_SUFFIXES,
    Document,
    read_document,
)
from core.retrieval.vectors import TenantCollections
from core.store.catalogue import CatalogueChunk, CatalogueFile, KnowledgeCatalogue

if TYPE_CHECKING:  # the web is loaded only to index pages (aiohttp with it)
    from core.web.fetch import FetchedPage

log = logging.getLogger(__name__)

FileEvent = Callable[[str, str], None]
WorkerAlive = Callable[[str], bool]

# A pending file older than this is finished whoever recorded it (its worker may have run on
# another host, where liveness cannot be checked); storing one file takes minutes at most.
_PENDING_GRACE = timedelta(hours=1)


@dataclass(frozen=True)
class SentFile:
    """A file sent to be indexed (an upload): kept under `key`, read as its `name` says."""

    key: str
    name: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class StoredFile:
    file_id: str
    title: str
    pages: int | None
    chunks: int


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0
    seconds: float = 0.0
    # each file added or updated, as read: what a reply to the person who sent it says
    stored: dict[str, StoredFile] = field(default_factory=dict)

    def absorb(self, other: IndexReport) -> None:
        """Add what another index run did to this report."""
        for name in ("added", "updated", "unchanged", "removed", "skipped"):
            getattr(self, name).extend(getattr(other, name))
        self.chunks += other.chunks
        self.seconds += other.seconds
        self.stored.update(other.stored)


@dataclass
class _ParsedFile:
    path: str
    sha256: str
    document: Document
    chunks: list[Chunk]


def file_id_of(path: str) -> str:
    """The id a file's catalogue rows and vectors carry: its path's, so a changed file
    replaces its earlier version."""
    return hashlib.sha256(path.encode()).hexdigest()[:20]


class Indexer:
    def __init__(
        self,
        catalogue: KnowledgeCatalogue,
        collections: TenantCollections,
        embedder: Embedder,
        settings: KnowledgeBaseSettings,
        worker: str = "",
        worker_alive: WorkerAlive | None = None,
    ) -> None:
        """`worker` names this process in the pending records; `worker_alive` tells whether a
        recorded worker may still be storing its file (by default none is: one index run at
        a time)."""
        self._catalogue = catalogue
        self._collections = collections
        self._embedder = embedder
        self._settings = settings
        self._worker = worker
        self._worker_alive = worker_alive or (lambda _worker: False)

    async def index(
        self, paths: list[Path], tenant: str, on_file: FileEvent | None = None
    ) -> IndexReport:
        started = time.perf_counter()
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise IndexingError(f"no such file or directory: {', '.join(missing)}")
        notify = on_file or (lambda _path, _what: None)
        report = IndexReport()
        roots = [p.resolve() for p in paths]
        await self.finish_interrupted(tenant)
        known = await self._catalogue.fingerprints(tenant)
        files = list(_walk(roots, report))
        seen = {str(path) for path in files}
        # Parsing the next file overlaps with embedding this one (ONNX releases the GIL).
        upcoming = self._parse_soon(files, 0, known)
        for number, path in enumerate(files):
            parsed = await upcoming
            upcoming = self._parse_soon(files, number + 1, known)
            await self._take(tenant, str(path), parsed, known, report, notify)
        upcoming.cancel()
        for gone in known:
            if gone not in seen and any(_is_under(Path(gone), root) for root in roots):
                await self.remove(tenant, gone)
                report.removed.append(gone)
                notify(gone, "removed")
        report.seconds = time.perf_counter() - started
        return report

    async def remove(self, tenant: str, path: str) -> None:
        """Take a file out of the tenant's catalogue and vectors."""
        file_id = file_id_of(path)
        async with self._catalogue.file_lock(tenant, file_id):
            await self._catalogue.forget_file(tenant, path, file_id, self._worker)
            await self._collections(tenant).delete(where={"file_id": file_id})
            await self._catalogue.settle(tenant, file_id)

    async def finish_interrupted(self, tenant: str) -> int:
        """Delete the vectors that an interrupted index run left without catalogue rows;
        the number deleted. Files another live index run is storing are left alone."""
        stale = utcnow() - _PENDING_GRACE
        deleted = 0
        for pending in await self._catalogue.pending(tenant):
            if self._worker_alive(pending.worker) and pending.since > stale:
                continue
            deleted += await self._delete_orphans(tenant, pending.file_id)
            await self._catalogue.settle_pending(tenant, pending)
        return deleted

    def _parse_soon(
        self, files: list[Path], number: int, known: dict[str, str]
    ) -> asyncio.Future[_ParsedFile | str]:
        if number >= len(files):
            done: asyncio.Future[_ParsedFile | str] = asyncio.get_running_loop().create_future()
            done.set_result("")
            return done
        return asyncio.ensure_future(asyncio.to_thread(self._parse, files[number], known))

    async def index_pages(self, pages: list[FetchedPage], failed: list[tuple[str, str]],
                          tenant: str, on_file: FileEvent | None = None,
                          added_by: str | None = None) -> IndexReport:
        """Index web pages (each kept under its URL): unchanged ones skipped, changed ones
        replaced; a page known before that is now gone (HTTP 404 or 410) is removed."""
        from core.web.crawl import page_key

        started = time.perf_counter()
        notify = on_file or (lambda _url, _what: None)
        report = IndexReport()
        await self.finish_interrupted(tenant)
        known = await self._catalogue.fingerprints(tenant)
        for page in pages:
            key = page_key(page.url)
            parsed = await asyncio.to_thread(self._parse_data, key, _reader_path(page),
                                             page.body, known)
            await self._take(tenant, key, parsed, known, report, notify, added_by)
        for url, why in failed:
            key = page_key(url)
            gone = why.endswith(("HTTP 404", "HTTP 410"))
            if gone and key in known:
                await self.remove(tenant, key)
                report.removed.append(key)
                notify(key, "removed")
            else:
                report.skipped.append((key, why))
                notify(key, "skipped")
        report.seconds = time.perf_counter() - started
        return report

    async def index_sent(self, tenant: str, sent: list[SentFile],
                         on_file: FileEvent | None = None, added_by: str | None = None
                         ) -> IndexReport:
        """Index files sent rather than found on disk (uploads), each kept under its key;
        as `index` does, the next file is read while this one is embedded."""
        started = time.perf_counter()
        notify = on_file or (lambda _key, _what: None)
        report = IndexReport()
        await self.finish_interrupted(tenant)
        known = await self._catalogue.fingerprints(tenant)

        def parse_soon(number: int) -> asyncio.Future[_ParsedFile | str] | None:
            if number >= len(sent):
                return None
            return asyncio.ensure_future(asyncio.to_thread(self._parse_sent, sent[number],
                                                           known))

        upcoming = parse_soon(0)
        for number, item in enumerate(sent):
            assert upcoming is not None
            parsed = await upcoming
            upcoming = parse_soon(number + 1)
            await self._take(tenant, item.key, parsed, known, report, notify, added_by)
        report.seconds = time.perf_counter() - started
        return report

    def _parse_sent(self, item: SentFile, known: dict[str, str]) -> _ParsedFile | str:
        if len(item.data) > self._settings.max_file_mb * 1024 * 1024:
            return f"larger than {self._settings.max_file_mb:g} MB"
        suffix = Path(item.name).suffix.lower()
        if suffix not in SUPPORTED_SUFFIXES:
            return f"unsupported file type {suffix or '(none)'!r}"
        return self._parse_data(item.key, Path(item.name), item.data, known)

    async def _take(self, tenant: str, key: str, parsed: _ParsedFile | str,
                    known: dict[str, str], report: IndexReport, notify: FileEvent,
                    added_by: str | None = None) -> None:
        """Store a parsed file or page (kept under `key`), or record why not."""
        if parsed == "unchanged":
            report.unchanged.append(key)
            notify(key, "unchanged")
            return
        if isinstance(parsed, str):
            report.skipped.append((key, parsed))
            notify(key, "skipped")
            if key in known:  # what it said before is no longer what it says
                await self.remove(tenant, key)
                report.removed.append(key)
            return
        async with self._catalogue.file_lock(tenant, file_id_of(key)):
            if await self._catalogue.fingerprint(tenant, key) == parsed.sha256:
                # another run stored this very content while this one read it
                report.unchanged.append(key)
                notify(key, "unchanged")
                return
            await self._store(tenant, parsed, added_by)
        report.stored[key] = StoredFile(file_id_of(key), parsed.document.title,
                                        parsed.document.pages, len(parsed.chunks))
        (report.updated if key in known else report.added).append(key)
        report.chunks += len(parsed.chunks)
        notify(key, "updated" if key in known else "added")

    def _parse(self, path: Path, known: dict[str, str]) -> _ParsedFile | str:
        """The parsed file, or "unchanged", or why it is skipped."""
        limit = int(self._settings.max_file_mb * 1024 * 1024)
        try:
            if path.stat().st_size > limit:
                return f"larger than {self._settings.max_file_mb} MB"
            data = path.read_bytes()
        except OSError as error:
            return f"unreadable: {error.strerror or error}"
        return self._parse_data(str(path), path, data, known)

    def _parse_data(self, key: str, reader_path: Path, data: bytes,
                    known: dict[str, str]) -> _ParsedFile | str:
        """`data` parsed as the file `reader_path` names (its suffix picks the reader), kept
        under `key`: a path or a URL."""
        digest = hashlib.sha256(READER_VERSION.encode() + b"\0" + data).hexdigest()
        if known.get(key) == digest:
            return "unchanged"
        try:
            document = read_document(reader_path, data)
        except UnreadableDocumentError as error:
            return str(error)
        chunks = chunk_sections(
            document.sections, self._settings.chunk_tokens, self._settings.overlap_tokens
        )
        if not chunks:
            return "no text"
        return _ParsedFile(key, digest, document, chunks)

    async def _store(self, tenant: str, parsed: _ParsedFile, added_by: str | None) -> None:
        file_id = file_id_of(parsed.path)
        texts = [_embedding_text(parsed.document.title, c) for c in parsed.chunks]
        vectors = await asyncio.to_thread(self._embedder.embed, texts)
        ids = [f"{file_id}-{parsed.sha256[:8]}-{c.ordinal}" for c in parsed.chunks]
        await self._catalogue.forget_file(tenant, parsed.path, file_id, self._worker)
        collection = self._collections(tenant)
        await collection.delete(where={"file_id": file_id})
        await collection.upsert(ids, vectors, [{"file_id": file_id} for _ in ids])
        document = parsed.document
        await self._catalogue.add_file(
            tenant,
            CatalogueFile(path=parsed.path, file_id=file_id, sha256=parsed.sha256,
                          title=document.title, author=document.author,
                          published=document.published,
                          words=sum(len(c.text.split()) for c in parsed.chunks),
                          pages=document.pages, added_by=added_by),
            [CatalogueChunk(id=chunk_id, ordinal=chunk.ordinal, text=chunk.text,
                            location=chunk.location)
             for chunk_id, chunk in zip(ids, parsed.chunks, strict=True)],
        )

    async def _delete_orphans(self, tenant: str, file_id: str) -> int:
        catalogued = await self._catalogue.chunk_ids(tenant, file_id)
        collection = self._collections(tenant)
        orphans = [i for i in await collection.ids({"file_id": file_id}) if i not in catalogued]
        await collection.delete_ids(orphans)
        if orphans:
            log.info("deleted %d vectors an interrupted index run left", len(orphans))
        return len(orphans)


def _reader_path(page: FetchedPage) -> Path:
    """A file name for the page's reader: its suffix from the content type, its name from
    the URL's last segment (a PDF without a title is called by it)."""
    from core.web.fetch import PAGE_TYPES

    parts = urlsplit(page.final_url)
    stem = Path(unquote(parts.path.rstrip("/"))).stem or parts.hostname or "page"
    return Path(stem + PAGE_TYPES[page.content_type])


def _embedding_text(title: str, chunk: Chunk) -> str:
    heading = " > ".join(chunk.headings[-2:])
    prefix = f"{title}: {heading}" if heading and heading != title else title
    return f"{prefix}\n{chunk.text}"


def _is_under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _walk(roots: list[Path], report: IndexReport) -> Iterator[Path]:
    """Supported files under the roots, in a stable order, hidden files and folders left out."""
    seen: set[Path] = set()
    for root in roots:
        for path in _files_under(root):
            if path in seen:
                continue
            seen.add(path)
            if path.suffix.lower() in SUPPORTED_SUFFIXES:
                yield path
            elif path == root:
                report.skipped.append((str(path), f"unsupported file type {path.suffix!r}"))


def _files_under(root: Path) -> Iterator[Path]:
    if not root.is_dir():
        yield root
        return
    for directory, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(directory) / name
