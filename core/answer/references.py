"""One reference a document. While an answer is written and checked its markers number
passages (core.answer.citations); the reader is shown each document once: its reference
lists the pages or sections the cited passages come from, with authors and year where
known, and a marker names the page where the document has pages (`[1, p. 3]`,
`[1, pp. 3, 5; 2]`). Pure functions, applied once every check has passed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.answer.sentences import MARKER, expand
from core.models import Reference, Source

_PAGE = re.compile(r"^page (\d+)")
# A marker as `by_document` writes it: document numbers, each with the pages cited
# (`[1]`, `[1, 2]`, `[1, p. 3]`, `[1, pp. 3, 5; 2]`); group 1 is what is inside.
_CITED = r"\d+(?:, pp?\. \d+(?:, \d+)*)?"
MARKER_TEXT = rf"\[({_CITED}(?:[;,] {_CITED})*)\]"
DOCUMENT_MARKER = re.compile(rf"\s?{MARKER_TEXT}")


@dataclass
class _Document:
    first: Reference
    source: Source | None
    source_ids: list[str] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)


def by_document(summary: str, detail: str, references: list[Reference],
                sources: list[Source]) -> tuple[str, str, list[Reference]]:
    """The answer's text and references with passages of one document merged into one
    reference, numbered in order of first citation."""
    by_id = {source.id: source for source in sources}
    numbering = document_numbering(references, sources)
    cited: dict[int, tuple[int, int | None]] = {}  # passage number -> (document, page)
    documents: dict[int, _Document] = {}
    for reference in sorted(references, key=lambda r: r.number):
        source = by_id.get(reference.source_id)
        number = numbering[reference.source_id]
        page, section = _place(source.location if source is not None else None)
        cited[reference.number] = (number, page)
        document = documents.setdefault(number, _Document(reference, source))
        document.source_ids.append(reference.source_id)
        if page is not None and page not in document.pages:
            document.pages.append(page)
        if section and section not in document.sections:
            document.sections.append(section)

    def rewrite(match: re.Match[str]) -> str:
        pages: dict[int, list[int]] = {}
        for passage in expand(match.group(1)):
            if passage in cited:
                number, page = cited[passage]
                found = pages.setdefault(number, [])
                if page is not None and page not in found:
                    found.append(page)
        return marker(pages)

    merged = [_reference(number, document) for number, document in sorted(documents.items())]
    return MARKER.sub(rewrite, summary), MARKER.sub(rewrite, detail), merged


def document_numbering(references: list[Reference], sources: list[Source]) -> dict[str, int]:
    """The number each cited passage (by source id) is shown under once passages of one
    document are merged: documents numbered in order of first citation."""
    by_id = {source.id: source for source in sources}
    numbers: dict[str, int] = {}
    return {reference.source_id: numbers.setdefault(
                _document_key(reference, by_id.get(reference.source_id)), len(numbers) + 1)
            for reference in sorted(references, key=lambda r: r.number)}


def marker(pages: dict[int, list[int]]) -> str:
    """` [1, p. 3; 2]` for these documents and the pages of each cited here."""
    if not pages:
        return ""
    parts = [f"{number}, {pages_text(pages[number])}" if pages[number] else str(number)
             for number in sorted(pages)]
    joiner = "; " if any(pages.values()) else ", "
    return f" [{joiner.join(parts)}]"


def pages_text(pages: list[int]) -> str:
    """`p. 3` or `pp. 3, 5`."""
    cited = sorted(pages)
    return f"p. {cited[0]}" if len(cited) == 1 else \
        f"pp. {', '.join(str(page) for page in cited)}"


def marker_parts(inner: str) -> tuple[str, list[str]]:
    """A marker's inside as the joiner and its parts, one a document: `1, p. 3; 2` ->
    ("; ", ["1, p. 3", "2"]); `1, 2` -> (", ", ["1", "2"])."""
    joiner = "; " if ";" in inner or "p." in inner else ", "
    return joiner, [part.strip() for part in inner.split(joiner.strip())]


def document_numbers(inner: str) -> list[int]:
    """The document numbers a marker's inside (`1, p. 3; 2`, `1, 2`) cites."""
    if "p." not in inner:
        return expand(inner)
    return [int(part.split(",")[0]) for part in marker_parts(inner)[1]]


def _document_key(reference: Reference, source: Source | None) -> str:
    if source is None:
        return f"source:{reference.source_id}"
    return source.document_id or source.url or source.path or f"title:{source.title}"


def _place(location: str | None) -> tuple[int | None, str]:
    """The page a location names, and the rest of it (a section: `Cats > Sleep`)."""
    if not location:
        return None, ""
    page = _PAGE.match(location)
    if page is None:
        return None, location
    return int(page.group(1)), location[page.end():].lstrip(", ")


def _reference(number: int, document: _Document) -> Reference:
    source = document.source
    where = (source.url or source.path or "") if source is not None \
        else document.first.where
    pages = sorted(document.pages)
    if pages:
        where += (", " if where else "") + pages_text(pages)
    elif document.sections:
        where += f" ({'; '.join(document.sections[:5])})"
    year = None
    if source is not None and source.metadata.published_at is not None:
        year = str(source.metadata.published_at.year)
    return Reference(number=number, source_id=document.first.source_id,
                     title=document.first.title, where=where.strip(),
                     authors=source.metadata.author if source is not None else None,
                     year=year, source_ids=document.source_ids, pages=pages)
