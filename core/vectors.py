"""Chroma collections (embedded PersistentClient or a Chroma server), with our own vectors."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ConfigurationError, StoreError


def open_chroma(path: Path | None, url: str | None) -> Any:
    """A chroma client: HttpClient for `url`, else a PersistentClient under `path`."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if url:
        from urllib.parse import urlparse

        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigurationError(f"knowledge_base.chroma_url: not an http(s) URL: {url!r}")
        return chromadb.HttpClient(
            host=parsed.hostname,
            port=parsed.port or (443 if parsed.scheme == "https" else 8000),
            ssl=parsed.scheme == "https",
            settings=settings,
        )
    if path is None:
        raise ConfigurationError("a chroma path or URL is needed")
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=settings)


@dataclass
class VectorHit:
    id: str
    similarity: float
    metadata: dict[str, Any]
    document: str | None


class VectorCollection:
    """One cosine-space collection; every call runs in a worker thread."""

    def __init__(self, client: Any, purpose: str, tenant: str) -> None:
        self._client = client
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:24]
        self.name = f"{purpose}_{digest}"
        self._collection: Any = None

    async def _get(self) -> Any:
        if self._collection is None:
            self._collection = await asyncio.to_thread(
                self._client.get_or_create_collection,
                name=self.name,
                metadata={"hnsw:space": "cosine"},
                embedding_function=None,
            )
        return self._collection

    async def upsert(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, Any]],
        documents: Sequence[str] | None = None,
    ) -> None:
        if not ids:
            return
        collection = await self._get()
        limit = self._client.get_max_batch_size()
        for start in range(0, len(ids), limit):
            end = start + limit
            await self._call(
                collection.upsert,
                ids=list(ids[start:end]),
                embeddings=vectors[start:end].tolist(),
                metadatas=list(metadatas[start:end]),
                documents=list(documents[start:end]) if documents is not None else None,
            )

    async def delete(self, where: dict[str, Any]) -> None:
        collection = await self._get()
        await self._call(collection.delete, where=where)

    async def query(
        self, vector: np.ndarray, limit: int, where: dict[str, Any] | None = None
    ) -> list[VectorHit]:
        collection = await self._get()
        result = await self._call(
            collection.query,
            query_embeddings=[vector.tolist()],
            n_results=limit,
            where=where,
            include=["distances", "metadatas", "documents"],
        )
        return [
            VectorHit(id=i, similarity=1.0 - float(d), metadata=dict(m or {}), document=doc)
            for i, d, m, doc in zip(
                result["ids"][0],
                result["distances"][0],
                result["metadatas"][0],
                (result.get("documents") or [[None] * len(result["ids"][0])])[0],
                strict=True,
            )
        ]

    async def get(self, ids: Sequence[str], with_vectors: bool = False) -> dict[str, Any]:
        collection = await self._get()
        include = ["metadatas", "documents"] + (["embeddings"] if with_vectors else [])
        return dict(await self._call(collection.get, ids=list(ids), include=include))

    async def count(self) -> int:
        collection = await self._get()
        return int(await self._call(collection.count))

    @staticmethod
    async def _call(function: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(function, **kwargs)
        except Exception as error:  # chromadb raises many types; all mean the store failed
            raise StoreError(f"vector store: {error}") from error
