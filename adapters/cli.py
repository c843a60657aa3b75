"""Terminal rendering: progress lines and the answer as markdown. Pure functions."""

from __future__ import annotations

import re

from core.models import Confidence, Job, ProgressEvent, ResearchResult, Stage

STAGE_ICONS = {
    Stage.INTAKE: "📝", Stage.CACHE: "🗂️", Stage.PLAN: "🧭", Stage.SEARCH: "🔍",
    Stage.RANK: "📊", Stage.SYNTHESIZE: "✍️", Stage.VERIFY: "🔎", Stage.GRADE: "⚖️",
    Stage.DELIVER: "💾",
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


_TERMINAL_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """Text from documents cannot move the cursor, recolour or clear the user's terminal."""
    return _TERMINAL_CONTROL.sub("", text)


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
        lines += [f"{r.number}. {r.title} — {r.where}" for r in result.references]
    origin = (
        f"cached answer from {result.cached_at:%Y-%m-%d %H:%M} UTC"
        if result.cached and result.cached_at
        else "fresh answer"
    )
    lines += ["", f"_{origin} · job {result.job_id} · {result.duration_ms} ms_"]
    return "\n".join(lines)


def render_job_line(job: Job) -> str:
    question = str(job.request.get("question", ""))
    question = question if len(question) <= 60 else question[:59] + "…"
    return (
        f"{job.id}  {job.created_at:%Y-%m-%d %H:%M}  {job.status.value:<11} "
        f"{job.platform:<7} {question}"
    )
