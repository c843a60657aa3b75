"""Chroma collections (embedded PersistentClient or a Chroma server), with our own vectors.

Several processes on one machine may share the embedded store: a chat bot keeps answering
while `researchbot index` adds, changes and removes documents, and two `ask` runs write the
answer cache at once. Chroma itself is not built for that: each process keeps a collection's
HNSW index in memory, never notices another process's writes, and a long-lived reader then
fails on the ids it does not know ("Error finding id"). `SharedLocalChroma` makes it safe:

- a file lock in the chroma folder, shared around each read and exclusive around each write
  batch (never a whole index run), so no process loads index files while another writes them;
  the kernel drops it when a holder dies, even by kill -9;
- a write counter in that lock file, bumped before every write, so a process that was killed
  half-way through a write still tells the others that the files changed;
- a process that sees the counter move reopens its client (a chroma System of its own), which
  reloads the on-disk state, before it reads or writes.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import (
    ConfigurationError,
    ResearchBotError,
    StoreError,
    VectorStoreUnavailableError,
)
from core.store.full_disk import full_disk_error

_LOCK_FILE = "researchbot-writes.lock"


def open_chroma(path: Path | None, url: str | None) -> VectorStore:
    """A Chroma server's client for `url`, else the embedded store under `path`."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if url:
        from urllib.parse import urlparse

        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigurationError(f"knowledge_base.chroma_url: not an http(s) URL: {url!r}")
        try:  # the client greets the server at once
            client = chromadb.HttpClient(
                host=parsed.hostname,
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=settings,
            )
        except Exception as error:  # chromadb raises ValueError, httpx errors, ...
            from core.redact import redact, safe_url

            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise ConfigurationError(
                f"knowledge_base.chroma_url: cannot reach the Chroma server at {safe_url(url)} "
                f"({redact(reason)}): start it, or unset knowledge_base.chroma_url for the "
                "embedded store") from None
        return VectorStore(client)
    if path is None:
        raise ConfigurationError("a chroma path or URL is needed")
    try:
        return SharedLocalChroma(path, settings)
    except ResearchBotError:
        raise
    except Exception as error:  # chromadb raises many types; all mean it cannot open
        full = full_disk_error("vector store", error, path, opaque=True)
        raise (full or StoreError(f"vector store: cannot open {path}: {error}")) from error


class VectorStore:
    """Where the collections live. This base talks to a Chroma server, which orders concurrent
    readers and writers itself; `SharedLocalChroma` adds what the embedded store needs."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._handles: dict[str, Any] = {}
        self._batch: int | None = None
        self.folder: Path | None = None

    def read(self, name: str, method: str, **arguments: Any) -> Any:
        return getattr(self._handle(name), method)(**arguments)

    def write(self, name: str, method: str, **arguments: Any) -> Any:
        return getattr(self._handle(name), method)(**arguments)

    def max_batch_size(self) -> int:
        if self._batch is None:
            self._batch = int(self._client.get_max_batch_size())
        return self._batch

    def heartbeat(self) -> int:
        return int(self._client.heartbeat())

    def close(self) -> None:
        """Nothing to release for a server's client."""

    def _handle(self, name: str) -> Any:
        """The chroma Collection, looked up once: get_or_create is a round trip."""
        if name not in self._handles:
            self._handles[name] = self._client.get_or_create_collection(
                name=name, metadata={"hnsw:space": "cosine"}, embedding_function=None
            )
        return self._handles[name]


