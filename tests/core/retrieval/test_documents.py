from pathlib import Path

import pytest

from core.errors import UnreadableDocumentError
from core.retrieval.kb.chunking import chunk_sections, wordpiece_tokens
from core.retrieval.kb.documents import Section, read_document
from tests.support.corpus import CORPUS, write_pdf

pytestmark = pytest.mark.unit


def test_markdown_sections_keep_their_heading_path() -> None:
    document = read_document(Path("cats.md"), CORPUS["cats.md"].encode())
    assert document.title == "Cats"
    headings = [s.headings for s in document.sections]
    assert ["Cats", "Sleep"] in headings and ["Cats", "Diet"] in headings
    sleep = next(s for s in document.sections if s.headings == ["Cats", "Sleep"])
    assert "12 and 16 hours" in sleep.text and "# " not in sleep.text


def test_a_markdown_heading_shows_the_character_an_entity_stands_for() -> None:
    document = read_document(Path("firm.md"), b"# Marsh &amp; Vale\n\nA firm of surveyors.\n")
    assert document.title == "Marsh & Vale"


def test_rst_titles_become_headings() -> None:
    document = read_document(Path("v.rst"), CORPUS["volcanoes.rst"].encode())
    assert document.title == "Volcanoes"
    assert any(s.headings == ["Volcanoes", "Eruptions"] for s in document.sections)
    assert all("=====" not in s.text and "-----" not in s.text for s in document.sections)


def test_html_keeps_main_text_not_navigation() -> None:
    document = read_document(Path("bread.html"), CORPUS["bread.html"].encode())
    text = " ".join(s.text for s in document.sections)
    assert document.title == "Baking sourdough bread"
    assert "lactic acid bacteria" in text
    assert "Shop our ovens" not in text and "Cookie settings" not in text


def test_pdf_pages_are_numbered(tmp_path: Path) -> None:
    path = tmp_path / "p.pdf"
    write_pdf(path, ["First page about the Sun.", "Second page about Jupiter."])
    document = read_document(path, path.read_bytes())
    assert [s.page for s in document.sections] == [1, 2]
    assert "Jupiter" in document.sections[1].text
    assert document.sections[1].location == "page 2"


@pytest.mark.parametrize(
    ("name", "data"),
    [("x.txt", b"\x00\x01\x02binary\x00" * 50), ("x.pdf", b"%PDF-1.4 not really a pdf")],
)
def test_unreadable_documents_raise(name: str, data: bytes) -> None:
    with pytest.raises(UnreadableDocumentError):
        read_document(Path(name), data)


def test_non_utf8_text_is_decoded() -> None:
    document = read_document(Path("x.txt"), "Café crème brûlée".encode("cp1252"))
    assert "Café crème" in document.sections[0].text


def test_chunks_respect_size_and_overlap() -> None:
    sentences = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(400))
    chunks = chunk_sections([Section(text=sentences, headings=["Long"])], 200, 30)
    assert len(chunks) > 5
    assert all(wordpiece_tokens(c.text) <= 200 + 40 for c in chunks)
    assert all(c.headings == ["Long"] for c in chunks)
    first_tail = chunks[0].text.split(". ")[-1]
    assert first_tail.rstrip(".") in chunks[1].text  # overlap carries the last sentence


def test_code_blocks_and_tables_are_not_split() -> None:
    prose = "Intro words here. " * 60
    code = "```\n" + "\n".join(f"line_{i} = {i}" for i in range(60)) + "\n```"
    table = "\n".join(f"| row {i} | value {i} |" for i in range(30))
    chunks = chunk_sections([Section(text=f"{prose}\n\n{code}\n\n{table}\n\n{prose}")], 200, 30)
    assert sum(code in c.text for c in chunks) == 1
    assert sum(table in c.text for c in chunks) == 1


def test_html_metadata_comes_from_meta_tags() -> None:
    html = (
        b'<html><head><title>Old &amp; news</title><meta name="author" content="Ada">'
        b'<meta content="2015-05-03" property="article:published_time"></head><body>'
        b"<p>A paragraph long enough for the extractor to keep it as the main text of the "
        b"page, about the history of calculating engines.</p></body></html>"
    )
    document = read_document(Path("old.html"), html)
    assert (document.title, document.author, document.published) == (
        "Old & news", "Ada", "2015-05-03")


def test_html_text_is_plain_but_code_keeps_its_backslashes() -> None:
    html = (
        b"<html><body><article><h1>Regular expressions</h1>"
        b"<p>The function parse_float receives [1] the matched text of each float found in "
        b"the document, which is the common case for most parsers in the library.</p>"
        b"<pre>pattern = r'\\d+\\.\\d+'</pre></article></body></html>"
    )
    text = " ".join(s.text for s in read_document(Path("re.html"), html).sections)
    assert "parse_float receives [1]" in text
    assert "\\d+\\.\\d+" in text
