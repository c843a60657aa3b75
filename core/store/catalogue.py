"""The knowledge-base catalogue: each tenant's indexed files, their chunks, the tenant's
generation (its count of catalogue changes) and the files whose vectors may be left over.

Every statement on kb_files, kb_chunks, kb_generations and kb_pending is here. The rows it
returns are typed; what they mean to indexing and search is core.retrieval.kb's business.

Forgetting a file records it in kb_pending in the same transaction, and writing its rows back
(or settling a removal) clears it, so a run killed in between leaves a record of the vectors
to delete (core.retrieval.kb.indexer).
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from core.models import utcnow
from core.store.database import (
    kb_chunks,
    kb_files,
    kb_generations,
    kb_pending,
    kb_removed_pages,
    kb_sites,
    upsert_into,
)
from core.store.full_disk import full_disk_error

_MAX_TITLE_CHARS = 1000


# Built once (read on every question: the answer cache's scope)
_GENERATION = select(kb_generations.c.generation).where(
    kb_generations.c.tenant == bindparam("tenant"))


@dataclass(frozen=True, slots=True)
class CatalogueFile:
    """A file as an index run catalogues it."""

    path: str
    file_id: str
    sha256: str
    title: str
    author: str | None
    published: str | None
    words: int
    pages: int | None = None  # a PDF's pages, a deck's slides, a workbook's sheets
    added_by: str | None = None  # an API key's name, a chat user


@dataclass(frozen=True, slots=True)
class CatalogueDocument:
    """A catalogued file as a person manages it: its id (the file id its chunks and vectors
    carry), where it came from, what it is called, and how much of it is indexed."""

    document_id: str
    path: str
    title: str
    author: str | None
    published: str | None
    chunks: int
    words: int
    indexed_at: datetime
    pages: int | None = None
    added_by: str | None = None

    @property
    def origin(self) -> str:
        """url: read from the web; upload: sent to the API; path: a file on the server."""
        if self.path.startswith(("http://", "https://")):
            return "url"
        return "upload" if self.path.startswith("upload:") else "path"


@dataclass(frozen=True, slots=True)
class CatalogueChunk:
    """One chunk of a catalogued file; `id` is also its vector's id."""

    id: str
    ordinal: int
    text: str
    location: str | None


@dataclass(frozen=True, slots=True)
class Passage:
    """A catalogued chunk with what a citation needs from its file."""

    id: str
    file_id: str
    text: str
    location: str | None
    path: str
    title: str
    author: str | None
    published: str | None


@dataclass(frozen=True, slots=True)
class PendingFile:
    """A file whose rows were forgotten while its vectors may still be stored."""

    file_id: str
    worker: str
    since: datetime


@dataclass(frozen=True, slots=True)
class CatalogueSite:
    """A web page or site indexed from its URL, read again by a refresh."""

    tenant: str
    url: str
    max_pages: int
    depth: int
    refreshed_at: datetime


class CatalogueSize(NamedTuple):
    files: int
    chunks: int


_DOCUMENT = (kb_files.c.file_id, kb_files.c.path, kb_files.c.title, kb_files.c.author,
             kb_files.c.published, kb_files.c.chunks, kb_files.c.words, kb_files.c.indexed_at,
             kb_files.c.pages, kb_files.c.added_by)


def _document(row: Any) -> CatalogueDocument:
    return CatalogueDocument(row.file_id, row.path, row.title, row.author, row.published,
                             row.chunks, row.words, _aware(row.indexed_at), row.pages,
                             row.added_by)



