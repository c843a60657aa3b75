"""One clear line when a store write failed for want of space. The catalogue (SQLite) and the
vector store (Chroma) both report a full disk in their own words, or not at all."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from core.errors import StoreError

# Below this much free space a failed write is reported as a full disk: chroma's own messages
# ("Failed to apply logs to the metadata segment") do not say so.
_NEARLY_FULL_BYTES = 16 * 1024 * 1024


def full_disk_error(what: str, error: BaseException, folder: Path | None,
                    opaque: bool = False) -> StoreError | None:
    """One clear line when a store write failed for want of space, naming the folder; None
    when the error is something else. `opaque`: the library's messages do not say "disk
    full" (chroma: "Failed to apply logs to the metadata segment"), so little free space
    left in the folder is taken as the reason."""
    if folder is None or not (says_disk_full(error) or (opaque and _nearly_full(folder))):
        return None
    free = shutil.disk_usage(folder).free if folder.exists() else 0
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return StoreError(f"the disk is full: {folder} has {free / 2**20:.1f} MB free; free some "
                      f"space there, then run again ({what}: {detail})")


def says_disk_full(error: BaseException) -> bool:
    """Whether `error` (or what caused it) says the disk is full (ENOSPC, SQLite's words)."""
    chain: BaseException | None = error
    while chain is not None:
        if isinstance(chain, OSError) and chain.errno == errno.ENOSPC:
            return True
        text = str(chain).lower()
        if "disk is full" in text or "no space left" in text:
            return True
        chain = chain.__cause__ or chain.__context__
    return False


def _nearly_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < _NEARLY_FULL_BYTES
    except OSError:
        return False
