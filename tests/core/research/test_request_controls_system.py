"""`researchbot ask --context ... --max-iterations ...` as a process (system tier)."""


from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True,
                          text=True, timeout=120)


def test_the_cli_takes_context_and_max_iterations(clean_env: Path) -> None:
    asked = _cli("ask", "How long do cats sleep?", "--context", "keep it short",
                 "--max-iterations", "1", "--json")
    assert asked.returncode == 0, asked.stderr
    job_id = json.loads(asked.stdout)["job_id"]
    shown = _cli("show", job_id)
    assert "context: keep it short" in shown.stdout
    stored = json.loads(_cli("show", job_id, "--json").stdout)
    assert stored["request"]["max_iterations"] == 1 and stored["metrics"]["rounds"] == 1
    bad = _cli("ask", "How long do cats sleep?", "--context", "cats\x07")
    assert bad.returncode == 2 and "context contains control characters" in bad.stderr
    assert "Traceback" not in bad.stderr
    zero = _cli("ask", "How long do cats sleep?", "--max-iterations", "0")
    assert zero.returncode == 2 and "--max-iterations must be 1 to 50" in zero.stderr
