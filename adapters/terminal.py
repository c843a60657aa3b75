"""Terminal rendering: progress lines and the answer as markdown (pure functions), and the
stream every line the CLI prints goes through."""

from __future__ import annotations

import io
import re
from typing import Any, TextIO

from core.models import Confidence, Job, ProgressEvent, ResearchResult, Stage
from core.redact import redact

STAGE_ICONS = {
    Stage.INTAKE: "📝", Stage.CACHE: "🗂️", Stage.PLAN: "🧭", Stage.SEARCH: "🔍",
    Stage.RANK: "📊", Stage.SYNTHESIZE: "✍️", Stage.VERIFY: "🔎", Stage.GRADE: "⚖️",
    Stage.DELIVER: "💾", Stage.INDEX: "📥",
}
CONFIDENCE_LABELS = {
    Confidence.HIGH: "🟢 High",
    Confidence.MEDIUM: "🟡 Medium",
    Confidence.LOW: "🟠 Low",
    Confidence.INSUFFICIENT: "⚪ Insufficient",
}


def render_progress(event: ProgressEvent) -> str:
    icon = STAGE_ICONS[event.stage]
    if event.kind == "started":
        return f"{icon} {event.message}..."
    return f"   {event.message}"


# Escape sequences (CSI ... final byte) go whole; other C0/C1 controls one by one. Tab and
# newline stay; a carriage return, which lets text overwrite what is shown, becomes a newline.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                      r"|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Characters that reorder or hide text (Trojan Source): bidirectional embeddings, overrides
# and isolates are shown as their code points; invisible spaces are dropped. Zero-width
# joiners stay: they only join (emoji sequences, Indic and Persian scripts).
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_INVISIBLE = re.compile("[\u200b\u2060-\u2064\ufeff\u00ad]")
_LINE_BREAKS = re.compile("\r\n?|[\u2028\u2029\x85]")
# What JSON output escapes (json.dumps escapes C0 already).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069"
                          "\u2028\u2029\ufeff\u00ad]")


def terminal_safe(text: str) -> str:
    """Text from documents cannot move the cursor, recolour or clear the user's terminal, or
    show in an order other than the one it is stored in."""
    text = _LINE_BREAKS.sub("\n", _ESCAPES.sub("", text))
    text = _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
    return _CONTROLS.sub("", _INVISIBLE.sub("", text))


def json_safe(text: str) -> str:
    """JSON text with every character `terminal_safe` would change escaped as \\uXXXX: the
    value is kept, the terminal shows only ASCII escapes."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class SafeTerminal(io.TextIOBase):
    """stdout or stderr as the CLI writes to it: secrets redacted (core.redact) and text made
    terminal-safe, whichever code printed it. Everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(terminal_safe(text)))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def render_answer_markdown(result: ResearchResult) -> str:
    return terminal_safe(_answer_markdown(result))


def _answer_markdown(result: ResearchResult) -> str:
    answer = result.answer
    lines = [f"## {result.question}", "", answer.summary]
    if answer.detail:
        lines += ["", answer.detail]
    lines += ["", f"**Confidence:** {CONFIDENCE_LABELS[answer.confidence]}"]
    if answer.limitations:
        lines += ["", "**Limitations:**", *(f"- {item}" for item in answer.limitations)]
    if result.references:
        lines += ["", "**References:**"]
        lines += [f"{r.number}. {r.label} — {r.where}" for r in result.references]
    origin = (
        f"cached answer from {result.cached_at:%Y-%m-%d %H:%M} UTC"
        if result.cached and result.cached_at
        else "fresh answer"
    )
    lines += ["", f"_{origin} · job {result.job_id} · {result.duration_ms} ms_"]
    return "\n".join(lines)


def render_job_line(job: Job) -> str:
    question = job.subject
    question = question if len(question) <= 60 else question[:59] + "…"
    return (
        f"{job.id}  {job.created_at:%Y-%m-%d %H:%M}  {job.status.value:<11} "
        f"{job.platform:<7} {question}"
    )
