"""`researchbot ask --context ... --max-iterations ...` as a process (system tier)."""


from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import researchbot

pytestmark = pytest.mark.system


def test_the_cli_takes_context_and_max_iterations(clean_env: Path) -> None:
    asked = researchbot.run("ask", "How long do cats sleep?", "--context", "keep it short",
                 "--max-iterations", "1", "--json")
    assert asked.returncode == 0, asked.stderr
    job_id = json.loads(asked.stdout)["job_id"]
    shown = researchbot.run("show", job_id)
    assert "context: keep it short" in shown.stdout
    stored = json.loads(researchbot.run("show", job_id, "--json").stdout)
    assert stored["request"]["max_iterations"] == 1 and stored["metrics"]["rounds"] == 1
    bad = researchbot.run("ask", "How long do cats sleep?", "--context", "cats\x07")
    assert bad.returncode == 2 and "context contains control characters" in bad.stderr
    assert "Traceback" not in bad.stderr
    zero = researchbot.run("ask", "How long do cats sleep?", "--max-iterations", "0")
    assert zero.returncode == 2 and "--max-iterations must be 1 to 50" in zero.stderr
