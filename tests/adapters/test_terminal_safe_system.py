"""Hostile document text through the real `researchbot` process: control and bidirectional
characters never reach the terminal raw (system tier)."""


import json
from pathlib import Path

import pytest

from tests.adapters.test_terminal_safe import BEL, HOSTILE, RLO, ZWSP, _raw
from tests.support import researchbot

pytestmark = pytest.mark.system


def test_hostile_text_is_neutralised_on_the_terminal(clean_env: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / f"cats{RLO}dm.md").write_text(HOSTILE, encoding="utf-8")

    index = researchbot.run("index", str(docs), timeout=180)
    assert index.returncode == 0, index.stderr
    assert _raw(index.stdout + index.stderr) == []
    assert "<U+202E>" in index.stderr  # the file name is shown, its override made visible

    ask = researchbot.run("ask", "How long do cats sleep?", timeout=180)
    assert ask.returncode == 0, ask.stderr
    assert "12 and 16 hours" in ask.stdout
    assert _raw(ask.stdout + ask.stderr) == []

    as_json = researchbot.run("ask", "How long do kittens sleep?", "--json", timeout=180)
    assert _raw(as_json.stdout) == []
    answer = json.loads(as_json.stdout)  # the escapes decode back to the stored text
    text = json.dumps(answer, ensure_ascii=False)
    assert RLO in text or ZWSP in text or BEL in text

    jobs = researchbot.run("jobs", timeout=180)
    show = researchbot.run("show", answer["job_id"], timeout=180)
    shown_json = researchbot.run("show", answer["job_id"], "--json", timeout=180)
    for done in (jobs, show, shown_json):
        assert done.returncode == 0, done.stderr
        assert _raw(done.stdout + done.stderr) == []
    assert json.loads(shown_json.stdout)["id"] == answer["job_id"]
