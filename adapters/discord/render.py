"""Research results as Discord embeds: pure functions from a result to embed payloads (dicts,
as sent on the wire), every limit respected by construction and every piece of untrusted
text escaped so that it can neither format nor mention."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from discord.utils import escape_markdown, escape_mentions

from adapters.chat.progress import progress_line
from adapters.chat.services import added_lines
from adapters.chat.text import split_text, trim
from core.models import Confidence, DocumentsOutcome, ProgressEvent, ResearchResult, Source

MAX_TITLE = 256
MAX_DESCRIPTION = 4096
MAX_FIELDS = 25
MAX_FIELD_NAME = 256
MAX_FIELD_VALUE = 1024
MAX_FOOTER = 2048
MAX_MESSAGE_TOTAL = 6000  # every embed's title, description, fields and footer together
MAX_EMBEDS = 10

Embed = dict[str, Any]

COLOURS = {
    Confidence.HIGH: 0x2ECC71,
    Confidence.MEDIUM: 0xF1C40F,
    Confidence.LOW: 0xE67E22,
    Confidence.INSUFFICIENT: 0x95A5A6,
}
CONFIDENCE = {
    Confidence.HIGH: "🟢 High",
    Confidence.MEDIUM: "🟡 Medium",
    Confidence.LOW: "🟠 Low",
    Confidence.INSUFFICIENT: "⚪ Insufficient evidence",
}
PROGRESS_COLOUR = 0x5865F2
ADDED_COLOUR = 0x2E7D32
ERROR_COLOUR = 0xED4245
_ESCAPE = re.compile(r"\\.|@\u200b")


def escape(text: str) -> str:
    """Markdown (`**`, masked links, headings) and mentions (`@everyone`, `<@123>`) as text."""
    return escape_mentions(escape_markdown(text))


def render_answer(result: ResearchResult, page: str | None = None) -> list[list[Embed]]:
    """The answer as messages of embeds: the first carries the question as its title, the
    last the confidence, limitations and footer; long answers continue in more embeds.
    `page`, the answer's web page, is the title's link and a last field's (View full
    analysis)."""
    answer = result.answer
    colour = COLOURS[answer.confidence]
    body = answer.summary if not answer.detail else f"{answer.summary}\n\n{answer.detail}"
    pieces = split_text(escape(body), MAX_DESCRIPTION, _ESCAPE) or ["…"]
    embeds: list[Embed] = [{"type": "rich", "color": colour, "description": piece}
                           for piece in pieces]
    embeds[0]["title"] = trim(escape(_one_line(result.question)), MAX_TITLE, _ESCAPE)
    fields = [{"name": "Confidence", "value": CONFIDENCE[answer.confidence], "inline": True}]
    limitations = "\n".join(f"• {escape(item)}" for item in answer.limitations)
    for n, piece in enumerate(split_text(limitations, MAX_FIELD_VALUE, _ESCAPE)):
        fields.append({"name": "Limitations" if n == 0 else "Limitations (continued)",
                       "value": piece, "inline": False})
    link: list[Embed] = []
    if page and _linkable(page):
        embeds[0]["url"] = page
        link = [{"name": "Full analysis", "value": f"[View full analysis]({page})",
                 "inline": False}]
    count = len(result.references)
    origin = (f"cached answer from {result.cached_at:%Y-%m-%d %H:%M} UTC"
              if result.cached and result.cached_at else "fresh answer")
    footer = {"text": trim(
        f"{count} source{'s' if count != 1 else ''} (in the thread) · {origin} · "
        f"job {result.job_id} · 🔁 to research again", MAX_FOOTER)}
    last = embeds[-1]
    closing = len(footer["text"]) + _fields_size(fields + link)
    if embed_size(last) + closing > MAX_MESSAGE_TOTAL:
        last = {"type": "rich", "color": colour}  # the closing fields get an embed of their own
        embeds.append(last)
    room = MAX_MESSAGE_TOTAL - embed_size(last) - len(footer["text"]) - _fields_size(link)
    last["fields"] = _fitting(fields, room, MAX_FIELDS - len(link)) + link
    last["footer"] = footer
    return pack(embeds)


def render_sources(result: ResearchResult) -> list[list[Embed]]:
    """The numbered references, for the thread under the answer."""
    if not result.references:
        return [[{"type": "rich", "description": "No sources were cited."}]]
    by_id = {s.id: s for s in result.sources}
    lines = [_source_line(r.number, r.label, r.where, by_id.get(r.source_id))
             for r in result.references]
    embeds: list[Embed] = []
    page = ""
    for line in lines:
        if page and len(page) + 2 + len(line) > MAX_DESCRIPTION:
            embeds.append({"type": "rich", "description": page})
            page = ""
        page = f"{page}\n\n{line}" if page else line
    embeds.append({"type": "rich", "description": page})
    embeds[0]["title"] = f"Sources ({len(result.references)})"
    return pack(embeds)


def render_progress(event: ProgressEvent) -> Embed:
    """The status embed: the round, each source's queries (escaped: a query quoting
    `@everyone` cannot ping), the checklist's count."""
    line = trim(progress_line(event, escape, round_always=True), 1000, _ESCAPE)
    return {"type": "rich", "color": PROGRESS_COLOUR,
            "description": f"⏳ {line}… ({event.progress:.0%})"}


