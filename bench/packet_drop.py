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
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.tables import table

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
        env.update(RESEARCHBOT_SOURCES__WIKIPEDIA_API=f"{base}/w/api.php",
                   RESEARCHBOT_SOURCES__ARXIV_API=f"{base}/arxiv/query",
                   RESEARCHBOT_SOURCES__PUBMED_API=f"{base}/eutils")
    return env


def cli(env: dict[str, str], cwd: Path, *args: str) -> tuple[float, str]:
    """Seconds the whole `researchbot` process took, and what it printed."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "bot", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"researchbot {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return took, done.stdout


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
        rows: list[list[object]] = []
        later = [0.0, 0.0]
        for n, question in enumerate(QUESTIONS[:args.questions], start=1):
            web_s, printed = cli(web, work, "ask", question, "--no-cache")
            local_s, _ = cli(local, work, "ask", question, "--no-cache")
            told = "yes" if "could not be reached" in printed else "no"
            rows.append([n, web_s, local_s, web_s / local_s, told])
            if n > 1:
                later = [later[0] + web_s, later[1] + local_s]
        if later[1]:
            rows.append(["2nd and later", later[0], later[1], later[0] / later[1], ""])
    table(f"`researchbot ask` per question, web sources behind a port that drops packets "
          f"({checkout})",
          ["question", "web sources s", "local-only s", "ratio", "outage told"], rows)


if __name__ == "__main__":
    main()
