"""Section-aware chunking: ~chunk_tokens per chunk with overlap; code and tables kept whole."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.retrieval.kb.documents import Section

# Word-piece tokens per whitespace word in English prose, measured with MiniLM's tokenizer.
_TOKENS_PER_WORD = 1.3
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_TABLE_LINE = re.compile(r"^\s*(\||\+[-=+]+\+)")


@dataclass
class Chunk:
    text: str
    headings: list[str]
    page: int | None
    ordinal: int = 0

    @property
    def location(self) -> str | None:
        return Section(text="", headings=self.headings, page=self.page).location


def wordpiece_tokens(text: str) -> int:
    """The embedder's (MiniLM's) word-piece tokens in `text`, which chunk sizes are measured
    in; a model's tokens are core.text.estimate_tokens."""
    return int(len(text.split()) * _TOKENS_PER_WORD) + 1


@dataclass
class _Block:
    text: str
    atomic: bool  # code block or table: never split, never used as overlap

    @property
    def tokens(self) -> int:
        return wordpiece_tokens(self.text)


def chunk_sections(
    sections: list[Section], chunk_tokens: int = 400, overlap_tokens: int = 60
) -> list[Chunk]:
    chunks: list[Chunk] = []
    for section in sections:
        for text in _pack(_blocks(section.text), chunk_tokens, overlap_tokens):
            chunks.append(Chunk(text=text, headings=list(section.headings), page=section.page))
    for ordinal, chunk in enumerate(chunks):
        chunk.ordinal = ordinal
    return chunks


def _blocks(text: str) -> list[_Block]:
    """Paragraphs, fenced code blocks and tables, in order."""
    blocks: list[_Block] = []
    lines = text.splitlines()
    paragraph: list[str] = []

    def flush() -> None:
        if any(line.strip() for line in paragraph):
            blocks.append(_Block("\n".join(paragraph).strip(), atomic=False))
        paragraph.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        fence = re.match(r"^\s*(```|~~~)", line)
        if fence:
            flush()
            end = index + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
                end += 1
            blocks.append(_Block("\n".join(lines[index : end + 1]), atomic=True))
            index = end + 1
            continue
        if _TABLE_LINE.match(line):
            flush()
            end = index
            while end < len(lines) and _TABLE_LINE.match(lines[end]):
                end += 1
            blocks.append(_Block("\n".join(lines[index:end]), atomic=True))
            index = end
            continue
        if not line.strip():
            flush()
        else:
            paragraph.append(line)
        index += 1
    flush()
    return blocks


def _pack(blocks: list[_Block], limit: int, overlap: int) -> list[str]:
    pieces = [piece for block in blocks for piece in _fit(block, limit)]
    chunks: list[str] = []
    current: list[_Block] = []
    size = 0
    for piece in pieces:
        if current and size + piece.tokens > limit:
            chunks.append("\n\n".join(b.text for b in current))
            current = _overlap_tail(current, overlap)
            size = sum(b.tokens for b in current)
        current.append(piece)
        size += piece.tokens
    if current and not _only_overlap(current, chunks):
        chunks.append("\n\n".join(b.text for b in current))
    return chunks


def _only_overlap(current: list[_Block], chunks: list[str]) -> bool:
    return bool(chunks) and chunks[-1].endswith("\n\n".join(b.text for b in current))


def _overlap_tail(blocks: list[_Block], overlap: int) -> list[_Block]:
    """The last sentences of the previous chunk, up to `overlap` tokens, never code or tables."""
    if overlap <= 0 or not blocks or blocks[-1].atomic:
        return []
    tail: list[str] = []
    size = 0
    for sentence in reversed(_SENTENCE_END.split(blocks[-1].text)):
        size += wordpiece_tokens(sentence)
        if size > overlap:
            break
        tail.insert(0, sentence)
    return [_Block(" ".join(tail), atomic=False)] if tail else []


def _fit(block: _Block, limit: int) -> list[_Block]:
    """Split a block larger than a chunk: prose by sentence, code and tables (at 2x) by line."""
    if block.tokens <= limit or (block.atomic and block.tokens <= 2 * limit):
        return [block]
    units = block.text.splitlines() if block.atomic else _SENTENCE_END.split(block.text)
    joiner = "\n" if block.atomic else " "
    parts: list[_Block] = []
    current: list[str] = []
    for unit in units:
        for piece in _split_words(unit, limit):
            if current and wordpiece_tokens(joiner.join([*current, piece])) > limit:
                parts.append(_Block(joiner.join(current), block.atomic))
                current = []
            current.append(piece)
    if current:
        parts.append(_Block(joiner.join(current), block.atomic))
    return parts


def _split_words(text: str, limit: int) -> list[str]:
    words = text.split(" ")
    step = max(1, int(limit / _TOKENS_PER_WORD) - 1)
    if len(words) <= step:
        return [text]
    return [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