class SharedLocalChroma(VectorStore):
    """The embedded PersistentClient, safe to share between the processes of one machine."""

    def __init__(self, path: Path, settings: Any) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._settings = settings
        self._lock = _ProcessSharedLock(path / _LOCK_FILE)
        with self._lock.exclusive():
            self._seen = self._lock.counter()
            client, system = _private_client(path, settings)
        super().__init__(client)
        self._system: Any = system
        self._batch = int(client.get_max_batch_size())
        self.folder = path

    def read(self, name: str, method: str, **arguments: Any) -> Any:
        with self._lock.shared():
            if self._lock.counter() == self._seen and name in self._handles:
                return super().read(name, method, **arguments)
        with self._lock.exclusive():  # rare: another process wrote, or a first look-up
            self._refresh()
            return super().read(name, method, **arguments)

    def write(self, name: str, method: str, **arguments: Any) -> Any:
        with self._lock.exclusive():
            self._refresh()
            self._seen = self._lock.bump()
            return super().write(name, method, **arguments)

    def close(self) -> None:
        with self._lock.exclusive():
            self._drop()
        self._lock.close()

    def _refresh(self) -> None:
        """Reopen when another process wrote since this one last looked: an in-memory index
        that misses its writes cannot be patched, only reloaded."""
        counter = self._lock.counter()
        if counter == self._seen:
            return
        self._drop()
        self._client, self._system = _private_client(self._path, self._settings)
        self._seen = counter

    def _drop(self) -> None:
        self._handles.clear()
        self._seen = -1  # no counter has this value: the next call reopens
        system, self._system = self._system, None
        if system is not None:
            system.stop()


def _private_client(path: Path, settings: Any) -> tuple[Any, Any]:
    """A PersistentClient on a chroma System of its own, and that System. Chroma shares one
    System per path within a process (chromadb 1.5.9: SharedSystemClient); a shared one would
    hand back the very in-memory index a reopen has to drop."""
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient

    key = str(path)
    SharedSystemClient._identifier_to_system.pop(key, None)
    client = chromadb.PersistentClient(path=key, settings=settings)
    system = SharedSystemClient._identifier_to_system.pop(key)
    SharedSystemClient._identifier_to_refcount.pop(key, None)
    return client, system


