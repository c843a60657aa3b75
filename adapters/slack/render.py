"""Research results as Slack Block Kit messages: pure functions, every limit respected by
construction, every piece of untrusted text escaped so it cannot mention or link anyone."""

from __future__ import annotations

import re
from typing import Any

from adapters.chat.progress import progress_line
from adapters.chat.services import added_lines
from adapters.chat.text import split_text as split_pieces
from adapters.chat.text import trim
from core.models import Confidence, DocumentsOutcome, ProgressEvent, ResearchResult, Source

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_FALLBACK_TEXT = 3000  # the notification text; Slack allows 40,000, nobody reads that much

_ENTITY = re.compile(r"&(?:amp|lt|gt);")

Block = dict[str, Any]
Message = dict[str, Any]  # {"text": fallback, "blocks": [...]}

CONFIDENCE = {
    Confidence.HIGH: ":large_green_circle: High confidence",
    Confidence.MEDIUM: ":large_yellow_circle: Medium confidence",
    Confidence.LOW: ":large_orange_circle: Low confidence",
    Confidence.INSUFFICIENT: ":white_circle: Insufficient evidence",
}


def escape_mrkdwn(text: str) -> str:
    """`&`, `<` and `>` as entities: `<!channel>`, `<@U123>` and `<http://x|y>` become text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_plain(text: str) -> str:
    """For plain_text fields (headers): Slack does not parse them, but keep them one line."""
    return re.sub(r"\s+", " ", text).strip()


def render_answer(result: ResearchResult, page: str | None = None) -> list[Message]:
    """The answer as one or more messages, each within Block Kit's limits; `page`, the
    answer's web page, is linked from the footer (View full analysis)."""
    answer = result.answer
    blocks: list[Block] = [_header(result.question)]
    body = answer.summary if not answer.detail else f"{answer.summary}\n\n{answer.detail}"
    blocks += [_section(piece) for piece in split_text(escape_mrkdwn(body), MAX_SECTION)]
    blocks.append(_section(f"*{CONFIDENCE[answer.confidence]}*"))
    if answer.limitations:
        items = [escape_mrkdwn(item) for item in answer.limitations]
        blocks += _context_blocks(["*Limitations*", *items])
    origin = (
        f"cached answer from {result.cached_at:%Y-%m-%d %H:%M} UTC"
        if result.cached and result.cached_at
        else "fresh answer"
    )
    count = len(result.references)
    footer = [f"{count} source{'s' if count != 1 else ''} (in the thread) · {origin} · "
              f"job `{escape_mrkdwn(result.job_id)}`"]
    link = _link(page, "View full analysis") if page else None
    blocks += _context_blocks(footer + ([link] if link else []))
    fallback = escape_mrkdwn(f"{result.question}: {answer.summary}")
    return _paginate(blocks, fallback)


def render_sources(result: ResearchResult) -> list[Message]:
    """The numbered references, one section each, for the thread under the answer."""
    if not result.references:
        return [{"text": "No sources were cited.",
                 "blocks": [_section("_No sources were cited._")]}]
    by_id = {s.id: s for s in result.sources}
    blocks = [_section(f"*Sources ({len(result.references)})*")]
    for reference in result.references:
        source = by_id.get(reference.source_id)
        blocks.append(_section(_source_line(reference.number, reference.label,
                                            reference.where, source)))
    return _paginate(blocks, f"Sources ({len(result.references)})")


def render_progress(event: ProgressEvent) -> str:
    """The status line: the round, each source's queries (escaped: a query quoting
    `<!channel>` cannot ping), the checklist's count; within a section's limit."""
    line = progress_line(event, escape_mrkdwn, round_always=True)
    return _trim(f":hourglass_flowing_sand: {line}", MAX_SECTION - 1) + "…"


def render_added(outcome: DocumentsOutcome) -> Message:
    """What a documents job added, a line a file: questions asked now can cite them."""
    lines = [escape_mrkdwn(line) for line in added_lines(outcome)]
    if any(d.status in ("added", "updated") for d in outcome.documents):
        lines.append("Ask about it here or anywhere in this workspace.")
    text = ":inbox_tray: " + "\n".join(lines)
    return {"text": _trim(text, 3000), "blocks": [_section(_trim(text, 3000))]}


def render_error(message: str) -> Message:
    text = f":warning: {escape_mrkdwn(message)}"
    return {"text": text, "blocks": [_section(text)]}


def _source_line(number: int, title: str, where: str, source: Source | None) -> str:
    label = escape_mrkdwn(_trim(title, 200)) or "Untitled"
    url = source.url if source is not None else None
    if url and url.startswith(("http://", "https://")) and not re.search(r"[<>|\s]", url):
        line = f"*{number}.* <{url}|{label}>"
    else:
        line = f"*{number}.* {label} — {escape_mrkdwn(_trim(where, 500))}"
    details = []
    if source is not None:
        if source.metadata.domain:
            details.append(escape_mrkdwn(source.metadata.domain))
        if source.metadata.published_at:
            details.append(f"{source.metadata.published_at:%Y-%m-%d}")
        if source.snippet:
            details.append(f"_{escape_mrkdwn(_trim(source.snippet, 300))}_")
    text = line + ("\n" + " · ".join(details) if details else "")
    return _trim(text, MAX_SECTION)


def _link(url: str, label: str) -> str | None:
    """`<url|label>`, or None for an address a link cannot carry whole (a cut link leads
    nowhere)."""
    if not url.startswith(("http://", "https://")) or re.search(r"[<>|\s]", url):
        return None
    link = f"<{url.replace('&', '&amp;')}|{escape_mrkdwn(label)}>"
    return link if len(link) <= MAX_SECTION else None


def _header(text: str) -> Block:
    return {"type": "header",
            "text": {"type": "plain_text", "text": _trim(escape_plain(text), MAX_HEADER)}}


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _trim(text, MAX_SECTION)}}


def _context_blocks(items: list[str]) -> list[Block]:
    return [
        {"type": "context",
         "elements": [{"type": "mrkdwn", "text": _trim(item, MAX_SECTION)}
                      for item in items[start:start + MAX_CONTEXT_ELEMENTS]]}
        for start in range(0, len(items), MAX_CONTEXT_ELEMENTS)
    ]


def _paginate(blocks: list[Block], fallback: str) -> list[Message]:
    pages = [blocks[start:start + MAX_BLOCKS] for start in range(0, len(blocks), MAX_BLOCKS)]
    total = len(pages)
    return [
        {"text": _trim(fallback if total == 1 else f"({n}/{total}) {fallback}",
                       MAX_FALLBACK_TEXT),
         "blocks": page}
        for n, page in enumerate(pages, 1)
    ]


def _trim(text: str, limit: int) -> str:
    return trim(text, limit, _ENTITY)


def split_text(text: str, limit: int) -> list[str]:
    return split_pieces(text, limit, _ENTITY)
