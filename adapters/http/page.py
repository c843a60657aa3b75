"""A job's answer page, rendered on the server: the question, its stages while it runs, then
the answer with its confidence, limitations and numbered sources. Every piece of text from a
question, a model or a source goes through Jinja's autoescaping; the only markup made from it
is a citation marker `[n]` turned into a link to source n, after escaping."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from core.answer.export import FORMATS, reference_rows
from core.answer.references import MARKER_TEXT, marker_parts
from core.models import (
    Confidence,
    Job,
    JobEvent,
    JobStatus,
    ResearchRequest,
    ResearchResult,
    Stage,
    StoppedBy,
)

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")

CONFIDENCE_WORDS = {
    Confidence.HIGH: "High confidence",
    Confidence.MEDIUM: "Medium confidence",
    Confidence.LOW: "Low confidence",
    Confidence.INSUFFICIENT: "Insufficient evidence",
}
STAGE_NAMES = {
    Stage.INTAKE: "Reading the question", Stage.CACHE: "Checking earlier answers",
    Stage.PLAN: "Planning searches", Stage.SEARCH: "Searching", Stage.RANK: "Ranking passages",
    Stage.SYNTHESIZE: "Writing the answer", Stage.VERIFY: "Checking citations",
    Stage.GRADE: "Grading confidence", Stage.DELIVER: "Saving",
    Stage.INDEX: "Adding documents",
}
STOPPED_WORDS = {
    StoppedBy.COMPLETED: "The research found what it looked for, or had nothing more to look up.",
    StoppedBy.ITERATION_LIMIT: "Stopped at the limit of search rounds.",
    StoppedBy.SEARCH_LIMIT: "Stopped at the limit of searches.",
    StoppedBy.TIME_LIMIT: "Stopped at the time limit.",
    StoppedBy.TOKEN_LIMIT: "Stopped when the model's token budget was spent.",
    StoppedBy.MODEL_FAILURE: "Stopped because the language model kept failing.",
}
# Events that say what happened to the job itself (a restart it was resumed after, a worker
# that handed it back), shown under the question.
TOLD_KINDS = ("resumed", "requeued")
_MARKER = re.compile(MARKER_TEXT)
_ENV = Environment(loader=PackageLoader("adapters.http", "templates"),
                   autoescape=select_autoescape(default=True, default_for_string=True),
                   trim_blocks=True, lstrip_blocks=True)


@dataclass(frozen=True)
class StageRow:
    stage: str
    name: str
    state: str  # running or done
    message: str


def render(job: Job, events: list[JobEvent], token: str, result: ResearchResult | None) -> str:
    running = job.status in (JobStatus.PENDING, JobStatus.IN_PROGRESS)
    ended = next((e for e in reversed(events) if e.terminal), None)
    return _ENV.get_template("answer.html").render(
        job=job, token=token, running=running, question=job.subject,
        context=job.request.context if isinstance(job.request, ResearchRequest) else "",
        stages=_stages(events), result=result, body=_body(result) if result else None,
        confidence=result.answer.confidence.value if result else None,
        confidence_words=CONFIDENCE_WORDS[result.answer.confidence] if result else None,
        sources=reference_rows(result) if result else [],
        formats=FORMATS,
        trace=job.trace.public() if result is not None and job.trace.stopped_by else None,
        labels={s.source: s.label for r in job.trace.iterations for s in r.searches if s.label},
        stopped_words=STOPPED_WORDS,
        ended_message=ended.message if ended is not None and result is None else "",
        notes=[event.message for event in events if event.kind in TOLD_KINDS and event.message],
        stage_names={stage.value: name for stage, name in STAGE_NAMES.items()})


def not_found() -> str:
    return _ENV.get_template("not_found.html").render()


def too_many_attempts() -> str:
    return _ENV.get_template("not_found.html").render(too_many=True)


ASSETS = {"page.css": "text/css; charset=utf-8", "page.js": "text/javascript; charset=utf-8"}


@functools.cache
def asset(name: str) -> bytes:
    """A file of the page's (one of ASSETS) from the package."""
    return resources.files("adapters.http").joinpath("assets", name).read_bytes()


def _stages(events: list[JobEvent]) -> list[StageRow]:
    rows: dict[str, StageRow] = {}
    for event in events:
        if event.stage is None or event.kind not in ("started", "finished"):
            continue
        state = "done" if event.kind == "finished" else "running"
        rows[event.stage.value] = StageRow(event.stage.value, STAGE_NAMES[event.stage], state,
                                           event.message)
    return list(rows.values())


def _body(result: ResearchResult) -> list[Markup]:
    """The answer's paragraphs, escaped, with each `[n]` of a listed source made a link."""
    numbers = {reference.number for reference in result.references}
    text = result.answer.summary
    if result.answer.detail:
        text += "\n\n" + result.answer.detail
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    return [_linked(str(escape(paragraph)), numbers) for paragraph in paragraphs]


def _linked(escaped: str, numbers: set[int]) -> Markup:
    def link(match: re.Match[str]) -> str:
        inner = match.group(1)
        joiner, parts = marker_parts(inner)

        def anchor(part: str, text: str) -> str:
            number = int(part.split(",")[0])
            if number not in numbers:
                return text
            return (f'<a class="cite" href="#source-{number}" '
                    f'aria-label="source {number}">{text}</a>')

        if len(parts) == 1:  # the whole marker is the link: [1], [1, p. 3]
            return anchor(inner, match.group(0))
        return f"[{joiner.join(anchor(part, part) for part in parts)}]"

    # `escaped` is escaped text; only the links made here are markup
    return Markup(_MARKER.sub(link, escaped).replace("\n", "<br>"))
