"""Office documents, e-books and PDF metadata, read from files the real libraries write:
DOCX headings and tables in order, a section a PPTX slide and an XLSX sheet, EPUB chapters,
a PDF's title, author, date and bookmarks; zip bombs and malformed files refused with a
reason, and every format indexed and searchable like any other."""

import io
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.config import KnowledgeBaseSettings
from core.errors import UnreadableDocumentError
from core.retrieval.kb.documents import read_document
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.store.catalogue import KnowledgeCatalogue

pytestmark = pytest.mark.unit

CREATED = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)


def docx_bytes() -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = "Tea handbook"
    document.core_properties.author = "Ada Brewer"
    document.core_properties.created = CREATED
    document.add_heading("Green tea", level=1)
    document.add_paragraph("Green tea is steeped at 80 degrees Celsius for two minutes.")
    document.add_heading("Storage", level=2)
    document.add_paragraph("Keep leaves in an airtight tin away from light.")
    table = document.add_table(rows=2, cols=2)
    for row, (name, value) in enumerate([("Variety", "Steep time"), ("Sencha", "1 minute")]):
        table.cell(row, 0).text, table.cell(row, 1).text = name, value
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_bytes() -> bytes:
    import pptx

    deck = pptx.Presentation()
    for title, body, notes in [("Quarterly review", "Revenue grew 12 percent.", ""),
                               ("Hiring plan", "Four engineers join in May.", "Ask HR")]:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def xlsx_bytes() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    prices = workbook.active
    prices.title = "Prices"
    prices.append(["Item", "Price"])
    prices.append(["Kettle", 35])
    staff = workbook.create_sheet("Staff")
    staff.append(["Name", "Role"])
    staff.append(["Grace", "Barista"])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def epub_bytes() -> bytes:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("id-1")
    book.set_title("Lighthouses of the North")
    book.add_author("Ines Keeper")
    book.add_metadata("DC", "date", "1999-07-01")
    chapters = []
    for number, (heading, text) in enumerate([
        ("Stone towers", "The first stone lighthouse on the coast was lit in 1791 after "
         "three ships were lost on the reef in a single winter storm."),
        ("Fresnel lenses", "A Fresnel lens bends light from a small lamp into a beam that "
         "sailors could see twenty miles out at sea on a clear night."),
    ], 1):
        chapter = epub.EpubHtml(title=heading, file_name=f"c{number}.xhtml", lang="en")
        chapter.content = f"<html><body><h1>{heading}</h1><p>{text}</p></body></html>"
        book.add_item(chapter)
        chapters.append(chapter)
    book.toc = chapters
    book.spine = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    buffer = io.BytesIO()
    epub.write_epub(buffer, book)
    return buffer.getvalue()


def pdf_bytes() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Attention in practice")
    pdf.set_author("Ada Lovelace, Alan Turing")
    pdf.set_creation_date(CREATED)
    pdf.set_font("helvetica", size=12)
    for bookmark, text in [("Introduction", "Attention weighs every token against the rest."),
                           ("Method", "We train on two million sentence pairs."),
                           (None, "Training took three days on eight machines.")]:
        pdf.add_page()
        if bookmark is not None:  # the third page is still under "Method"
            pdf.start_section(bookmark)
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def test_docx_keeps_headings_tables_and_properties() -> None:
    document = read_document(Path("tea.docx"), docx_bytes())
    assert (document.title, document.author, document.published) == \
        ("Tea handbook", "Ada Brewer", "2021-03-04")
    storage = next(s for s in document.sections if s.headings[-1:] == ["Storage"])
    assert storage.headings == ["Green tea", "Storage"]
    assert "airtight tin" in storage.text and "Sencha | 1 minute" in storage.text
    assert "80 degrees" in next(s.text for s in document.sections
                                if s.headings == ["Green tea"])


def test_pptx_is_a_section_a_slide_with_its_notes() -> None:
    document = read_document(Path("deck.pptx"), pptx_bytes())
    assert document.title == "Quarterly review"
    assert [s.headings for s in document.sections] == [["Slide 1: Quarterly review"],
                                                       ["Slide 2: Hiring plan"]]
    assert "Four engineers join in May." in document.sections[1].text
    assert "Notes: Ask HR" in document.sections[1].text
    assert document.sections[1].location == "Slide 2: Hiring plan"


