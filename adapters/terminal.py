"""Terminal rendering: progress lines and the answer as markdown (pure functions), and the
stream every line the CLI prints goes through."""

from __future__ import annotations

import io
import re
from typing import Any, TextIO

from adapters.chat.progress import progress_line
from core.models import (
    ChecklistStatus,
    Confidence,
    Job,
    ProgressEvent,
    ResearchResult,
    Stage,
    StoppedBy,
    Trace,
)
from core.redact import redact
from core.research.tracing import checklist_line

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


CHECKLIST_MARKS = {ChecklistStatus.SATISFIED: "✓", ChecklistStatus.PARTIAL: "◐",
                   ChecklistStatus.OPEN: "○"}
STOPPED = {
    StoppedBy.COMPLETED: "it found what it looked for, or had nothing more to look up",
    StoppedBy.ITERATION_LIMIT: "stopped at the tier's limit of search rounds",
    StoppedBy.SEARCH_LIMIT: "stopped at the tier's limit of searches",
    StoppedBy.TIME_LIMIT: "stopped at the tier's time limit",
    StoppedBy.TOKEN_LIMIT: "stopped when the tier's model tokens were spent",
    StoppedBy.MODEL_FAILURE: "stopped because the language model kept failing",
}


def render_progress(event: ProgressEvent) -> str:
    icon = STAGE_ICONS[event.stage]
    line = progress_line(event, lambda text: text)
    if event.kind == "started":
        return f"{icon} {line}..."
    return f"   {line}"


def render_trace(trace: Trace) -> str:
    """The "How this was researched" section of `researchbot show`."""
    return terminal_safe("\n".join(_trace_lines(trace)))


def _trace_lines(trace: Trace) -> list[str]:
    lines = ["How this was researched"]
    if trace.stopped_by is None:
        return [*lines, "  An earlier answer was reused: no research ran."]
    lines.append(f"  {trace.iterations_used} of {trace.iterations_allowed or '?'} search rounds"
                 f" ({trace.depth or 'auto'} depth): {STOPPED[trace.stopped_by]}"
                 + (" [limit reached]" if trace.stopped_by.limit else ""))
    if trace.refined_question or trace.standalone_question:
        lines.append(f"  Researched as: {trace.refined_question or trace.standalone_question}")
    if trace.checklist:
        done = sum(1 for i in trace.checklist if i.status == ChecklistStatus.SATISFIED)
        lines.append(f"  Checklist ({done}/{len(trace.checklist)} satisfied):")
        lines += [f"    {CHECKLIST_MARKS[i.status]} {i.status.value:<9} {i.text}"
                  + (f" [evidence: {', '.join(i.evidence[:6])}]" if i.evidence else "")
                  for i in trace.checklist]
    for number, round_ in enumerate(trace.iterations, 1):
        checklist = f" · {checklist_line(round_.checklist)}" if round_.checklist else ""
        lines.append(f"  Round {number}: {round_.results} results, {round_.new_passages} "
                     f"weighed, {round_.useful} hold evidence{checklist}")
        lines += [f"    {s.label or s.source}: '{s.query}' "
                  + ("(failed)" if s.failed else f"({s.results} results)")
                  for s in round_.searches]
    totals = trace.totals
    lines.append("  Totals: queries " + _per_source(totals.queries) + " · results "
                 + _per_source(totals.results) + f" · {totals.passages_weighed} passages "
                 f"weighed · {totals.pages_read} pages read, {totals.pages_unread} unread")
    if trace.facts:
        lines.append(f"  Facts extracted ({len(trace.facts)}):")
        lines += [f"    - {fact.text} [{fact.source_id}]" for fact in trace.facts]
    if trace.found_by:
        lines.append("  Evidence found by:")
        lines += [f"    {source_id}: {o.label or o.source} '{o.query}' (round {o.round})"
                  for source_id, o in trace.found_by.items()]
    return lines


def _per_source(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


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
