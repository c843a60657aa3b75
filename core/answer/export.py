"""An answer saved as a document: Markdown, HTML, PDF or Word, each with the question, the
answer with its citation markers, the confidence, the limitations, and the references (title
with authors and year, the link or file, the pages, the passages quoted).

Everything in an answer came from documents and pages nobody here vouches for, so every piece
is written as text in the format's own terms: escaped in Markdown and HTML, plain runs in
Word, plain strings in the PDF (reportlab's paragraphs parse markup: it is escaped). A title
cannot become a link, a script or a heading.

PDF: reportlab (a maintained, pure-Python wheel: no browser, no system service). It draws
with DejaVu Sans where the system has it (most scripts), else with the Vera font reportlab
ships (Latin scripts). Word: python-docx, already used to read .docx files."""

from __future__ import annotations

import html
import io
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from core.answer.references import pages_text
from core.models import Confidence, ResearchResult, Source

ExportFormat = Literal["md", "html", "pdf", "docx"]
FORMATS: tuple[ExportFormat, ...] = ("md", "html", "pdf", "docx")
MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
               "pdf": "application/pdf",
               "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
CONFIDENCE_WORDS = {Confidence.HIGH: "High", Confidence.MEDIUM: "Medium",
                    Confidence.LOW: "Low", Confidence.INSUFFICIENT: "Insufficient evidence"}
MAX_QUOTES = 3
_FONT_FOLDERS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"),
                 Path("/usr/local/share/fonts"), Path("/Library/Fonts"))


@dataclass(frozen=True)
class ReferenceRow:
    """A reference as a reader sees it: number, label (title with byline), its link (http(s)
    only: a javascript: or data: link is never made one) or file, pages, passages quoted."""

    number: int
    label: str
    url: str | None
    where: str
    pages: str | None
    quotes: list[str]


def reference_rows(result: ResearchResult) -> list[ReferenceRow]:
    """The answer's references with what each cites: the passages quoted from its sources
    (or the source's snippet when no claim quoted it)."""
    by_id: dict[str, Source] = {source.id: source for source in result.sources}
    quotes: dict[str, list[str]] = {}
    for citation in result.answer.citations:
        if citation.quote and citation.quote not in quotes.setdefault(citation.source_id, []):
            quotes[citation.source_id].append(citation.quote)
    rows = []
    for reference in result.references:
        source = by_id.get(reference.source_id)
        url = source.url if source is not None else None
        if url is not None and not url.startswith(("http://", "https://")):
            url = None
        passages = [quote for source_id in reference.source_ids or [reference.source_id]
                    for quote in quotes.get(source_id, [])] or \
            ([source.snippet] if source is not None and source.snippet else [])
        pages = pages_text(reference.pages) if reference.pages else None
        rows.append(ReferenceRow(reference.number,
                                 reference.label if reference.title else "Untitled", url,
                                 (source.path or "") if source is not None else reference.where,
                                 pages or (source.location if source is not None else None),
                                 passages[:MAX_QUOTES]))
    return rows


def paragraphs(result: ResearchResult) -> list[str]:
    """The answer's text (summary, then detail) as paragraphs."""
    text = result.answer.summary
    if result.answer.detail:
        text += "\n\n" + result.answer.detail
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def export_answer(result: ResearchResult, kind: ExportFormat) -> bytes:
    """The answer as a document of `kind`."""
    if kind == "md":
        return to_markdown(result).encode()
    if kind == "html":
        return to_html(result).encode()
    if kind == "pdf":
        return to_pdf(result)
    return to_docx(result)


def export_filename(result: ResearchResult, kind: ExportFormat, when: datetime) -> str:
    """`<slug of the question>_<YYYYmmdd-HHMMSS>.<kind>`: ASCII, no path, at most ~80 chars."""
    ascii_text = unicodedata.normalize("NFKD", result.question).encode("ascii", "ignore")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.decode().lower()).strip("-")[:60].strip("-")
    return f"{slug or 'answer'}_{when:%Y%m%d-%H%M%S}.{kind}"


def _lines(result: ResearchResult) -> tuple[str, str]:
    """The confidence line and the footer."""
    confidence = f"Confidence: {CONFIDENCE_WORDS[result.answer.confidence]}"
    origin = f"cached answer from {result.cached_at:%Y-%m-%d %H:%M} UTC" \
        if result.cached and result.cached_at else "fresh answer"
    return confidence, f"researchbot · {origin} · job {result.job_id}"