def test_xlsx_is_a_section_a_sheet_a_row_a_line() -> None:
    document = read_document(Path("book.xlsx"), xlsx_bytes())
    assert document.title == "book"
    assert [(s.headings, s.text) for s in document.sections] == [
        (["Sheet Prices"], "Item | Price\nKettle | 35"),
        (["Sheet Staff"], "Name | Role\nGrace | Barista")]


def test_epub_chapters_in_reading_order() -> None:
    document = read_document(Path("north.epub"), epub_bytes())
    assert (document.title, document.author, document.published) == \
        ("Lighthouses of the North", "Ines Keeper", "1999-07-01")
    headings = [s.headings[-1] for s in document.sections if s.headings]
    assert headings == ["Stone towers", "Fresnel lenses"]
    assert "twenty miles" in document.sections[-1].text


def test_pdf_title_authors_date_and_bookmarks() -> None:
    document = read_document(Path("paper.pdf"), pdf_bytes())
    assert (document.title, document.author, document.published) == \
        ("Attention in practice", "Ada Lovelace, Alan Turing", "2021-03-04")
    assert [(s.page, s.headings) for s in document.sections] == [
        (1, ["Introduction"]), (2, ["Method"]), (3, ["Method"])]
    assert document.sections[2].location == "page 3, Method"


def test_a_500_page_pdf_is_read_whole_a_section_a_page(tmp_path: Path) -> None:
    from tests.support.corpus import write_pdf

    path = tmp_path / "handbook.pdf"
    write_pdf(path, [f"Page {n} of the handbook: rule {n} says to sweep the floor {n} "
                     "times." for n in range(1, 501)], title="The long handbook")
    document = read_document(path, path.read_bytes())
    assert (document.title, document.pages) == ("The long handbook", 500)
    assert [s.page for s in document.sections] == list(range(1, 501))
    assert "rule 500 says" in document.sections[-1].text


def test_an_encrypted_pdf_is_refused_with_a_reason() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes())))
    writer.encrypt("secret")
    locked = io.BytesIO()
    writer.write(locked)
    with pytest.raises(UnreadableDocumentError, match="encrypted"):
        read_document(Path("locked.pdf"), locked.getvalue())


def _zip(parts: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("bomb.docx", _zip({"word/document.xml": b"\0" * 50_000_000}), "zip bomb"),
    ("bomb.xlsx", _zip({f"xl/{n}.xml": b" " * 5_000_000 for n in range(4)}), "zip bomb"),
    ("plain.pptx", b"just some text, not a zip", "not a zip archive"),
    ("empty.epub", _zip({"mimetype": b"application/epub+zip"}), "not a readable EPUB"),
    ("broken.docx", _zip({"word/document.xml": b"<not xml"}), "not a readable Word"),
    ("truncated.xlsx", xlsx_bytes()[:2000], "not a readable Excel workbook"),
    ("broken.pdf", pdf_bytes()[:300], "PDF"),
])
def test_bombs_and_malformed_files_are_refused_with_a_reason(name: str, data: bytes,
                                                              reason: str) -> None:
    with pytest.raises(UnreadableDocumentError, match=reason):
        read_document(Path(name), data)


async def test_every_format_is_indexed_and_found(
    tmp_path: Path, sqlite_engine: Any, chroma: Any, embedder: Any,
) -> None:
    folder = tmp_path / "office"
    folder.mkdir()
    for name, data in [("tea.docx", docx_bytes()), ("deck.pptx", pptx_bytes()),
                       ("book.xlsx", xlsx_bytes()), ("north.epub", epub_bytes()),
                       ("paper.pdf", pdf_bytes())]:
        (folder / name).write_bytes(data)
    knowledge_base = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder,
                                   KnowledgeBaseSettings())
    report = await knowledge_base.index([folder], "t1")
    assert sorted(Path(p).name for p in report.added) == \
        ["book.xlsx", "deck.pptx", "north.epub", "paper.pdf", "tea.docx"]
    assert report.skipped == []
    for query, expected in [("How long is green tea steeped?", "80 degrees"),
                            ("How many engineers join in May?", "Four engineers"),
                            ("What does the kettle cost?", "Kettle | 35"),
                            ("How far could sailors see the Fresnel lens beam?", "twenty miles"),
                            ("How long did training take?", "three days")]:
        hits = await knowledge_base.search(query, "t1", limit=3)
        assert any(expected in hit.snippet for hit in hits), (query, hits)