class KnowledgeCatalogue:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        # one store of a file at a time through this catalogue (see `file_lock`)
        self._file_locks: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = \
            weakref.WeakValueDictionary()

    # ---- reading --------------------------------------------------------------------------

    async def generation(self, tenant: str) -> int:
        """How many times the tenant's catalogue changed (0: never indexed)."""
        async with self._engine.connect() as connection:
            value = await connection.scalar(_GENERATION, {"tenant": tenant})
        return int(value or 0)

    async def fingerprints(self, tenant: str) -> dict[str, str]:
        """Each catalogued file's path and content hash."""
        query = select(kb_files.c.path, kb_files.c.sha256).where(kb_files.c.tenant == tenant)
        async with self._engine.connect() as connection:
            return {row.path: row.sha256 for row in await connection.execute(query)}

    async def fingerprint(self, tenant: str, path: str) -> str | None:
        """The content hash the file is catalogued with; None when it is not."""
        query = select(kb_files.c.sha256).where(kb_files.c.tenant == tenant,
                                                kb_files.c.path == path)
        async with self._engine.connect() as connection:
            return await connection.scalar(query)

    @asynccontextmanager
    async def file_lock(self, tenant: str, file_id: str) -> AsyncIterator[None]:
        """Held while a file's rows and vectors are replaced or removed, which takes several
        writes: two index runs storing one file at once (an upload and a chat file, two
        workers) would interleave them. Taken in this process, and on PostgreSQL across
        processes too (a session advisory lock on a connection of its own)."""
        lock = self._file_locks.setdefault((tenant, file_id), asyncio.Lock())
        async with lock:
            if self._engine.dialect.name != "postgresql":
                yield
                return
            key = int.from_bytes(hashlib.sha256(f"{tenant}\0{file_id}".encode()).digest()[:8],
                                 "big", signed=True)
            async with self._engine.connect() as connection:
                await connection.execute(select(func.pg_advisory_lock(key)))
                await connection.commit()  # the lock is the session's: no transaction left open
                try:
                    yield
                finally:
                    await connection.execute(select(func.pg_advisory_unlock(key)))
                    await connection.commit()

    async def documents(self, tenant: str, limit: int | None = None,
                        after: str = "") -> list[CatalogueDocument]:
        """The tenant's documents by path, those after path `after` (a page's cursor)."""
        query = select(*_DOCUMENT).where(kb_files.c.tenant == tenant, kb_files.c.path > after) \
            .order_by(kb_files.c.path).limit(limit)
        async with self._engine.connect() as connection:
            return [_document(row) for row in await connection.execute(query)]

    async def document(self, tenant: str, document_id: str) -> CatalogueDocument | None:
        """The tenant's document `document_id` (None for an unknown id or another tenant's)."""
        query = select(*_DOCUMENT).where(kb_files.c.tenant == tenant,
                                         kb_files.c.file_id == document_id)
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return None if row is None else _document(row)

    async def size(self, tenant: str) -> CatalogueSize:
        query = select(func.count(), func.coalesce(func.sum(kb_files.c.chunks), 0)) \
            .where(kb_files.c.tenant == tenant)
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).one()
        return CatalogueSize(int(row[0]), int(row[1]))

    async def passage_ids(self, tenant: str) -> list[str]:
        """The ids of every chunk of the tenant, in the order of `passages` (read from the
        key's index alone: no chunk's text is read)."""
        query = select(kb_chunks.c.id).where(kb_chunks.c.tenant == tenant) \
            .order_by(kb_chunks.c.id)
        async with self._engine.connect() as connection:
            return list((await connection.execute(query)).scalars())

    async def passages(self, tenant: str) -> list[Passage]:
        """Every chunk of the tenant with its file, by id."""
        query = (
            select(kb_chunks.c.id, kb_chunks.c.file_id, kb_chunks.c.text, kb_chunks.c.location,
                   kb_files.c.path, kb_files.c.title, kb_files.c.author, kb_files.c.published)
            .join(kb_files, (kb_files.c.tenant == kb_chunks.c.tenant)
                  & (kb_files.c.file_id == kb_chunks.c.file_id))
            .where(kb_chunks.c.tenant == tenant)
            .order_by(kb_chunks.c.id)
        )
        async with self._engine.connect() as connection:
            return [Passage(*row) for row in await connection.execute(query)]

    async def passages_by_id(self, tenant: str, ids: Iterable[str]) -> dict[str, Passage]:
        """Those of `ids` whose chunks are catalogued, each with its passage.

        Two look-ups by key rather than a join: joined, PostgreSQL without statistics (a
        catalogue just written) planned a walk through every file of the tenant, and so
        every chunk, for each search."""
        wanted = list(ids)
        if not wanted:
            return {}
        chunks = select(kb_chunks.c.id, kb_chunks.c.file_id, kb_chunks.c.text,
                        kb_chunks.c.location) \
            .where(kb_chunks.c.tenant == tenant, kb_chunks.c.id.in_(wanted))
        async with self._engine.connect() as connection:
            found = (await connection.execute(chunks)).all()
            files = select(kb_files.c.file_id, kb_files.c.path, kb_files.c.title,
                           kb_files.c.author, kb_files.c.published) \
                .where(kb_files.c.tenant == tenant,
                       kb_files.c.file_id.in_({row.file_id for row in found}))
            of_file = {row.file_id: row[1:] for row in await connection.execute(files)}
        # A chunk is catalogued with its file, in one transaction: one without is going.
        return {row.id: Passage(*row, *of_file[row.file_id]) for row in found
                if row.file_id in of_file}

    async def chunk_ids(self, tenant: str, file_id: str) -> set[str]:
        """The ids of a file's catalogued chunks."""
        query = select(kb_chunks.c.id).where(kb_chunks.c.tenant == tenant,
                                             kb_chunks.c.file_id == file_id)
        async with self._engine.connect() as connection:
            return set((await connection.execute(query)).scalars())

    async def pending(self, tenant: str) -> list[PendingFile]:
        query = select(kb_pending.c.file_id, kb_pending.c.worker, kb_pending.c.since) \
            .where(kb_pending.c.tenant == tenant)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [PendingFile(row.file_id, row.worker, _aware(row.since)) for row in rows]

    async def sites(self, tenant: str | None = None) -> list[CatalogueSite]:
        """The sites indexed from a URL (a tenant's, or every tenant's), least recently
        refreshed first."""
        query = select(kb_sites.c.tenant, kb_sites.c.url, kb_sites.c.max_pages,
                       kb_sites.c.depth, kb_sites.c.refreshed_at) \
            .order_by(kb_sites.c.refreshed_at, kb_sites.c.tenant, kb_sites.c.url)
        if tenant is not None:
            query = query.where(kb_sites.c.tenant == tenant)
        async with self._engine.connect() as connection:
            return [CatalogueSite(row.tenant, row.url, row.max_pages, row.depth,
                                  _aware(row.refreshed_at))
                    for row in await connection.execute(query)]

    # ---- writing --------------------------------------------------------------------------

    async def add_site(self, tenant: str, url: str, max_pages: int, depth: int) -> None:
        """Record (or update) a site just indexed from `url`."""
        now = utcnow()
        async with self._writing() as connection:
            statement = upsert_into(kb_sites, connection).values(
                tenant=tenant, url=url, max_pages=max_pages, depth=depth, added_at=now,
                refreshed_at=now)
            await connection.execute(statement.on_conflict_do_update(
                index_elements=["tenant", "url"],
                set_={"max_pages": max_pages, "depth": depth, "refreshed_at": now}))

    async def claim_site(self, site: CatalogueSite, due_before: datetime | None) -> bool:
        """Mark the site refreshed now; with `due_before`, only if it was last refreshed
        before then (False: another process took it, or it is not due)."""
        query = update(kb_sites).where(kb_sites.c.tenant == site.tenant,
                                       kb_sites.c.url == site.url)
        if due_before is not None:
            query = query.where(kb_sites.c.refreshed_at < due_before)
        async with self._writing() as connection:
            result = await connection.execute(query.values(refreshed_at=utcnow()))
        return bool(result.rowcount)

    async def removed_pages(self, tenant: str) -> set[str]:
        """The pages a person removed, which crawls and refreshes leave out."""
        query = select(kb_removed_pages.c.url).where(kb_removed_pages.c.tenant == tenant)
        async with self._engine.connect() as connection:
            return {row.url for row in await connection.execute(query)}

    async def remove_page(self, tenant: str, url: str) -> None:
        """A person removed the page: no crawl or refresh adds it again."""
        async with self._writing() as connection:
            statement = upsert_into(kb_removed_pages, connection).values(
                tenant=tenant, url=url, removed_at=utcnow())
            await connection.execute(statement.on_conflict_do_nothing(
                index_elements=["tenant", "url"]))

    async def allow_page(self, tenant: str, url: str) -> None:
        """The page was asked for by its own URL: crawls may add it again."""
        async with self._writing() as connection:
            await connection.execute(delete(kb_removed_pages).where(
                kb_removed_pages.c.tenant == tenant, kb_removed_pages.c.url == url))

    async def forget_site(self, tenant: str, url: str) -> None:
        async with self._writing() as connection:
            await connection.execute(delete(kb_sites).where(kb_sites.c.tenant == tenant,
                                                            kb_sites.c.url == url))

    async def forget_file(self, tenant: str, path: str, file_id: str, worker: str) -> None:
        """Remove the file's rows and record, for `worker`, that its vectors may be left."""
        async with self._writing() as connection:
            await _delete_file_rows(connection, tenant, path, file_id)
            record = {"worker": worker, "since": utcnow()}
            statement = upsert_into(kb_pending, connection).values(
                tenant=tenant, file_id=file_id, **record)
            await connection.execute(statement.on_conflict_do_update(
                index_elements=["tenant", "file_id"], set_=record))
            await _next_generation(connection, tenant)

    async def add_file(self, tenant: str, file: CatalogueFile,
                       chunks: list[CatalogueChunk]) -> None:
        """Catalogue a file whose vectors are all stored, and settle its pending record. Rows
        of the file already there are replaced: the last run to store it wins."""
        async with self._writing() as connection:
            await _delete_file_rows(connection, tenant, file.path, file.file_id)
            await connection.execute(kb_chunks.insert(), [
                {"tenant": tenant, "file_id": file.file_id, "id": chunk.id,
                 "ordinal": chunk.ordinal, "text": chunk.text, "location": chunk.location}
                for chunk in chunks
            ])
            await connection.execute(kb_files.insert().values(
                tenant=tenant, path=file.path, file_id=file.file_id, sha256=file.sha256,
                title=file.title[:_MAX_TITLE_CHARS], author=file.author,
                published=file.published, chunks=len(chunks), words=file.words,
                indexed_at=utcnow(), pages=file.pages, added_by=file.added_by))
            await _settle(connection, tenant, file.file_id)
            await _next_generation(connection, tenant)

    async def settle(self, tenant: str, file_id: str) -> None:
        """The file's left-over vectors are gone: forget its pending record."""
        async with self._writing() as connection:
            await _settle(connection, tenant, file_id)

    async def settle_pending(self, tenant: str, pending: PendingFile) -> None:
        """Like `settle`, unless another worker recorded the file since it was read."""
        async with self._writing() as connection:
            await connection.execute(delete(kb_pending).where(
                kb_pending.c.tenant == tenant, kb_pending.c.file_id == pending.file_id,
                kb_pending.c.worker == pending.worker))

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncConnection]:
        """A transaction; a full disk under it is one clear StoreError."""
        try:
            async with self._engine.begin() as connection:
                yield connection
        except DBAPIError as error:
            full = full_disk_error("catalogue", error, self._sqlite_folder())
            if full is None:
                raise
            raise full from error

    def _sqlite_folder(self) -> Path | None:
        database = self._engine.url.database if self._engine.dialect.name == "sqlite" else None
        return Path(database).parent if database else None


async def _delete_file_rows(connection: AsyncConnection, tenant: str, path: str,
                            file_id: str) -> None:
    await connection.execute(
        delete(kb_files).where(kb_files.c.tenant == tenant, kb_files.c.path == path))
    await connection.execute(delete(kb_chunks).where(
        kb_chunks.c.tenant == tenant, kb_chunks.c.file_id == file_id))


async def _settle(connection: AsyncConnection, tenant: str, file_id: str) -> None:
    await connection.execute(delete(kb_pending).where(kb_pending.c.tenant == tenant,
                                                      kb_pending.c.file_id == file_id))


async def _next_generation(connection: AsyncConnection, tenant: str) -> None:
    statement = upsert_into(kb_generations, connection).values(tenant=tenant, generation=1)
    await connection.execute(statement.on_conflict_do_update(
        index_elements=["tenant"], set_={"generation": kb_generations.c.generation + 1}))


def _aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they were written in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
