"""Whole-process time of each CLI command, this checkout against an earlier one, paired.

    .venv/bin/python bench/startup.py [--before REV] [--runs 7]

Each checkout gets a data folder of its own with the example documents indexed and one
question answered (so the next identical question is an exact cache hit), local sources only
(no network). Then every command runs `--runs` times as a new process, the two checkouts
alternating, and the table shows each one's median wall time and the ratio. The machine is
shared and noisy: the ratio, measured in one run, is the figure to compare. `--before`
defaults to the last commit before the CLI learned to open only what its command uses.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.getcwd())

from bench.tables import table
from tests.support import researchbot

HERE = Path(__file__).resolve().parent.parent
EXAMPLES = HERE / "examples" / "docs"
QUESTION = "How does incremental indexing work?"
BEFORE = "4450515"  # main before issue 23


@dataclass
class Checkout:
    name: str
    code: Path
    data: Path

    def run(self, *args: str) -> tuple[float, float, str]:
        """Seconds the command took as a whole process, the CPU seconds it used (user and
        system: what the machine's other load moves least), and its stdout."""
        env = {**os.environ, "PYTHONPATH": str(self.code), "RESEARCHBOT_DATA_DIR": str(self.data),
               "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "true", "RESEARCHBOT_TENANT": "local"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = researchbot.run(*args, cwd=self.data, env=env)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: researchbot {' '.join(args)} failed "
                             f"({done.returncode}): {done.stderr[-2000:]}")
        return seconds, cpu, done.stdout


def commands(checkout: Checkout) -> dict[str, list[str]]:
    _, _, listed = checkout.run("jobs", "--limit", "1")
    job_id = listed.split()[0]
    return {
        "--help": ["--help"],
        "jobs": ["jobs"],
        "show JOB": ["show", job_id],
        "keys list": ["keys", "list"],
        "index (nothing changed)": ["index", str(EXAMPLES)],
        "ask (exact cache hit)": ["ask", QUESTION],
        "ask (fresh answer)": ["ask", "--no-cache", QUESTION],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the earlier commit")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as folder:
        root = Path(folder)
        earlier = root / "before"
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(earlier),
                        args.before], check=True, capture_output=True)
        try:
            measure(root, earlier, args.before, args.runs)
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force",
                            str(earlier)], check=False, capture_output=True)


def measure(root: Path, earlier: Path, before: str, runs: int) -> None:
    checkouts = [Checkout(f"before ({before})", earlier, root / "data-before"),
                 Checkout("after (this checkout)", HERE, root / "data-after")]
    for checkout in checkouts:
        checkout.data.mkdir()
        checkout.run("index", str(EXAMPLES))
        checkout.run("ask", QUESTION)
    listed = {c.name: commands(c) for c in checkouts}
    seconds: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        for label in listed[checkouts[0].name]:
            for checkout in checkouts:
                taken, used, _ = checkout.run(*listed[checkout.name][label])
                seconds.setdefault((label, checkout.name), []).append(taken)
                cpu.setdefault((label, checkout.name), []).append(used)
    rows: list[list[object]] = []
    for label in listed[checkouts[0].name]:
        old, new = (statistics.median(seconds[(label, c.name)]) for c in checkouts)
        old_cpu, new_cpu = (statistics.median(cpu[(label, c.name)]) for c in checkouts)
        rows.append([label, old, new, f"{new / old:.2f}x", old_cpu, new_cpu])
    table(f"Whole-process seconds per command (median of {runs}, paired, local sources "
          f"only; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f})",
          ["command", "before", "after", "after/before", "CPU s before", "CPU s after"], rows)
    shutil.rmtree(root / "data-before", ignore_errors=True)


if __name__ == "__main__":
    main()