class _ProcessSharedLock:
    """Shared or exclusive, across the threads of this process and across processes: one
    descriptor holds a flock while any thread of this process holds the lock. Its first eight
    bytes count writes."""

    def __init__(self, path: Path) -> None:
        try:
            import fcntl
        except ImportError as error:
            raise ConfigurationError(_unshareable(path.parent, "no POSIX file locks here")) \
                from error
        self._fcntl = fcntl
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self._state = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0
        try:
            fcntl.flock(self._fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        except BlockingIOError:
            pass  # another process holds it: locks work
        except OSError as error:  # e.g. ENOLCK on a network file system
            os.close(self._fd)
            raise ConfigurationError(_unshareable(path.parent, error.strerror or str(error))) \
                from error

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._state:
            self._state.wait_for(lambda: not self._writing and not self._writers_waiting)
            if self._readers == 0:
                self._fcntl.flock(self._fd, self._fcntl.LOCK_SH)
            self._readers += 1
        try:
            yield
        finally:
            with self._state:
                self._readers -= 1
                if self._readers == 0:
                    self._fcntl.flock(self._fd, self._fcntl.LOCK_UN)
                    self._state.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._state:
            self._writers_waiting += 1
            try:
                self._state.wait_for(lambda: not self._writing and self._readers == 0)
                self._fcntl.flock(self._fd, self._fcntl.LOCK_EX)
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._state:
                self._fcntl.flock(self._fd, self._fcntl.LOCK_UN)
                self._writing = False
                self._state.notify_all()

    def counter(self) -> int:
        """Writes so far; read while holding the lock."""
        return int.from_bytes(os.pread(self._fd, 8, 0).ljust(8, b"\0"), "little")

    def bump(self) -> int:
        """Count one more write; call while holding the lock exclusively. Rewriting eight
        bytes in place needs no new disk block, so it works on a full disk too."""
        counter = (self.counter() + 1) % 2**63
        os.pwrite(self._fd, counter.to_bytes(8, "little"), 0)
        return counter

    def close(self) -> None:
        os.close(self._fd)


def _unshareable(folder: Path, why: str) -> str:
    return (f"the embedded vector store in {folder} cannot be shared safely ({why}). Run a "
            f"Chroma server instead: `chroma run --path {folder}`, and set "
            "knowledge_base.chroma_url = \"http://localhost:8000\"")


@dataclass
class VectorHit:
    id: str
    similarity: float
    metadata: dict[str, Any]
    document: str | None


class VectorCollection:
    """One cosine-space collection; every call runs in a worker thread."""

    def __init__(self, store: VectorStore, purpose: str, tenant: str) -> None:
        self._store = store
        digest = hashlib.sha256(tenant.encode()).hexdigest()[:24]
        self.name = f"{purpose}_{digest}"

    async def upsert(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, Any]],
        documents: Sequence[str] | None = None,
    ) -> None:
        if not ids:
            return
        limit = await self._call(self._store.max_batch_size)
        for start in range(0, len(ids), limit):
            end = start + limit
            await self._call(
                self._store.write,
                self.name,
                "upsert",
                ids=list(ids[start:end]),
                embeddings=vectors[start:end].tolist(),
                metadatas=list(metadatas[start:end]),
                documents=list(documents[start:end]) if documents is not None else None,
            )

    async def delete(self, where: dict[str, Any]) -> None:
        await self._call(self._store.write, self.name, "delete", where=where)

    async def delete_ids(self, ids: Sequence[str]) -> None:
        if ids:
            await self._call(self._store.write, self.name, "delete", ids=list(ids))

    async def ids(self, where: dict[str, Any] | None = None) -> list[str]:
        """Every id in the collection, or those whose metadata match `where`."""
        result = await self._call(self._store.read, self.name, "get", where=where, include=[])
        return list(result["ids"])

    async def query(
        self, vector: np.ndarray, limit: int, where: dict[str, Any] | None = None
    ) -> list[VectorHit]:
        result = await self._call(
            self._store.read,
            self.name,
            "query",
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
        include = ["metadatas", "documents"] + (["embeddings"] if with_vectors else [])
        return dict(await self._call(self._store.read, self.name, "get", ids=list(ids),
                                     include=include))

    async def count(self) -> int:
        return int(await self._call(self._store.read, self.name, "count"))

    async def _call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(function, *args, **kwargs)
        except ResearchBotError:
            raise
        except Exception as error:  # chromadb raises many types; all mean the store failed
            if _unreachable(error):
                raise VectorStoreUnavailableError(VECTOR_STORE_AWAY) from error
            full = full_disk_error("vector store", error, self._store.folder, opaque=True)
            raise (full or StoreError(f"vector store: {error}")) from error


VECTOR_STORE_AWAY = "the vector store (Chroma server) cannot be reached; try again shortly"


def _unreachable(error: BaseException) -> bool:
    """A Chroma server that is down, restarting or unreachable: a refused or dropped
    connection or a timeout anywhere in the chain (chromadb's HTTP client, httpx, wraps the
    socket's error), not a bad request or a bug."""
    httpx = sys.modules.get("httpx")  # loaded with chromadb's HTTP client
    link: BaseException | None = error
    while link is not None:
        if isinstance(link, (ConnectionError, TimeoutError)) or (
                httpx is not None and isinstance(link, httpx.TransportError)):
            return True
        link = link.__cause__ or link.__context__
    return False


class TenantCollections:
    """Each tenant's collection for one purpose, looked up once."""

    def __init__(self, store: VectorStore, purpose: str) -> None:
        self._store = store
        self._purpose = purpose
        self._collections: dict[str, VectorCollection] = {}

    def __call__(self, tenant: str) -> VectorCollection:
        if tenant not in self._collections:
            self._collections[tenant] = VectorCollection(self._store, self._purpose, tenant)
        return self._collections[tenant]


class VectorStoreOnDemand(VectorStore):
    """A vector store opened on its first use, by `open_store`: a process that never reads
    or writes a vector (an index run with nothing new) never loads Chroma."""

    def __init__(self, open_store: Callable[[], VectorStore], folder: Path | None) -> None:
        self._open_store = open_store
        self._store: VectorStore | None = None
        self._opening = threading.Lock()
        self.folder = folder

    def read(self, name: str, method: str, **arguments: Any) -> Any:
        return self._opened().read(name, method, **arguments)

    def write(self, name: str, method: str, **arguments: Any) -> Any:
        return self._opened().write(name, method, **arguments)

    def max_batch_size(self) -> int:
        return self._opened().max_batch_size()

    def heartbeat(self) -> int:
        return self._opened().heartbeat()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def _opened(self) -> VectorStore:
        with self._opening:  # collections are read from worker threads
            if self._store is None:
                self._store = self._open_store()
            return self._store
