"""Values as passages write them (dates, quantities, names), read so that equal values
written differently compare equal: "3 June 1990" and "June 3, 1990"; "1,000" and "1000";
"1.2 million" and "1,200,000"; "5 km" and "5,000 m"; "about 3,700" and "3,677". A value
holds what it says and how precisely: a year alone agrees with any date in that year, and
a round or hedged number with any number it rounds from.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from core.text import STOPWORDS, plain_words

_MONTHS = {m.casefold(): n for n, m in enumerate(calendar.month_abbr) if m}  # "jun": 6
_MONTH = r"(?:" + "|".join(sorted((m for m in calendar.month_name if m), key=len,
                                  reverse=True)) + r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|"
_MONTH += r"Oct|Nov|Dec)\.?)"
_YEAR = r"(?:1[0-9]{3}|20[0-9]{2})(?!\d|,\d|s\b|\s*(?:BC|BCE)\b)"
# "3 June 1990", "June 3, 1990", "June 1990", "1990-06-03", "1990"; group names say which part.
DATE = re.compile(
    rf"(?<![\w,.])(?:(?P<d1>\d{{1,2}})\s+(?P<m1>{_MONTH})\s*,?\s*(?P<y1>{_YEAR})"
    rf"|(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s*(?P<y2>{_YEAR})"
    rf"|(?P<m3>{_MONTH})\s*,?\s+(?P<y3>{_YEAR})"
    rf"|(?P<y4>{_YEAR})-(?P<m4>[01]\d)-(?P<d4>[0-3]\d)\b"
    rf"|(?P<y5>{_YEAR}))"
)
_ROUGHLY = re.compile(r"\b(?:c\.|ca\.|circa|about|approximately|approx\.|around|roughly|"
                      r"nearly|almost|some|an estimated|estimated|close to|just under|"
                      r"just over|more than|over|at least|less than|under|fewer than|up to)\s*$",
                      re.I)
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\d])"
                     r"(?:\s+(thousand|million|billion))?", re.I)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
# Units by what they measure, in that measure's base unit (metres, square metres, kg).
_UNITS: dict[str, tuple[str, float]] = {
    "km": ("length", 1000.0), "kilometres": ("length", 1000.0), "kilometers": ("length", 1000.0),
    "kilometre": ("length", 1000.0), "kilometer": ("length", 1000.0),
    "m": ("length", 1.0), "metres": ("length", 1.0), "meters": ("length", 1.0),
    "metre": ("length", 1.0), "meter": ("length", 1.0),
    "cm": ("length", 0.01), "centimetres": ("length", 0.01), "centimeters": ("length", 0.01),
    "ft": ("length", 0.3048), "feet": ("length", 0.3048), "foot": ("length", 0.3048),
    "mi": ("length", 1609.344), "miles": ("length", 1609.344), "mile": ("length", 1609.344),
    "km2": ("area", 1e6), "km²": ("area", 1e6), "sq km": ("area", 1e6),
    "square kilometres": ("area", 1e6), "square kilometers": ("area", 1e6),
    "sq mi": ("area", 2589988.11), "square miles": ("area", 2589988.11),
    "hectares": ("area", 1e4), "ha": ("area", 1e4), "acres": ("area", 4046.8564),
    "kg": ("mass", 1.0), "kilograms": ("mass", 1.0), "tonnes": ("mass", 1000.0),
    "lb": ("mass", 0.45359237), "pounds": ("mass", 0.45359237),
}
_UNIT = re.compile(r"\s*(" + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
                   + r")(?![\w²])", re.I)
HEDGE_SHARE = 0.1  # a hedged number ("about 3,700") agrees with values this close
CONVERTED_SHARE = 0.01  # what converting between units and rounding may lose


@dataclass(frozen=True)
class When:
    """A date as precise as the passage gave it."""

    year: int
    month: int | None = None
    day: int | None = None
    hedged: bool = False  # "c. 1850", "around 1850"

    def agrees(self, other: When) -> bool:
        if self.hedged or other.hedged:
            return abs(self.year - other.year) <= 2
        return self.year == other.year and _same_or_unsaid(self.month, other.month) \
            and _same_or_unsaid(self.day, other.day)


@dataclass(frozen=True)
class Amount:
    """A number in its measure's base unit, with how far from it the passage's own rounding
    or hedge allows."""

    value: float
    measure: str  # "length", "area", "mass" or "count"
    slack: float  # half the last written digit's place, or the hedge's share
    converted: bool = False  # written in a unit other than the base

    def agrees(self, other: Amount) -> bool:
        if self.measure != other.measure:
            return True  # not comparable: no evidence of disagreement
        allowed = max(self.slack, other.slack)
        if self.converted or other.converted:
            allowed = max(allowed, CONVERTED_SHARE * max(abs(self.value), abs(other.value)))
        return abs(self.value - other.value) <= allowed + 1e-9


def _same_or_unsaid(a: int | None, b: int | None) -> bool:
    return a is None or b is None or a == b


def dates_in(text: str) -> list[tuple[When, re.Match[str]]]:
    """Every date in `text`, in order, with where it stands."""
    found = []
    for match in DATE.finditer(text):
        parts = {k[0]: v for k, v in match.groupdict().items() if v}
        month = parts.get("m")
        found.append((When(
            year=int(parts["y"]),
            month=int(month) if month and month.isdigit()
            else _MONTHS[month.casefold()[:3]] if month else None,
            day=int(parts["d"]) if "d" in parts else None,
            hedged=bool(_ROUGHLY.search(text[:match.start()])),
        ), match))
    return found


def amounts_in(text: str, measure: str = "count") -> list[tuple[Amount, re.Match[str]]]:
    """Every number in `text` that is not a year, with its unit when it has one of the
    `measure` asked for ("count": any number without a unit)."""
    found = []
    for match in _NUMBER.finditer(text):
        whole, decimals, scale = match.group(1), match.group(2) or "", match.group(3)
        digits = whole.replace(",", "")
        if not scale and not decimals and "," not in whole and _YEARLIKE.fullmatch(digits):
            continue  # "in 1990": a date, not an amount
        factor = _SCALE[scale.casefold()] if scale else 1.0
        unit = _UNIT.match(text, match.end())
        kind, per = _UNITS[unit.group(1).casefold()] if unit else ("count", 1.0)
        if kind != measure:
            continue
        if _PERCENT.match(text, match.end()):
            continue
        value = float(f"{digits}.{decimals}" if decimals else digits) * factor * per
        slack = _place(digits, decimals, scaled=bool(scale)) * factor * per / 2
        if _ROUGHLY.search(text[:match.start()]):
            slack = max(slack, HEDGE_SHARE * value)
        found.append((Amount(value, kind, slack, converted=per != 1.0), match))
    return found


_YEARLIKE = re.compile(r"1[0-9]{3}|20[0-9]{2}")
_PERCENT = re.compile(r"\s*(?:%|per\s*cent|percent)", re.I)


def _place(digits: str, decimals: str, scaled: bool) -> float:
    """The place of the last digit written: 0.1 for "1.2", 1 for "3,677" and for "2 million"
    (its scale is its own unit), 100 for "3,700": a round number may be rounded, to two
    significant digits at most ("300" is not 324 rounded)."""
    if decimals:
        return 10.0 ** -len(decimals)
    if scaled:
        return 1.0
    zeros = len(digits) - len(digits.rstrip("0"))
    return 10.0 ** max(0, min(zeros, len(digits) - 2))


def same_name(a: str, b: str) -> bool:
    """Two names for one thing, as far as words tell: they share a word that is not a stop
    word ("Joel Coen" and "the Coen brothers"), or one is empty."""
    first = set(plain_words(a)) - STOPWORDS
    second = set(plain_words(b)) - STOPWORDS
    return not first or not second or bool(first & second)


def year_text(when: When) -> str:
    """A date as the passage's precision allows it: "1990", "June 1990", "3 June 1990"."""
    if when.month is None:
        return str(when.year)
    month = calendar.month_name[when.month]
    return f"{when.day} {month} {when.year}" if when.day else f"{month} {when.year}"