# ---- Markdown ------------------------------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~])")


def markdown_text(text: str) -> str:
    """Text shown as itself by any Markdown reader: every character that could start markup
    (a link, an image, raw HTML, emphasis, a heading) escaped, line breaks kept."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def to_markdown(result: ResearchResult) -> str:
    confidence, footer = _lines(result)
    out = [f"# {markdown_text(_one_line(result.question))}", ""]
    for paragraph in paragraphs(result):
        out += [markdown_text(paragraph), ""]
    out += [f"**{markdown_text(confidence)}**", ""]
    if result.answer.limitations:
        out += ["## Limitations", ""]
        out += [f"- {markdown_text(_one_line(item))}" for item in result.answer.limitations]
        out.append("")
    out += ["## References", ""]
    for row in reference_rows(result):
        where = f"<{row.url}>" if row.url and _plain_url(row.url) else markdown_text(row.where)
        pages = f", {markdown_text(row.pages)}" if row.pages else ""
        out.append(f"{row.number}\\. {markdown_text(_one_line(row.label))} — {where}{pages}")
        out += [f"    > {markdown_text(_one_line(quote))}" for quote in row.quotes]
        out.append("")
    if not result.references:
        out += ["No sources were cited.", ""]
    out += [f"_{markdown_text(footer)}_", ""]
    return "\n".join(out)


def _plain_url(url: str) -> bool:
    """A URL that can stand in <...> as an autolink and nothing else."""
    return not re.search(r"[\s<>\"'`\\]", url)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ---- HTML ----------------------------------------------------------------------------------

_STYLE = ("body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
          "line-height:1.5;color:#1b1b1b}blockquote{margin:.3rem 0 .3rem 1rem;color:#444;"
          "border-left:3px solid #ccc;padding-left:.6rem}.meta{color:#666;font-size:.9rem}")


def to_html(result: ResearchResult) -> str:
    """A standalone page: no script, no remote resource, links that leak no referrer."""
    e = html.escape
    confidence, footer = _lines(result)
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="referrer" content="no-referrer">',
           f"<title>{e(_one_line(result.question))}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{e(_one_line(result.question))}</h1>"]
    out += [f"<p>{e(paragraph)}</p>" for paragraph in paragraphs(result)]
    out.append(f"<p><strong>{e(confidence)}</strong></p>")
    if result.answer.limitations:
        out.append("<h2>Limitations</h2><ul>")
        out += [f"<li>{e(item)}</li>" for item in result.answer.limitations]
        out.append("</ul>")
    out.append("<h2>References</h2>")
    if result.references:
        out.append("<ol>")
        for row in reference_rows(result):
            label = e(row.label)
            title = f'<a href="{e(row.url)}" rel="noopener noreferrer nofollow">{label}</a>' \
                if row.url else label
            where = f" — {e(row.url or row.where)}"
            pages = f", {e(row.pages)}" if row.pages else ""
            quotes = "".join(f"<blockquote>{e(quote)}</blockquote>" for quote in row.quotes)
            out.append(f'<li value="{row.number}">{title}{where}{pages}{quotes}</li>')
        out.append("</ol>")
    else:
        out.append("<p>No sources were cited.</p>")
    out.append(f'<p class="meta">{e(footer)}</p></body></html>')
    return "\n".join(out) + "\n"


# ---- Word ----------------------------------------------------------------------------------

def to_docx(result: ResearchResult) -> bytes:
    import docx

    confidence, footer = _lines(result)
    document = docx.Document()
    document.core_properties.title = _xml_safe(_one_line(result.question))[:255]
    document.core_properties.author = "researchbot"
    document.add_heading(_xml_safe(_one_line(result.question)), level=1)
    for paragraph in paragraphs(result):
        document.add_paragraph(_xml_safe(paragraph))
    document.add_paragraph().add_run(confidence).bold = True
    if result.answer.limitations:
        document.add_heading("Limitations", level=2)
        for item in result.answer.limitations:
            document.add_paragraph(_xml_safe(item), style="List Bullet")
    document.add_heading("References", level=2)
    for row in reference_rows(result):
        line = document.add_paragraph()
        line.add_run(f"{row.number}. ").bold = True
        line.add_run(_xml_safe(row.label))
        line.add_run(_xml_safe(f" — {row.url or row.where}"
                               + (f", {row.pages}" if row.pages else "")))
        for quote in row.quotes:
            document.add_paragraph(_xml_safe(quote), style="Intense Quote")
    if not result.references:
        document.add_paragraph("No sources were cited.")
    document.add_paragraph().add_run(footer).italic = True
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_safe(text: str) -> str:
    """Word's XML cannot hold control characters or lone surrogates: they are dropped."""
    return _XML_UNSAFE.sub("", text)


