"""MkDocs hook: fills the reference pages' markers with the settings and command references
rendered from this checkout's code (bot/reference.py), so they cannot drift from it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# The checkout being built, ahead of any installed copy of the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.cli import build_parser
from bot.reference import cli_reference, renamed_reference, settings_reference

MARKERS = {
    "<!-- generated: settings -->": settings_reference,
    "<!-- generated: renamed -->": renamed_reference,
    "<!-- generated: cli -->": lambda: cli_reference(build_parser()),
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    for marker, render in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return markdown
