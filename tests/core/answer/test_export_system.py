"""`researchbot save` as a process: the latest answer written under results (system tier)."""


from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.answer.test_export import _text_of
from tests.support.corpus import CORPUS

pytestmark = pytest.mark.system


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True,
                          text=True, env=dict(os.environ), timeout=180)


def test_save_writes_the_latest_answer_under_results(clean_env: Path) -> None:
    nothing = _run("save")
    assert nothing.returncode == 2 and "no answered question to save yet" in nothing.stderr
    docs = clean_env.parent / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text)
    assert _run("index", str(docs)).returncode == 0
    asked = _run("ask", "What gives sourdough bread its sour taste?", "--json")
    job_id = json.loads(asked.stdout)["job_id"]

    saved = _run("save")
    assert saved.returncode == 0, saved.stderr
    path = Path(saved.stdout.strip())
    assert path.parent == Path("results") and path.name.startswith(
        "what-gives-sourdough-bread-its-sour-taste_") and path.suffix == ".md"
    assert "acid" in (clean_env.parent / path).read_text()

    out = clean_env.parent / "exports"
    out.mkdir()
    as_pdf = _run("save", job_id, "--format", "pdf", "-o", str(out))
    assert as_pdf.returncode == 0, as_pdf.stderr
    written = Path(as_pdf.stdout.strip())
    assert written.parent == out and "acid" in _text_of("pdf", written.read_bytes())
    missing = _run("save", "nosuchjob")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
