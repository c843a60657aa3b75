"""Documents with terminal control and bidirectional-override characters, through the real
`researchbot index`, `ask`, `show` and `jobs`: nothing reaches the terminal raw; JSON keeps
the text, escaped."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.terminal import json_safe, terminal_safe

pytestmark = pytest.mark.system

ESC_RED, BEL, RLO, LRI, PDI, ZWSP = "\x1b[31m", "\x07", "\u202e", "\u2066", "\u2069", "\u200b"
TITLE_SET = "\x1b]0;owned\x07"
CSI_8BIT = "\x9b2J"
RAW = [ESC_RED[0], BEL, RLO, LRI, PDI, ZWSP, "\x9b", "\r"]
HOSTILE = (f"# Cats{RLO}txt.exe\n\nCats sleep between 12 and 16 hours a day.{BEL} "
           f"{ESC_RED}Kittens sleep{ESC_RED[:2]}0m even longer,{ZWSP} up to 20 hours."
           f"{TITLE_SET} Old cats{LRI} also{PDI} sleep more.{CSI_8BIT}\rHidden line.\n")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True,
                          text=True, timeout=180)


def _raw(text: str) -> list[str]:
    return [repr(c) for c in RAW if c in text]


def test_hostile_text_is_neutralised_on_the_terminal(clean_env: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / f"cats{RLO}dm.md").write_text(HOSTILE, encoding="utf-8")

    index = _run("index", str(docs))
    assert index.returncode == 0, index.stderr
    assert _raw(index.stdout + index.stderr) == []
    assert "<U+202E>" in index.stderr  # the file name is shown, its override made visible

    ask = _run("ask", "How long do cats sleep?")
    assert ask.returncode == 0, ask.stderr
    assert "12 and 16 hours" in ask.stdout
    assert _raw(ask.stdout + ask.stderr) == []

    as_json = _run("ask", "How long do kittens sleep?", "--json")
    assert _raw(as_json.stdout) == []
    answer = json.loads(as_json.stdout)  # the escapes decode back to the stored text
    text = json.dumps(answer, ensure_ascii=False)
    assert RLO in text or ZWSP in text or BEL in text

    jobs = _run("jobs")
    show = _run("show", answer["job_id"])
    shown_json = _run("show", answer["job_id"], "--json")
    for done in (jobs, show, shown_json):
        assert done.returncode == 0, done.stderr
        assert _raw(done.stdout + done.stderr) == []
    assert json.loads(shown_json.stdout)["id"] == answer["job_id"]


def test_terminal_safe_keeps_the_words_and_shows_overrides() -> None:
    safe = terminal_safe(HOSTILE)
    assert _raw(safe) == []
    assert "Cats<U+202E>txt.exe" in safe and "<U+2066>" in safe
    assert "Kittens sleep even longer, up to 20 hours." in safe
    assert "owned" not in safe  # a window-title sequence goes whole
    assert "sleep more.\nHidden line." in safe  # a carriage return cannot overwrite
    assert terminal_safe("👩‍💻 زمین‌شناسی") == "👩‍💻 زمین‌شناسی"  # joiners only join


def test_json_safe_escapes_and_round_trips() -> None:
    encoded = json_safe(json.dumps({"text": HOSTILE}, ensure_ascii=False))
    assert _raw(encoded) == []
    assert json.loads(encoded)["text"] == HOSTILE
