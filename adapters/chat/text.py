"""Cutting rendered text to a platform's limits without breaking what it escaped."""

from __future__ import annotations

import re


def split_text(text: str, limit: int, unit: re.Pattern[str] | None = None) -> list[str]:
    """Pieces of at most `limit` characters, cut at paragraph, sentence or word ends, never
    inside a match of `unit` (an escape such as `&amp;` or `\\*`)."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), window.rfind(". ") + 1, 0)
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut < limit // 2:
            cut = limit
        cut = _outside(rest, cut, unit)
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return pieces


def trim(text: str, limit: int, unit: re.Pattern[str] | None = None) -> str:
    """At most `limit` characters, an ellipsis marking a cut made outside any `unit`."""
    if len(text) <= limit:
        return text
    return text[: _outside(text, limit - 1, unit)].rstrip() + "…"


def _outside(text: str, cut: int, unit: re.Pattern[str] | None) -> int:
    if unit is not None:
        for match in unit.finditer(text, max(0, cut - 16), cut + 16):
            if match.start() < cut < match.end():
                return match.start()
    return cut
