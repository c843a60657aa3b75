"""`researchbot save` as a process: the latest answer written under results (system tier)."""


from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.answer.test_export import _text_of
from tests.support import researchbot
from tests.support.corpus import index_corpus

pytestmark = pytest.mark.system


def test_save_writes_the_latest_answer_under_results(clean_env: Path) -> None:
    nothing = researchbot.run("save", timeout=180)
    assert nothing.returncode == 2 and "no answered question to save yet" in nothing.stderr
    index_corpus(clean_env)
    asked = researchbot.run("ask", "What gives sourdough bread its sour taste?", "--json",
                            timeout=180)
    job_id = json.loads(asked.stdout)["job_id"]

    saved = researchbot.run("save", timeout=180)
    assert saved.returncode == 0, saved.stderr
    path = Path(saved.stdout.strip())
    assert path.parent == Path("results") and path.name.startswith(
        "what-gives-sourdough-bread-its-sour-taste_") and path.suffix == ".md"
    assert "acid" in (clean_env.parent / path).read_text()

    out = clean_env.parent / "exports"
    out.mkdir()
    as_pdf = researchbot.run("save", job_id, "--format", "pdf", "-o", str(out), timeout=180)
    assert as_pdf.returncode == 0, as_pdf.stderr
    written = Path(as_pdf.stdout.strip())
    assert written.parent == out and "acid" in _text_of("pdf", written.read_bytes())
    missing = researchbot.run("save", "nosuchjob", timeout=180)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
