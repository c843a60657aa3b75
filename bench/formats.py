"""How fast each document format is read into sections (core.retrieval.kb.documents), on
samples written here by the same libraries people's tools use: a 50-page Word report, a
40-slide deck, a workbook of 5 sheets x 2,000 rows, a 20-chapter EPUB, a 50-page PDF, and
the same text as Markdown for scale. Prints one table: size, read time (median of 3),
sections, characters of text kept, and characters read a millisecond.

    .venv/bin/python bench/formats.py
"""

from __future__ import annotations

import io
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from core.retrieval.kb.documents import read_document

PARAGRAPH = ("Incremental indexing hashes each file and embeds again only the chunks whose "
             "text changed since the last run, so a large folder that barely changed is "
             "indexed in seconds rather than minutes. ")


def markdown() -> bytes:
    parts = []
    for page in range(50):
        parts.append(f"## Section {page}\n\n" + "\n\n".join([PARAGRAPH * 3] * 4))
    return "\n\n".join(parts).encode()


def docx_file() -> bytes:
    import docx

    document = docx.Document()
    for page in range(50):
        document.add_heading(f"Section {page}", level=2)
        for _ in range(4):
            document.add_paragraph(PARAGRAPH * 3)
        table = document.add_table(rows=4, cols=3)
        for row in range(4):
            for column in range(3):
                table.cell(row, column).text = f"r{row} c{column} value {page}"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_file() -> bytes:
    import pptx

    deck = pptx.Presentation()
    for number in range(40):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {number}"
        slide.placeholders[1].text = PARAGRAPH * 2
        slide.notes_slide.notes_text_frame.text = PARAGRAPH
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def xlsx_file() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    for sheet_number in range(5):
        sheet = workbook.active if sheet_number == 0 else workbook.create_sheet()
        sheet.title = f"Sheet {sheet_number}"
        sheet.append(["id", "name", "amount", "note"])
        for row in range(2000):
            sheet.append([row, f"item {row}", row * 1.5, "checked by the night shift"])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def epub_file() -> bytes:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("bench")
    book.set_title("Bench book")
    chapters = []
    for number in range(20):
        chapter = epub.EpubHtml(title=f"Chapter {number}", file_name=f"c{number}.xhtml")
        body = "".join(f"<p>{PARAGRAPH * 3}</p>" for _ in range(10))
        chapter.content = f"<html><body><h1>Chapter {number}</h1>{body}</body></html>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.spine = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    buffer = io.BytesIO()
    epub.write_epub(buffer, book)
    return buffer.getvalue()


def pdf_file() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for page in range(50):
        pdf.add_page()
        pdf.start_section(f"Section {page}")
        pdf.multi_cell(0, 6, PARAGRAPH * 6)
    return bytes(pdf.output())


SAMPLES: list[tuple[str, str, Callable[[], bytes]]] = [
    ("Markdown", "sample.md", markdown), ("Word", "sample.docx", docx_file),
    ("PowerPoint", "sample.pptx", pptx_file), ("Excel", "sample.xlsx", xlsx_file),
    ("EPUB", "sample.epub", epub_file), ("PDF", "sample.pdf", pdf_file),
]


def main() -> None:
    rows = []
    for kind, name, make in SAMPLES:
        data = make()
        times = []
        for _ in range(3):
            started = time.perf_counter()
            document = read_document(Path(name), data)
            times.append(time.perf_counter() - started)
        seconds = statistics.median(times)
        chars = sum(len(section.text) for section in document.sections)
        rows.append([kind, f"{len(data) / 1024:.0f}", f"{seconds * 1000:.0f}",
                     str(len(document.sections)), f"{chars:,}",
                     f"{chars / (seconds * 1000):,.0f}"])
    header = ["format", "file KB", "read ms", "sections", "text chars", "chars per ms"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
