"""Files sent to be added to the knowledge base (the API's uploads, a chat's attachments),
kept from the request that sent them until the documents job that reads them has ended.
In the job database, so that a worker on another machine reads what the front end took in,
and a job resumed after a restart finds its files still there."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from core.models import DocumentUpload, utcnow
from core.store.database import kb_uploads


class UploadStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def keep(self, tenant: str, filename: str, data: bytes) -> DocumentUpload:
        """Store a file sent by a tenant; what a documents request names it by."""
        upload = DocumentUpload(upload_id=uuid.uuid4().hex, filename=filename, size=len(data))
        async with self._engine.begin() as connection:
            await connection.execute(kb_uploads.insert().values(
                id=upload.upload_id, tenant=tenant, filename=filename, data=data,
                created_at=utcnow()))
        return upload

    async def read(self, tenant: str, upload_id: str) -> bytes | None:
        """The file's bytes (None once it is gone, or for another tenant's id)."""
        query = select(kb_uploads.c.data).where(kb_uploads.c.id == upload_id,
                                                kb_uploads.c.tenant == tenant)
        async with self._engine.connect() as connection:
            data = await connection.scalar(query)
        return None if data is None else bytes(data)

    async def discard(self, upload_ids: list[str]) -> None:
        """The job that read them has ended."""
        if not upload_ids:
            return
        async with self._engine.begin() as connection:
            await connection.execute(delete(kb_uploads).where(kb_uploads.c.id.in_(upload_ids)))

    async def discard_older(self, before: datetime) -> int:
        """Files no job read (their job failed before it began, or was lost): how many."""
        async with self._engine.begin() as connection:
            result = await connection.execute(
                delete(kb_uploads).where(kb_uploads.c.created_at < before))
        return int(result.rowcount or 0)
