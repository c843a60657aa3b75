"""A written answer as sentences the code can check one by one, and the text rebuilt from the
sentences that pass.

The answer is read as markdown blocks (headings, paragraphs, list items, tables, code), each
prose block split into sentences by pysbd; a table's data row counts as one sentence. Every
sentence knows the citation numbers it carries (`[2]`, `[1, 3]`, `[2-4]`) and whether it makes
a claim: headings, lead-ins ending in a colon, questions and statements about what the sources
do not say are structure, not claims. `render` rebuilds the text from the sentences kept: a
list item left without a sentence goes and the rest of its list stays (renumbered when
ordered); a heading, lead-in or table left with nothing under it goes too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from core.text import segment

_NUMBERS = r"\d+(?:\s*(?:[,;]|-|–)\s*\d+)*"
MARKER = re.compile(rf"\s?\[({_NUMBERS})\]")
_LEADING_MARKERS = re.compile(rf"^(?:\s*\[{_NUMBERS}\])+")
_HEADING = re.compile(r"^(\s{0,3}#{1,6})\s+\S")
_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s+(.*)$")
_RULE = re.compile(r"^\s{0,3}(?:(?:[-*_]\s*){3,}|=+)\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# A bold line without a full stop heads a part: "**Diet**", "**Sleep:**".
_LABEL = re.compile(r"^\s*(\*\*|__)(?:[^*_.!?]|\.\d)+(\*\*|__)\s*:?\s*$")
_EMPHASIS = re.compile(r"[*_`]+")
# A statement that the sources are silent on something ("The sources do not say ...", "None
# of the passages gives ...") is about the evidence, not the world: it needs no citation.
_EVIDENCE = r"(?:sources?|evidence|passages?|documents?|excerpts?)"
_SAYING = r"(?:mention|say|state|address|give|cover|describe|discuss|report|specif|answer)\w*"
_SILENCE = re.compile(
    rf"\b(?:the|these|those|available|provided|retrieved|cited|gathered|given)\s+{_EVIDENCE}"
    rf"\s+(?:do|does|did|can|could)\s*(?:not|n't)\s+{_SAYING}"
    rf"|\b(?:no|none of the|neither of the)\s+{_EVIDENCE}\s+(?:\w+\s+)?{_SAYING}"
    rf"|\bnot\s+{_SAYING}\s+(?:in|by)\s+(?:the|any)\s+(?:\w+\s+)?{_EVIDENCE}"
    rf"|\b(?:unclear|unknown)\s+from\s+the\s+{_EVIDENCE}", re.I)

Kind = Literal["heading", "paragraph", "item", "table", "verbatim"]


@dataclass
class Sentence:
    """One sentence of the answer (or one data row of a table), as written."""

    text: str
    index: int = -1  # its position among all sentences of the answer

    @property
    def markers(self) -> list[int]:
        """Every source number the sentence cites, in order, without repeats."""
        found: list[int] = []
        for group in MARKER.finditer(self.text):
            found += expand(group.group(1))
        return list(dict.fromkeys(found))

    @property
    def body(self) -> str:
        """The words, without citation markers or markdown emphasis."""
        return " ".join(_EMPHASIS.sub("", MARKER.sub("", self.text)).split())

    @property
    def is_claim(self) -> bool:
        return is_claim(self.body, bool(self.markers))

    def cited(self, valid: Callable[[int], bool]) -> str:
        """The sentence keeping only the citation numbers `valid` accepts."""
        def keep(match: re.Match[str]) -> str:
            numbers = list(dict.fromkeys(n for n in expand(match.group(1)) if valid(n)))
            return f" [{', '.join(str(n) for n in numbers)}]" if numbers else ""
        return MARKER.sub(keep, self.text).strip()


@dataclass
class Block:
    kind: Kind
    lead: str = ""  # "- ", "  1. ", "> "
    sentences: list[Sentence] = field(default_factory=list)
    raw: str = ""  # a heading, code, or a table's header rows, kept as written

    @property
    def indent(self) -> int:
        return len(self.lead) - len(self.lead.lstrip())


@dataclass
class WrittenAnswer:
    blocks: list[Block]

    @property
    def sentences(self) -> list[Sentence]:
        return [s for b in self.blocks for s in b.sentences]

    def render(self, kept: Mapping[int, str]) -> str:
        """The answer with each sentence whose index is in `kept` written as its value and
        every other sentence left out."""
        blocks: list[Block] = []
        for block in self.blocks:
            if block.kind in ("heading", "verbatim"):
                blocks.append(block)
                continue
            texts = [kept[s.index] for s in block.sentences if s.index in kept]
            if texts:
                blocks.append(Block(block.kind, block.lead, [Sentence(t) for t in texts],
                                    block.raw))
        return _join(_renumber(_prune(blocks)))


def parse(text: str, language: str = "en") -> WrittenAnswer:
    """`text` as blocks of sentences (see the module docstring)."""
    blocks: list[Block] = []
    paragraph: list[str] = []
    fence: list[str] | None = None
    table: Block | None = None

    def close() -> None:
        if paragraph:
            joined = " ".join(line.strip() for line in paragraph)
            lead = "> " if joined.startswith(">") else ""
            if lead:
                joined = re.sub(r"(?:^|\s)>\s?", " ", joined).strip()
            blocks.append(Block("paragraph", lead, _sentences(joined, language)))
            paragraph.clear()

    after_blank = False
    for line in text.splitlines():
        wrapped = not after_blank or line.startswith(("  ", "\t"))
        after_blank = not line.strip()
        if fence is not None:
            fence.append(line)
            if _FENCE.match(line):
                blocks.append(Block("verbatim", raw="\n".join(fence)))
                fence = None
            continue
        if line.lstrip().startswith("|"):
            if table is None:
                close()
                table = Block("table", raw=line.rstrip())  # the header row
                blocks.append(table)
            elif _TABLE_RULE.match(line) and not table.sentences:
                table.raw += "\n" + line.rstrip()
            else:
                table.sentences.append(Sentence(line.strip()))
            continue
        table = None
        if _FENCE.match(line):
            close()
            fence = [line]
        elif not line.strip():
            close()
        elif (_HEADING.match(line) or _RULE.match(line) or _LABEL.match(line)) \
                and not MARKER.search(line):  # a cited "heading" is checked as a claim
            close()
            blocks.append(Block("heading", raw=line.rstrip()))
        elif item := _ITEM.match(line):
            close()
            indent, bullet, rest = item.groups()
            blocks.append(Block("item", f"{indent}{bullet} ", _sentences(rest, language)))
        elif blocks and blocks[-1].kind == "item" and not paragraph and wrapped:
            continued = " ".join([*(s.text for s in blocks[-1].sentences), line.strip()])
            blocks[-1].sentences = _sentences(continued, language)
        else:
            paragraph.append(line)
    close()
    if fence is not None:
        blocks.append(Block("verbatim", raw="\n".join(fence)))
    for n, sentence in enumerate(s for b in blocks for s in b.sentences):
        sentence.index = n
    return WrittenAnswer(blocks)


def is_claim(body: str, cited: bool) -> bool:
    """Whether a sentence states something that needs a source."""
    plain = body.strip().rstrip("*_ ")
    if not re.search(r"[^\W_]", plain) or plain.endswith((":", "?")):
        return False
    return cited or not _SILENCE.search(plain)


def expand(group: str) -> list[int]:
    """The numbers inside one marker: "1, 3" -> [1, 3]; "2-4" -> [2, 3, 4]."""
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", group.strip()):
        ends = [int(n) for n in re.split(r"\s*[-–]\s*", part) if n]
        if len(ends) == 2 and 0 <= ends[1] - ends[0] <= 20:
            numbers += range(ends[0], ends[1] + 1)
        else:
            numbers += ends
    return numbers


def _sentences(text: str, language: str) -> list[Sentence]:
    return [Sentence(piece) for piece in split(text, language)]


@lru_cache(maxsize=2048)
def split(text: str, language: str = "en") -> tuple[str, ...]:
    """The sentences of one block of prose. A piece pysbd cuts off after an abbreviation
    ("47 mg. of caffeine") joins its sentence again, as do citation markers written after the
    full stop ("... a day. [1]") and stray closing marks ("**")."""
    merged: list[str] = []
    for piece in segment(_segmenter(language), text):
        piece = piece.strip()
        markers = _LEADING_MARKERS.match(piece)
        if markers and merged:
            merged[-1] += markers.group(0)
            piece = piece[markers.end():].strip()
        if not piece:
            continue
        if merged and not re.search(r"[^\W_]", piece):
            merged[-1] += piece
        elif merged and piece[0].islower():
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return tuple(merged)


_SEGMENTERS: dict[str, Any] = {}


def _segmenter(language: str) -> Any:
    import pysbd

    code = language if language in pysbd.languages.LANGUAGE_CODES else "en"
    if code not in _SEGMENTERS:
        _SEGMENTERS[code] = pysbd.Segmenter(language=code, clean=False)
    return _SEGMENTERS[code]


def _prune(blocks: list[Block]) -> list[Block]:
    """Without headings that head nothing and lead-ins ("In summary:") with nothing after
    them to introduce."""
    kept: list[Block] = []
    for n, block in enumerate(blocks):
        rest = blocks[n + 1:]
        if block.kind == "heading":
            level = _level(block)
            under = []
            for later in rest:
                if later.kind == "heading" and _level(later) <= level:
                    break
                under.append(later)
            if not any(b.kind != "heading" for b in under):
                continue
        elif block.kind == "paragraph" and _leads_in(block) and (
                not rest or rest[0].kind not in ("item", "table", "verbatim")):
            continue
        kept.append(block)
    return kept


def _level(block: Block) -> int:
    heading = _HEADING.match(block.raw)
    if heading:
        return len(heading.group(1).strip())
    return 0 if _RULE.match(block.raw) else 7  # a rule ends every part; bold labels rank last


def _leads_in(block: Block) -> bool:
    return bool(block.sentences) and not any(s.is_claim for s in block.sentences) \
        and block.sentences[-1].body.rstrip("*_ ").endswith(":")


def _renumber(blocks: list[Block]) -> list[Block]:
    """Ordered list items numbered again after removals: 1, 2, 3 rather than 1, 3."""
    counters: dict[int, int] = {}
    for block in blocks:
        if block.kind != "item":
            counters.clear()
            continue
        for depth in [d for d in counters if d > block.indent]:
            del counters[depth]
        ordered = re.match(r"^(\s*)(\d{1,3})([.)]) $", block.lead)
        if ordered:
            indent, number, mark = ordered.groups()
            counters[block.indent] = counters.get(block.indent, int(number) - 1) + 1
            block.lead = f"{indent}{counters[block.indent]}{mark} "
    return blocks


def _join(blocks: list[Block]) -> str:
    parts: list[str] = []
    for n, block in enumerate(blocks):
        if block.kind == "table":
            text = "\n".join([block.raw, *(s.text for s in block.sentences)])
        elif block.kind in ("heading", "verbatim"):
            text = block.raw
        else:
            text = block.lead + " ".join(s.text for s in block.sentences)
        tight = n > 0 and block.kind == "item" and blocks[n - 1].kind == "item"
        parts.append(text if n == 0 else ("\n" if tight else "\n\n") + text)
    return "".join(parts).strip()
