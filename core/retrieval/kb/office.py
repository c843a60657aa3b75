"""Office documents and e-books read into titled sections: DOCX (headings and tables in
order), PPTX (one section a slide, its notes included), XLSX (one section a sheet, a row a
line) and EPUB (chapters in reading order), through python-docx, python-pptx, openpyxl and
EbookLib. Each is a zip archive: its parts are measured before anything is unpacked, so an
archive that would expand far beyond its size (a zip bomb) is refused, not read."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

from core.errors import UnreadableDocumentError
from core.retrieval.kb.documents import (
    Document,
    Section,
    clean_heading,
    markdown_document,
    title_from_name,
)

OFFICE_SUFFIXES = frozenset({".docx", ".pptx", ".xlsx", ".epub"})
# What an archive's parts may add up to once unpacked: this many times its own size, and
# never more than MAX_UNPACKED_BYTES (real documents stay far below both).
MAX_EXPANSION = 100
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
# A spreadsheet's rows read per sheet (a sheet of a million rows is data, not prose).
MAX_SHEET_ROWS = 20_000

_KINDS = {".docx": "Word document", ".pptx": "PowerPoint presentation",
          ".xlsx": "Excel workbook", ".epub": "EPUB book"}


def read_office(path: Path, data: bytes) -> Document:
    """The document in `data` (its kind by `path`'s suffix); UnreadableDocumentError with a
    reason a person can act on when it cannot be read."""
    suffix = path.suffix.lower()
    kind = _KINDS[suffix]
    check_archive(data, kind)
    reader: Callable[[Path, bytes], Document] = _READERS[suffix]
    try:
        document = reader(path, data)
    except UnreadableDocumentError:
        raise
    except Exception as error:  # each library raises its own types for a malformed file
        raise UnreadableDocumentError(f"not a readable {kind} ({type(error).__name__})"
                                      ) from error
    document.sections = [s for s in document.sections if s.text.strip()]
    if not document.sections:
        raise UnreadableDocumentError(f"the {kind} has no text")
    return document


def check_archive(data: bytes, kind: str) -> None:
    """Refuse what is not a zip archive, and one whose parts would unpack to more than
    MAX_EXPANSION times its size or MAX_UNPACKED_BYTES."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(part.file_size for part in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise UnreadableDocumentError(f"not a readable {kind} (not a zip archive: {error})"
                                      ) from error
    if unpacked > min(MAX_EXPANSION * max(len(data), 1), MAX_UNPACKED_BYTES):
        raise UnreadableDocumentError(
            f"the {kind} would unpack to {unpacked / 1024 / 1024:.0f} MB from "
            f"{len(data) / 1024 / 1024:.1f} MB: refused as a possible zip bomb")


def _read_docx(path: Path, data: bytes) -> Document:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    book = docx.Document(io.BytesIO(data))
    lines: list[str] = []
    for element in book.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(element, book)
            text = paragraph.text.strip()
            level = _heading_level(paragraph.style.name if paragraph.style else "")
            if text and level:
                lines += ["", "#" * level + " " + clean_heading(text), ""]
            elif text:
                lines += [text, ""]
        elif tag == "tbl":
            lines += [*_table_lines(Table(element, book)), ""]
    document = markdown_document(path, "\n".join(lines))
    properties = book.core_properties
    document.title = clean_heading(properties.title or "") or document.title
    document.author = properties.author or None
    document.published = _date_text(properties.created)
    return document


def _heading_level(style: str) -> int:
    """1-6 for Word's "Title" and "Heading N" styles, else 0."""
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        number = style.removeprefix("Heading ").strip()
        if number.isdigit():
            return min(max(int(number), 1), 6)
    return 0


def _table_lines(table: Any) -> Iterator[str]:
    for row in table.rows:
        cells = [" ".join(cell.text.split()) for cell in row.cells]
        if any(cells):
            yield " | ".join(cells)


