"""Documents with terminal control and bidirectional-override characters, through the real
`researchbot index`, `ask`, `show` and `jobs`: nothing reaches the terminal raw; JSON keeps
the text, escaped."""

import json

import pytest

from adapters.terminal import json_safe, terminal_safe

pytestmark = pytest.mark.unit

ESC_RED, BEL, RLO, LRI, PDI, ZWSP = "\x1b[31m", "\x07", "\u202e", "\u2066", "\u2069", "\u200b"
TITLE_SET = "\x1b]0;owned\x07"
CSI_8BIT = "\x9b2J"
RAW = [ESC_RED[0], BEL, RLO, LRI, PDI, ZWSP, "\x9b", "\r"]
HOSTILE = (f"# Cats{RLO}txt.exe\n\nCats sleep between 12 and 16 hours a day.{BEL} "
           f"{ESC_RED}Kittens sleep{ESC_RED[:2]}0m even longer,{ZWSP} up to 20 hours."
           f"{TITLE_SET} Old cats{LRI} also{PDI} sleep more.{CSI_8BIT}\rHidden line.\n")




def _raw(text: str) -> list[str]:
    return [repr(c) for c in RAW if c in text]




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