# ---- PDF -----------------------------------------------------------------------------------

def to_pdf(result: ResearchResult) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.lib.units import mm
    from reportlab.platypus import ListFlowable, Paragraph, SimpleDocTemplate, Spacer

    regular, bold = _pdf_fonts()
    styles = getSampleStyleSheet()
    body = ParagraphStyle("body", parent=styles["BodyText"], fontName=regular, fontSize=10.5,
                          leading=14)
    title = ParagraphStyle("title", parent=styles["Title"], fontName=bold, fontSize=16,
                           leading=20, alignment=0)
    heading = ParagraphStyle("heading", parent=styles["Heading2"], fontName=bold,
                             fontSize=12.5)
    quote = ParagraphStyle("quote", parent=body, leftIndent=8 * mm, textColor="#444444",
                           fontSize=9.5, leading=12.5)
    meta = ParagraphStyle("meta", parent=body, textColor="#666666", fontSize=8.5)

    def text(value: str) -> str:  # a Paragraph parses markup: everything is escaped
        return html.escape(_xml_safe(value)).replace("\n", "<br/>")

    confidence, footer = _lines(result)
    story: list[object] = [Paragraph(text(_one_line(result.question)), title)]
    story += [Paragraph(text(paragraph), body) for paragraph in paragraphs(result)]
    story += [Spacer(1, 2 * mm), Paragraph(f"<b>{text(confidence)}</b>", body)]
    if result.answer.limitations:
        story.append(Paragraph("Limitations", heading))
        story.append(ListFlowable([Paragraph(text(item), body)
                                   for item in result.answer.limitations],
                                  bulletType="bullet", bulletFontName=regular))
    story.append(Paragraph("References", heading))
    for row in reference_rows(result):
        pages = f", {row.pages}" if row.pages else ""
        story.append(Paragraph(f"<b>{row.number}.</b> {text(row.label)} — "
                               f"{text((row.url or row.where) + pages)}", body))
        story += [Paragraph(text(q), quote) for q in row.quotes]
    if not result.references:
        story.append(Paragraph("No sources were cited.", body))
    story += [Spacer(1, 4 * mm), Paragraph(text(footer), meta)]
    out = io.BytesIO()
    SimpleDocTemplate(out, pagesize=A4, title=_xml_safe(_one_line(result.question))[:200],
                      author="researchbot", leftMargin=20 * mm, rightMargin=20 * mm,
                      topMargin=18 * mm, bottomMargin=18 * mm).build(story)
    return out.getvalue()


def _pdf_fonts() -> tuple[str, str]:
    """(regular, bold) font names registered with reportlab: DejaVu Sans when the system
    has it, else the Vera font reportlab ships."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    registered = pdfmetrics.getRegisteredFontNames()
    if "AnswerSans" in registered:
        return "AnswerSans", "AnswerSans-Bold"
    found = system_font("DejaVuSans.ttf"), system_font("DejaVuSans-Bold.ttf")
    if found[0] is not None and found[1] is not None:
        regular, bold = str(found[0]), str(found[1])
    else:
        import reportlab

        fonts = Path(reportlab.__file__).parent / "fonts"
        regular, bold = str(fonts / "Vera.ttf"), str(fonts / "VeraBd.ttf")
    pdfmetrics.registerFont(TTFont("AnswerSans", regular))
    pdfmetrics.registerFont(TTFont("AnswerSans-Bold", bold))
    return "AnswerSans", "AnswerSans-Bold"


def system_font(name: str) -> Path | None:
    for folder in _FONT_FOLDERS:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None