def _read_pptx(path: Path, data: bytes) -> Document:
    import pptx

    deck = pptx.Presentation(io.BytesIO(data))
    sections: list[Section] = []
    first_title = ""
    for number, slide in enumerate(deck.slides, 1):
        title_shape = slide.shapes.title
        title = clean_heading(title_shape.text_frame.text) if title_shape is not None and \
            title_shape.has_text_frame else ""
        first_title = first_title or title
        lines: list[str] = []
        for shape in slide.shapes:
            if shape is title_shape:
                continue
            if shape.has_text_frame:
                lines += [p.text for p in shape.text_frame.paragraphs if p.text.strip()]
            if getattr(shape, "has_table", False) and shape.has_table:
                lines += list(_table_lines(shape.table))
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                lines += ["Notes: " + notes.text.strip()]
        heading = f"Slide {number}" + (f": {title}" if title else "")
        sections.append(Section(text="\n".join([title, *lines]).strip(), headings=[heading]))
    properties = deck.core_properties
    return Document(title=clean_heading(properties.title or "") or first_title
                    or title_from_name(path), sections=sections,
                    author=properties.author or None,
                    published=_date_text(properties.created), pages=len(sections))


def _read_xlsx(path: Path, data: bytes) -> Document:
    import openpyxl

    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        sections = []
        for sheet in workbook.worksheets:
            lines = []
            for row in sheet.iter_rows(max_row=MAX_SHEET_ROWS, values_only=True):
                cells = ["" if value is None else " ".join(str(value).split())
                         for value in row]
                while cells and not cells[-1]:
                    cells.pop()
                if any(cells):
                    lines.append(" | ".join(cells))
            sections.append(Section(text="\n".join(lines), headings=[f"Sheet {sheet.title}"]))
        properties = workbook.properties
        return Document(title=clean_heading(properties.title or "") or title_from_name(path),
                        sections=sections, author=properties.creator or None,
                        published=_date_text(properties.created), pages=len(sections))
    finally:
        workbook.close()


def _read_epub(path: Path, data: bytes) -> Document:
    import ebooklib
    from ebooklib import epub

    book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": True})
    chapters = []
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        text = _chapter_markdown(item.get_content())
        if text.strip():
            chapters.append(text)
    document = markdown_document(path, "\n\n".join(chapters))

    def first(name: str) -> str | None:
        values = book.get_metadata("DC", name)
        return str(values[0][0]).strip() or None if values else None

    document.title = clean_heading(first("title") or "") or document.title
    document.author = first("creator")
    document.published = (first("date") or "")[:64] or None
    return document


_BLOCKS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "blockquote", "pre",
                     "dt", "dd", "tr", "figcaption", "caption"})


def _chapter_markdown(xhtml: bytes) -> str:
    """A chapter's text with its headings as Markdown: every outermost block on its own
    line (a book has no navigation or boilerplate to drop, unlike a web page)."""
    import lxml.html

    if not xhtml.strip():
        return ""
    root = lxml.html.fromstring(xhtml, parser=lxml.html.HTMLParser(no_network=True,
                                                                     huge_tree=False))
    lines = []
    for element in root.iter(*_BLOCKS):
        if any(parent.tag in _BLOCKS for parent in element.iterancestors()):
            continue
        if element.tag == "tr":
            text = " | ".join(" ".join(cell.text_content().split())
                              for cell in element.iter("td", "th"))
        else:
            text = " ".join(element.text_content().split())
        if not text:
            continue
        if element.tag[:1] == "h" and element.tag[1:].isdigit():
            lines += ["", "#" * int(element.tag[1:]) + " " + clean_heading(text), ""]
        else:
            lines += [text, ""]
    return "\n".join(lines)


def _date_text(value: datetime | date | None) -> str | None:
    return value.date().isoformat() if isinstance(value, datetime) else \
        value.isoformat() if isinstance(value, date) else None


_READERS: dict[str, Callable[[Path, bytes], Document]] = {
    ".docx": _read_docx, ".pptx": _read_pptx, ".xlsx": _read_xlsx, ".epub": _read_epub,
}
