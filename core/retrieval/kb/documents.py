"""Read files into titled sections; each format keeps what a citation needs (heading, page)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any

from core.errors import UnreadableDocumentError

# Part of every file's content hash: a new version re-indexes files read the old way.
READER_VERSION = "5"
SUPPORTED_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".pdf",
                                ".docx", ".pptx", ".xlsx", ".epub"})


@dataclass
class Section:
    text: str
    headings: list[str] = field(default_factory=list)
    page: int | None = None

    @property
    def location(self) -> str | None:
        parts = []
        if self.page is not None:
            parts.append(f"page {self.page}")
        if self.headings:
            parts.append(" > ".join(self.headings))
        return ", ".join(parts) or None


@dataclass
class Document:
    title: str
    sections: list[Section]
    author: str | None = None
    published: str | None = None
    pages: int | None = None  # a PDF's pages, a deck's slides, a workbook's sheets


def looks_binary(data: bytes) -> bool:
    """True when bytes are not text: NULs, or many control bytes in the first 8 KiB."""
    head = data[:8192]
    if b"\x00" in head:
        return True
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    return bool(head) and controls / len(head) > 0.05


def read_document(path: Path, data: bytes) -> Document:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return _read_pdf(path, data)
    if suffix in (".docx", ".pptx", ".xlsx", ".epub"):
        from core.retrieval.kb.office import read_office

        return read_office(path, data)
    if looks_binary(data):
        raise UnreadableDocumentError("binary content in a text file")
    text = _decode(data)
    if suffix in (".html", ".htm"):
        return _read_html(path, text)
    if suffix == ".rst":
        return _split_sections(path, text, _rst_headings(text))
    if suffix in (".md", ".markdown"):
        return markdown_document(path, text)
    return Document(title=title_from_name(path), sections=[Section(text=text)])


def markdown_document(path: Path, text: str) -> Document:
    """Markdown text as a document: a section under each heading, titled by the first."""
    return _split_sections(path, text, _markdown_headings(text))


def _decode(data: bytes) -> str:
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def title_from_name(path: Path) -> str:
    return path.stem.replace("_", " ").replace("-", " ").strip() or path.name


def clean_heading(text: str) -> str:
    """A heading as a reader sees it: no permalink marks, emphasis or code ticks."""
    return re.sub(r"\s+", " ", text.replace("\u00b6", "").replace("`", "").replace("*", "")).strip()


_FENCE = re.compile(r"^\s*(```|~~~)")


def _markdown_headings(text: str) -> list[tuple[int, int, str]]:
    """(line index, level, title) of each ATX heading outside code fences."""
    found = []
    in_fence = False
    for index, line in enumerate(text.splitlines()):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        match = re.match(r"^(#{1,6})\s+(.+?)\s*#*\s*$", line)
        if match and not in_fence:
            # an entity is the character it stands for, as Markdown shows it: "Owens &amp;
            # Minor" is titled "Owens & Minor"
            found.append((index, len(match.group(1)), clean_heading(unescape(match.group(2)))))
    return found


_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")


def _rst_headings(text: str) -> list[tuple[int, int, str]]:
    """reStructuredText titles: a line underlined (optionally overlined) by punctuation."""
    lines = text.splitlines()
    levels: dict[str, int] = {}
    found = []
    for index in range(1, len(lines)):
        title = lines[index - 1].strip()
        adornment = _RST_ADORNMENT.match(lines[index])
        if not adornment or not title or _RST_ADORNMENT.match(lines[index - 1]):
            continue
        if len(lines[index].rstrip()) < len(title):
            continue
        char = adornment.group(1)
        overlined = index >= 2 and lines[index - 2].strip() == lines[index].strip()
        key = ("over" if overlined else "") + char
        level = levels.setdefault(key, len(levels) + 1)
        found.append((index - 1, level, clean_heading(title)))
    return found


def _split_sections(path: Path, text: str, headings: list[tuple[int, int, str]]) -> Document:
    lines = text.splitlines()
    title = headings[0][2] if headings else title_from_name(path)
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    skip = {h[0] for h in headings} | {h[0] + 1 for h in headings if _is_rst_underline(lines, h)}
    skip |= {h[0] - 1 for h in headings if _is_rst_overline(lines, h)}
    bounds = [h[0] for h in headings] + [len(lines)]
    if not headings or bounds[0] > 0:
        sections.append(Section(text="\n".join(lines[: bounds[0]])))
    for (start, level, heading), end in zip(headings, bounds[1:], strict=True):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        body = [line for offset, line in enumerate(lines[start:end], start) if offset not in skip]
        sections.append(Section(text="\n".join(body), headings=[h for _, h in stack]))
    return Document(title=title, sections=[s for s in sections if s.text.strip()])


def _is_rst_underline(lines: list[str], heading: tuple[int, int, str]) -> bool:
    index = heading[0] + 1
    return index < len(lines) and bool(_RST_ADORNMENT.match(lines[index]))


def _is_rst_overline(lines: list[str], heading: tuple[int, int, str]) -> bool:
    index = heading[0] - 1
    return index >= 0 and bool(_RST_ADORNMENT.match(lines[index]))


def html_text(html: str) -> str:
    """The page's main text as Markdown (headings kept), or "" when there is none."""
    import trafilatura

    # trafilatura's own metadata pass (htmldate, dateparser) costs as much as the text
    # extraction itself; the few fields we keep are read from the tags instead.
    extracted = trafilatura.bare_extraction(
        html,
        output_format="python",
        include_formatting=True,
        include_tables=True,
        include_comments=False,
        favor_recall=True,
        with_metadata=False,
    )
    data = {} if extracted is None else (
        extracted.as_dict() if hasattr(extracted, "as_dict") else dict(extracted)
    )
    return _unescape_prose((data.get("text") or "").replace("\u00b6", ""))


