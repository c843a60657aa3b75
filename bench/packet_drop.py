"""CLI questions on a network that drops packets: every keyless web source (Wikipedia, arXiv,
PubMed) points at a loopback port whose connects hang, and five `researchbot ask` processes
run in a row on the example docs, each paired with the same question asked local-only
(`pipeline.local_only = true`).

    .venv/bin/python bench/packet_drop.py [--checkout DIR] [--questions 5]

The hanging port is a listening socket that never accepts, its accept queue (backlog 0) filled
first: the kernel drops every further SYN, so connect() waits for its timeout as it does
behind a firewall that drops packets (no root needed; the bench checks that it hangs).
Each question is distinct and asked with --no-cache. The CLI runs from `--checkout` (default:
this tree), so one bench measures another revision's code.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.tables import table
from tests.support import researchbot

HERE = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "What does researchbot do with a question?",
    "How is the knowledge base indexed?",
    "Which sources does researchbot search?",
    "How are citations checked?",
    "What happens when a source is down?",
    "Where are answers cached?",
    "How are documents split into chunks?",
    "What does the local-only setting change?",
]
FILLERS = 4  # connections that fill the accept queue of a backlog-0 listener
HANG_PROBE_S = 1.0


@contextmanager
def hanging_port() -> Iterator[int]:
    """A loopback port whose connects hang: its listener never accepts, its queue is full."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = int(listener.getsockname()[1])
    fillers = []
    try:
        for _ in range(FILLERS):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        time.sleep(0.2)  # the fillers' handshakes complete into the queue
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def connect_hangs(port: int) -> float:
    """Seconds a connect waited before giving up (HANG_PROBE_S when it hangs as it should)."""
    started = time.monotonic()
    try:
        socket.create_connection(("127.0.0.1", port), timeout=HANG_PROBE_S).close()
    except TimeoutError:
        return time.monotonic() - started
    raise SystemExit(f"port {port} accepted a connection: this bench needs connects to hang")


def environment(data_dir: Path, checkout: Path, port: int | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESEARCHBOT_")}
    env.update(PYTHONPATH=str(checkout), RESEARCHBOT_DATA_DIR=str(data_dir),
               ORT_DISABLE_TELEMETRY="1", ANONYMIZED_TELEMETRY="False")
    if port is None:
        env["RESEARCHBOT_PIPELINE__LOCAL_ONLY"] = "true"
    else:
        base = f"http://127.0.0.1:{port}"
        env.update(RESEARCHBOT_ENDPOINTS__WIKIPEDIA_API=f"{base}/w/api.php",
                   RESEARCHBOT_ENDPOINTS__ARXIV_API=f"{base}/arxiv/query",
                   RESEARCHBOT_ENDPOINTS__PUBMED_API=f"{base}/eutils")
    return env


@dataclass
class Run:
    seconds: float  # the whole process, wall clock
    cpu_s: float  # its user and system time: steadier than the wall clock on a shared machine
    printed: str


def cli(env: dict[str, str], cwd: Path, *args: str) -> Run:
    """The whole `researchbot` process: its time, and what it printed."""
    used = _children_cpu_s()
    started = time.monotonic()
    done = researchbot.run(*args, env=env, cwd=cwd, timeout=300)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"researchbot {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return Run(took, _children_cpu_s() - used, done.stdout)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def unreachable(printed: str) -> str:
    """The sources the answer says could not be reached."""
    notes = json.loads(printed)["answer"]["limitations"]
    return ", ".join(note.split(" could not be reached")[0] for note in notes
                     if " could not be reached" in note) or "none"


def row(label: str, pairs: list[tuple[Run, Run]]) -> list[object]:
    """Seconds with the web sources and local-only, summed over `pairs`, and their ratios."""
    web_s, local_s = (sum(pair[i].seconds for pair in pairs) for i in (0, 1))
    web_cpu, local_cpu = (sum(pair[i].cpu_s for pair in pairs) for i in (0, 1))
    return [label, web_s, local_s, web_s / local_s, web_cpu / local_cpu]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=HERE,
                        help="the tree whose CLI is measured (default: this one)")
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    with tempfile.TemporaryDirectory() as folder, hanging_port() as port:
        work = Path(folder)
        waited = connect_hangs(port)
        print(f"connect to 127.0.0.1:{port} hangs: gave up after {waited:.2f} s "
              f"(probe timeout {HANG_PROBE_S:g} s)")
        web, local = environment(work / "data", checkout, port), environment(
            work / "data", checkout, None)
        cli(local, work, "index", str(checkout / "examples" / "docs"))
        pairs: list[tuple[Run, Run]] = []
        for n, question in enumerate(QUESTIONS[:args.questions], start=1):
            asked = ("ask", question, "--no-cache", "--json")
            # Which of the pair goes first alternates: a noisy neighbour hurts both alike.
            if n % 2:
                on_web, alone = cli(web, work, *asked), cli(local, work, *asked)
            else:
                alone, on_web = cli(local, work, *asked), cli(web, work, *asked)
            pairs.append((on_web, alone))
    rows: list[list[object]] = [[*row(str(n), [pair]), unreachable(pair[0].printed)]
                                for n, pair in enumerate(pairs, start=1)]
    if len(pairs) > 1:
        rows.append([*row("2nd and later", pairs[1:]), ""])
    table(f"`researchbot ask` per question, web sources behind a port that drops packets "
          f"({checkout})",
          ["question", "web sources s", "local-only s", "ratio", "CPU time ratio",
           "told unreachable"], rows)


if __name__ == "__main__":
    main()