def render_status(text: str) -> Embed:
    return {"type": "rich", "color": PROGRESS_COLOUR, "description": trim(text, MAX_DESCRIPTION)}


def render_added(outcome: DocumentsOutcome) -> Embed:
    """What a documents job added, a line a file: questions asked now can cite them."""
    lines = [escape(line) for line in added_lines(outcome)]
    return {"type": "rich", "color": ADDED_COLOUR, "title": "Added to the knowledge base",
            "description": trim("\n".join(lines), 4000)}


def render_error(message: str) -> Embed:
    return {"type": "rich", "color": ERROR_COLOUR, "title": "Research failed",
            "description": f"⚠️ {escape(trim(message, 1000))}"}


def embed_size(embed: Embed) -> int:
    """Characters Discord counts towards a message's 6,000."""
    size = len(embed.get("title", "")) + len(embed.get("description", ""))
    size += sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))
    size += len(embed.get("footer", {}).get("text", ""))
    return size + len(embed.get("author", {}).get("name", ""))


def _fields_size(fields: list[dict[str, Any]]) -> int:
    return sum(len(f["name"]) + len(f["value"]) for f in fields)


def _fitting(fields: list[dict[str, Any]], room: int, count: int) -> list[dict[str, Any]]:
    """The first fields, in order, that fit in `room` characters and `count` fields (the
    confidence first; limitations past that are left out rather than break the message)."""
    kept: list[dict[str, Any]] = []
    for field in fields[:count]:
        room -= _fields_size([field])
        if room < 0:
            break
        kept.append(field)
    return kept


def pack(embeds: list[Embed]) -> list[list[Embed]]:
    """Embeds in order, as few messages as the 10-embed and 6,000-character limits allow."""
    messages: list[list[Embed]] = [[]]
    total = 0
    for embed in embeds:
        size = embed_size(embed)
        if messages[-1] and (total + size > MAX_MESSAGE_TOTAL
                             or len(messages[-1]) == MAX_EMBEDS):
            messages.append([])
            total = 0
        messages[-1].append(embed)
        total += size
    return messages


def _source_line(number: int, title: str, where: str, source: Source | None) -> str:
    label = trim(escape(_one_line(title)), 200, _ESCAPE) or "Untitled"
    url = source.url if source is not None else None
    if url and _linkable(url):
        line = f"**{number}.** [{label.replace(']', '')}]({url})"
    else:
        line = f"**{number}.** {label} — {trim(escape(where), 400, _ESCAPE)}"
    details = []
    if source is not None:
        if source.metadata.domain:
            details.append(escape(source.metadata.domain))
        if source.metadata.published_at:
            details.append(f"{source.metadata.published_at:%Y-%m-%d}")
        if source.snippet:
            details.append(f"*{trim(escape(_one_line(source.snippet)), 300, _ESCAPE)}*")
    return line + ("\n" + " · ".join(details) if details else "")


def _linkable(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc) \
        and not re.search(r"[\s()<>\[\]]", url) and len(url) <= 512


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