def _read_html(path: Path, html: str) -> Document:
    body = html_text(html)
    if not body.strip():
        raise UnreadableDocumentError("no main text found in the HTML")
    headings = _markdown_headings(body)
    document = _split_sections(path, body, headings)
    meta = _html_meta(html)
    if not headings:
        document.title = meta.get("title") or document.title
    document.author = meta.get("author")
    document.published = meta.get("published")
    return document


# trafilatura's markdown escapes punctuation (parse\_float, \[1\]); readers want it plain.
_MARKDOWN_ESCAPE = re.compile(r"\\([`*_\[\]>])")


def _unescape_prose(markdown: str) -> str:
    """Drop markdown escapes outside fenced code, where backslashes are the code's own."""
    parts = re.split(r"(```.*?```)", markdown, flags=re.S)
    return "".join(
        part if part.startswith("```") else _MARKDOWN_ESCAPE.sub(r"\1", part) for part in parts
    )


_META_TAG = re.compile(r"<meta\s[^>]*>", re.I)
_ATTRIBUTE = re.compile(r"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_TITLE_TAG = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_DATE_NAMES = ("article:published_time", "date", "dc.date", "dc.date.issued",
               "dcterms.created", "citation_publication_date", "pubdate")


def _html_meta(html: str) -> dict[str, str]:
    """Title, author and publication date from <title> and <meta> tags."""
    found: dict[str, str] = {}
    title = _TITLE_TAG.search(html[:200_000])
    if title:
        found["title"] = clean_heading(unescape(re.sub(r"<[^>]+>", "", title.group(1))))
    for tag in _META_TAG.findall(html[:200_000]):
        attributes = {k.lower(): a or b for k, a, b in _ATTRIBUTE.findall(tag)}
        name = (attributes.get("name") or attributes.get("property") or "").lower()
        content = unescape(attributes.get("content", "")).strip()
        if not content:
            continue
        if name == "author":
            found.setdefault("author", content)
        elif name in _DATE_NAMES:
            found.setdefault("published", content[:64])
    return found


def _read_pdf(path: Path, data: bytes) -> Document:
    import io

    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise UnreadableDocumentError("the PDF is encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
        outline = _pdf_outline(reader)
    except UnreadableDocumentError:
        raise
    except Exception as error:  # pypdf raises many types for a malformed file
        raise UnreadableDocumentError(f"not a readable PDF ({type(error).__name__})") from error
    sections = [Section(text=text, page=n, headings=outline.get(n, []))
                for n, text in enumerate(pages, 1) if text.strip()]
    if not sections:
        raise UnreadableDocumentError("the PDF has no extractable text (scanned images?)")
    title = clean_heading(str(_pdf_field(info, "title") or "")) or title_from_name(path)
    created = _pdf_field(info, "creation_date")
    return Document(title=title, sections=sections,
                    author=clean_heading(str(_pdf_field(info, "author") or "")) or None,
                    published=created.date().isoformat() if created is not None else None,
                    pages=len(pages))


def _pdf_field(info: object, name: str) -> Any:
    """A document-information field, None when absent or malformed (a bad date string)."""
    if info is None:
        return None
    try:
        return getattr(info, name)
    except Exception:  # pypdf parses dates on access and raises on a malformed one
        return None


def _pdf_outline(reader: Any) -> dict[int, list[str]]:
    """For each page number, the outline headings (bookmarks) it falls under: the path to the
    last heading that starts on or before it. {} when the PDF has no usable outline."""
    starts: list[tuple[int, list[str]]] = []

    def walk(entries: list[Any], parents: list[str]) -> None:
        last: list[str] = parents
        for entry in entries:
            if isinstance(entry, list):
                walk(entry, last)
                continue
            try:
                page = reader.get_destination_page_number(entry) + 1
            except Exception:  # a bookmark to nowhere
                continue
            last = [*parents, clean_heading(str(entry.title))]
            starts.append((page, last))

    try:
        walk(reader.outline, [])
    except Exception:  # a malformed outline is no reason to refuse the text
        return {}
    if not starts:
        return {}
    starts.sort(key=lambda start: start[0])
    under: dict[int, list[str]] = {}
    current: list[str] = []
    index = 0
    for page in range(1, len(reader.pages) + 1):
        while index < len(starts) and starts[index][0] <= page:
            current = starts[index][1]
            index += 1
        if current:
            under[page] = current[-3:]
    return under
