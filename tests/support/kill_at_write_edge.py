"""Run the `researchbot` command line in this process and SIGKILL it at the N-th edge of a
vector write: each write batch has an edge just before it and one just after.

    python tests/support/kill_at_write_edge.py N index PATH --tenant T

The kill wraps the vector store's one write method, so production code carries no hook for
it (tests/core/retrieval/test_index_crash.py)."""

from __future__ import annotations

import itertools
import os
import signal
import sys
from pathlib import Path
from typing import Any

# Run as a script: this checkout's packages, not an installed copy's.
sys.path[0] = str(Path(__file__).resolve().parents[2])


def kill_at_write_edge(at: int) -> None:
    from core.retrieval.vectors import VectorStore

    edges = itertools.count(1)
    write = VectorStore.write

    def edge() -> None:
        if next(edges) == at:
            os.kill(os.getpid(), signal.SIGKILL)

    def write_between_edges(self: VectorStore, name: str, method: str, **arguments: Any) -> Any:
        edge()
        result = write(self, name, method, **arguments)
        edge()
        return result

    # SharedLocalChroma.write calls this inside its lock, after bumping the write counter.
    VectorStore.write = write_between_edges  # type: ignore[method-assign]


if __name__ == "__main__":
    kill_at_write_edge(int(sys.argv[1]))
    from bot.cli import main

    sys.exit(main(sys.argv[2:]))
