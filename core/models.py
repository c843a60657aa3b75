"""Typed data that flows through the research pipeline."""

from __future__ import annotations

import contextlib
import enum
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    computed_field,
    field_validator,
    model_validator,
)

# A clock: seconds, read by calling it. time.monotonic times intervals within one process;
# time.time where other processes (a shared file, Redis) or stored rows must agree on the
# time. What times a window, a reset or an expiry takes one (`clock`), so that a test moves
# a fake clock (tests/support/clock.py) instead of sleeping.
Clock = Callable[[], float]


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_job_id() -> str:
    return uuid.uuid4().hex[:16]


class Depth(enum.StrEnum):
    AUTO = "auto"  # chosen from the question (see core.research.intake.choose_depth)
    QUICK = "quick"
    STANDARD = "standard"
    DEEP = "deep"


class QuestionType(enum.StrEnum):
    FACTUAL = "factual"
    COMPARISON = "comparison"
    EXPLANATION = "explanation"
    CURRENT_EVENT = "current_event"


class JobStatus(enum.StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Confidence(enum.StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INSUFFICIENT = "insufficient"


class Stage(enum.StrEnum):
    INTAKE = "intake"
    CACHE = "cache"
    PLAN = "plan"
    SEARCH = "search"
    RANK = "rank"
    SYNTHESIZE = "synthesize"
    VERIFY = "verify"
    GRADE = "grade"
    DELIVER = "deliver"
    INDEX = "index"  # a documents job: reading and indexing what was sent


MAX_ITERATIONS = 50  # no depth tier allows more search rounds (core.config.TierBudget)


class ConversationTurn(BaseModel):
    """An earlier question and answer that a follow-up builds on, with the sources it cited
    (a follow-up may reuse them)."""

    question: str
    answer: str = ""
    source_ids: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)


def turns_as_history(data: Any) -> Any:
    """A request's fields with earlier turns sent (and stored with jobs) the old way, as a
    list in `context`, moved to the front of `history`."""
    if not isinstance(data, dict) or not isinstance(data.get("context"), list):
        return data
    history = data.get("history") or []
    return {**data, "context": "", "history": [*data["context"], *history]
            if isinstance(history, list) else history}


class ResearchRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    question: str
    context: str = ""  # the person's needs or constraints, in their words (not searched)
    history: list[ConversationTurn] = Field(default_factory=list)  # the turns it follows up
    tenant: str = "local"
    user: str = ""
    platform: str = "cli"
    depth: Depth = Depth.AUTO
    # Search rounds at most; the depth tier's own limit still holds (the lower one applies).
    max_iterations: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS)
    bypass_cache: bool = False
    improvement: Improvement | None = None  # set: revise an earlier answer (`improve`)
    controls: SearchControls = Field(default_factory=lambda: SearchControls())  # (below)

    @model_validator(mode="before")
    @classmethod
    def _turns_as_history(cls, data: Any) -> Any:
        return turns_as_history(data)

    @property
    def subject(self) -> str:
        """What the job is about, as a list of jobs shows it: the question."""
        return self.question

    @property
    def improves(self) -> str | None:
        """The job whose answer this request revises."""
        return self.improvement.job_id if self.improvement else None

    @property
    def feedback(self) -> str:
        """How the reader wants the earlier answer changed ("" unless improving)."""
        return self.improvement.feedback if self.improvement else ""

    @property
    def previous_answer(self) -> str:
        """The text of the answer being revised ("" unless improving)."""
        if self.improvement is None:
            return ""
        answer = self.improvement.answer.answer
        return f"{answer.summary}\n\n{answer.detail}".strip()


class Recency(enum.StrEnum):
    """How recent the results must be; ANY sets no date limit even for a question that says
    "recent"."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"
    ANY = "any"

    @property
    def days(self) -> int | None:
        return {"day": 1, "week": 7, "month": 31, "year": 366}.get(self.value)

    @property
    def phrase(self) -> str:
        """As a limitation names it: "the past week"."""
        return "any time" if self is Recency.ANY else f"the past {self.value}"


class ContentType(enum.StrEnum):
    NEWS = "news"  # news-capable sources only
    ACADEMIC = "academic"  # arXiv, PubMed and research-paper search
    GENERAL = "general"  # sources chosen from the question alone


MAX_DOMAINS = 20
MAX_DOMAIN_LENGTH = 253  # the longest host name DNS allows
_HOST = re.compile(r"^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$")


def normalised_domain(value: str) -> str:
    """A domain as the controls keep it: lower-case host, no scheme, port, path or "www.";
    ValueError, naming the value, for anything that is not a host name."""
    text = value.strip().lower()
    if len(text) > 2 * MAX_DOMAIN_LENGTH:
        raise ValueError(f"a domain is at most {MAX_DOMAIN_LENGTH} characters")
    host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    host = re.split(r"[/?#]", host, maxsplit=1)[0].rsplit("@", 1)[-1]
    host = re.sub(r":\d*$", "", host).rstrip(".").removeprefix("www.")
    with contextlib.suppress(UnicodeError):  # refused just below
        host = host.encode("idna").decode("ascii")  # as DNS spells it: xn--bcher-kva.de
    if not _HOST.match(host):
        shown = value[:60] + ("..." if len(value) > 60 else "")
        raise ValueError(f"{shown!r} is not a domain (like example.org)")
    return host


class SearchControls(BaseModel):
    """What a request asks of the search itself: how recent, which sites, what kind of
    content. Each source applies what it can; the answer says what one could not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recency: Recency | None = None  # None: the question decides ("recent" = a month)
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    content_type: ContentType = ContentType.GENERAL

    @field_validator("include_domains", "exclude_domains", mode="before")
    @classmethod
    def _domains(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part for part in re.split(r"[,\s]+", value) if part]
        if not isinstance(value, list | tuple):
            return value
        if len(value) > MAX_DOMAINS:
            raise ValueError(f"at most {MAX_DOMAINS} domains")
        if not all(isinstance(item, str) for item in value):
            raise ValueError("domains are strings")
        return tuple(dict.fromkeys(normalised_domain(item) for item in value))

    @property
    def default(self) -> bool:
        """Nothing asked: today's search."""
        return self == SearchControls()


class TimeConstraint(BaseModel):
    """A time window the question asks about; either end may be open."""

    start_year: int | None = None
    end_year: int | None = None
    recent: bool = False


class QueryIntent(BaseModel):
    question_type: QuestionType = QuestionType.FACTUAL
    entities: list[str] = Field(default_factory=list)
    key_terms: list[str] = Field(default_factory=list)
    time_constraint: TimeConstraint | None = None
    language: str = "en"


class SourceMetadata(BaseModel):
    domain: str | None = None
    published_at: datetime | None = None
    author: str | None = None
    word_count: int = 0
    provider: str = ""
    relevance: float = 0.0


class Source(BaseModel):
    """A retrieved passage or page. `id` is issued by code and is what citations refer to."""

    id: str
    title: str
    url: str | None = None
    path: str | None = None
    location: str | None = None
    snippet: str = ""
    content: str = ""
    document_id: str = ""
    metadata: SourceMetadata = Field(default_factory=SourceMetadata)
    # The passage's vector when the retriever has one; kept out of JSON and reprs.
    embedding: list[float] | None = Field(default=None, exclude=True, repr=False)

    @property
    def reference(self) -> str:
        """Where the source can be found, for a reference list."""
        where = self.url or self.path or ""
        return f"{where} ({self.location})" if self.location else where


class Citation(BaseModel):
    claim: str
    source_id: str
    quote: str


class ResearchAnswer(BaseModel):
    summary: str
    detail: str = ""
    citations: list[Citation] = Field(default_factory=list)
    confidence: Confidence
    limitations: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Reference(BaseModel):
    """A numbered entry of an answer's reference list, built by code: one a document, its
    cited pages (or sections) in `where`."""

    number: int
    source_id: str  # the first of its passages cited
    title: str
    where: str
    authors: str | None = None
    year: str | None = None
    source_ids: list[str] = Field(default_factory=list)  # every passage of it cited
    pages: list[int] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """The title with its byline: `Vaswani et al. (2017). Attention Is All You Need`."""
        names = [name.strip() for name in re.split(r";|,|\band\b|&", self.authors or "")
                 if name.strip()]
        who = "" if not names else names[0] if len(names) == 1 else \
            f"{names[0]} and {names[1]}" if len(names) == 2 else f"{names[0]} et al."
        byline = f"{who} ({self.year}). " if who and self.year else \
            f"{who or self.year}. " if who or self.year else ""
        return f"{byline}{self.title}"


class ResearchResult(BaseModel):
    """What a research job returns to a front end."""

    job_id: str
    status: JobStatus
    question: str
    answer: ResearchAnswer
    sources: list[Source] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    cached: bool = False
    cached_at: datetime | None = None
    duration_ms: int = 0
    sources_considered: int = 0
    # How long the semantic cache may keep this answer: None for the cache's own lifetime,
    # 0 for never (an unchecked answer), a few minutes when an outage shaped it.
    max_cache_seconds: float | None = Field(default=None, ge=0)

    def to_public_json(self, trace: Trace | None = None) -> dict[str, Any]:
        """The response shape of `researchbot ask --json`; with `trace`, how the answer was
        researched."""
        shown: dict[str, Any] = {
            "job_id": self.job_id,
            "status": self.status.value,
            "answer": {
                "summary": self.answer.summary,
                "detail": self.answer.detail,
                "confidence": self.answer.confidence.value,
                "limitations": self.answer.limitations,
            },
            "citations": [c.model_dump() for c in self.answer.citations],
            "references": [r.model_dump() for r in self.references],
            "sources": [
                s.model_dump(mode="json", exclude={"content", "document_id"}, exclude_none=True)
                for s in self.sources
            ],
            "metadata": {
                "duration_ms": self.duration_ms,
                "sources_considered": self.sources_considered,
                "cached": self.cached,
                "cached_at": self.cached_at.isoformat() if self.cached_at else None,
                **self.answer.metadata,
            },
        }
        if trace is not None:
            shown["trace"] = trace.public().model_dump(mode="json")
        return shown


class SourceFailure(BaseModel):
    """A source that failed one query. `reason` is for logs and the job's trace; users are
    told `kind` in plain words (core.answer.grading.outage_notes)."""

    source: str
    query: str
    reason: str
    label: str = ""  # how people know the source, e.g. "Wikipedia"
    kind: str = "error"  # unreachable, timeout, busy, too_large, rate_limited, refused, error


class SourceSearch(BaseModel):
    """One query sent to one source in a search round, and what came back."""

    source: str  # the source's name, e.g. "wikipedia"
    label: str = ""  # how people know it, e.g. "Wikipedia"
    query: str
    results: int = 0
    failed: bool = False


class ChecklistStatus(enum.StrEnum):
    SATISFIED = "satisfied"
    PARTIAL = "partial"
    OPEN = "open"


class ChecklistItem(BaseModel):
    """A point the answer should cover, how far the evidence covers it, and the evidence
    (source ids) that does."""

    text: str
    status: ChecklistStatus = ChecklistStatus.OPEN
    evidence: list[str] = Field(default_factory=list)


class ChecklistCount(BaseModel):
    """How many checklist points are satisfied, partly covered, of how many."""

    satisfied: int = 0
    partial: int = 0
    total: int = 0

    @classmethod
    def of(cls, items: list[ChecklistItem]) -> ChecklistCount:
        return cls(satisfied=sum(1 for i in items if i.status == ChecklistStatus.SATISFIED),
                   partial=sum(1 for i in items if i.status == ChecklistStatus.PARTIAL),
                   total=len(items))


class Round(BaseModel):
    """One search round as the job's trace keeps it."""

    queries: list[str]
    searches: list[SourceSearch] = Field(default_factory=list)  # each query to each source
    results: int = 0  # distinct passages its searches returned
    failures: list[SourceFailure] = Field(default_factory=list)
    new_passages: int = 0
    useful: int = 0
    pages_unread: list[str] = Field(default_factory=list)
    checklist: ChecklistCount | None = None  # as it stood after the round
    reflection: dict[str, Any] | None = None


class ResearchTotals(BaseModel):
    """What the research did over all its rounds."""

    queries: dict[str, int] = Field(default_factory=dict)  # per source
    results: dict[str, int] = Field(default_factory=dict)  # passages/articles, per source
    passages_weighed: int = 0
    pages_read: int = 0  # web pages read in full in place of their snippets
    pages_unread: int = 0


class ExtractedFact(BaseModel):
    """A fact the model took from a passage, with the checklist points (from 1) it serves."""

    text: str
    source_id: str
    checklist_items: list[int] = Field(default_factory=list)


class EvidenceOrigin(BaseModel):
    """The search that first found a passage of evidence."""

    source: str
    label: str = ""
    query: str
    round: int


class StoppedBy(enum.StrEnum):
    """Why the research stopped searching."""

    COMPLETED = "completed"  # it had what it looked for, or nothing more to look up
    ITERATION_LIMIT = "iteration_limit"  # the tier's search rounds were all used
    SEARCH_LIMIT = "search_limit"  # the tier's searches were all used
    TIME_LIMIT = "time_limit"
    TOKEN_LIMIT = "token_limit"
    MODEL_FAILURE = "model_failure"  # the language model kept failing

    @property
    def limit(self) -> bool:
        """A limit ended the research, not the research itself."""
        return self not in (StoppedBy.COMPLETED, StoppedBy.MODEL_FAILURE)


class Trace(BaseModel):
    """What a job's research did, stored with the job (`jobs.state`) and read back by
    `improve`: how the question was read, what was searched, what the answer was written
    from. Traces stored before a field existed load with its default."""

    intent: QueryIntent | None = None
    standalone_question: str | None = None
    depth: str | None = None
    refined_question: str | None = None
    checklist: list[ChecklistItem] = Field(default_factory=list)
    plan: list[str] = Field(default_factory=list)
    iterations: list[Round] = Field(default_factory=list)
    iterations_allowed: int | None = None
    stopped_by: StoppedBy | None = None  # None: no research ran (an earlier answer reused)
    totals: ResearchTotals = Field(default_factory=ResearchTotals)
    facts: list[ExtractedFact] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    found_by: dict[str, EvidenceOrigin] = Field(default_factory=dict)  # by evidence id
    improves: str | None = None
    feedback: str | None = None
    searched_again: bool | None = None

    @field_validator("checklist", mode="before")
    @classmethod
    def _items(cls, value: Any) -> Any:
        """Traces stored before checklist items had a status list their texts."""
        if isinstance(value, list):
            return [{"text": item} if isinstance(item, str) else item for item in value]
        return value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def iterations_used(self) -> int:
        return len(self.iterations)

    @property
    def checklist_texts(self) -> list[str]:
        return [item.text for item in self.checklist]

    def failures(self) -> list[SourceFailure]:
        return [failure for round_ in self.iterations for failure in round_.failures]

    def last_reflection(self) -> dict[str, Any] | None:
        for round_ in reversed(self.iterations):
            if round_.reflection:
                return round_.reflection
        return None

    def public(self) -> PublicTrace:
        """What the API, `ask --json` and the answer page show: no failure reasons, no
        model verdicts."""
        return PublicTrace(
            refined_question=self.refined_question or self.standalone_question,
            depth=self.depth, iterations_used=self.iterations_used,
            iterations_allowed=self.iterations_allowed, stopped_by=self.stopped_by,
            limit_reached=self.stopped_by is not None and self.stopped_by.limit,
            checklist=self.checklist,
            rounds=[PublicRound(number=n, searches=r.searches, results=r.results,
                                new_passages=r.new_passages, useful=r.useful,
                                failed=sorted({f.label or f.source for f in r.failures}),
                                checklist=r.checklist)
                    for n, r in enumerate(self.iterations, 1)],
            totals=self.totals, facts=self.facts, evidence=self.evidence,
            found_by=self.found_by)


class PublicRound(BaseModel):
    number: int
    searches: list[SourceSearch]
    results: int
    new_passages: int
    useful: int
    failed: list[str] = Field(description="Sources that failed in this round.")
    checklist: ChecklistCount | None


class PublicTrace(BaseModel):
    """How an answer was researched (`trace` of the API's job and of `ask --json`)."""

    refined_question: str | None
    depth: str | None
    iterations_used: int
    iterations_allowed: int | None
    stopped_by: StoppedBy | None = Field(
        description="completed, iteration_limit, search_limit, time_limit, token_limit or "
        "model_failure; null when no research ran (an earlier answer was reused).")
    limit_reached: bool = Field(description="A limit of the tier ended the research.")
    checklist: list[ChecklistItem]
    rounds: list[PublicRound]
    totals: ResearchTotals
    facts: list[ExtractedFact]
    evidence: list[str] = Field(description="The passages the answer was written from.")
    found_by: dict[str, EvidenceOrigin] = Field(
        description="For each evidence id, the search (source, query, round) that found it.")


class Improvement(BaseModel):
    """What an `improve` request revises: an earlier job's answer and what its research did,
    and how the reader wants it changed. Carried in the request, so the research needs no
    look-up and a worker can run it like any other job."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    feedback: str
    answer: ResearchResult
    trace: Trace = Field(default_factory=Trace)


class DocumentUpload(BaseModel):
    """A file sent to be added to the knowledge base, kept in the job store until its job
    has read it (core.store.uploads): a worker on another machine reads it from there."""

    model_config = ConfigDict(frozen=True)

    upload_id: str
    filename: str  # a bare file name: no folder, no control characters
    size: int

    @property
    def key(self) -> str:
        """What the knowledge base knows it by: a second upload of one name replaces it."""
        return f"upload:{self.filename}"


class DocumentsRequest(BaseModel):
    """Add documents to a tenant's knowledge base: files sent (`uploads`), or a web page and,
    with `max_pages` > 1, the pages of its site it links to (or its sitemap lists). Run as a
    job like a question, with progress on the same event stream."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["documents"] = "documents"
    tenant: str = "local"
    user: str = ""
    platform: str = "cli"
    uploads: list[DocumentUpload] = Field(default_factory=list)
    url: str | None = None
    max_pages: int = Field(default=1, ge=1)
    max_depth: int = Field(default=2, ge=0)

    @property
    def subject(self) -> str:
        """What the job adds, as a person reads it in a list of jobs."""
        if self.url:
            return f"Add {self.url}" + (f" (up to {self.max_pages} pages)"
                                         if self.max_pages > 1 else "")
        names = [upload.filename for upload in self.uploads]
        return "Add " + ", ".join(names[:3]) + (f" and {len(names) - 3} more"
                                                if len(names) > 3 else "")


class AddedDocument(BaseModel):
    """What a documents job did with one file or page."""

    document_id: str
    name: str  # the file name or the URL
    status: Literal["added", "updated", "unchanged", "removed", "skipped"]
    title: str = ""
    reason: str = ""  # why it was skipped
    chunks: int = 0
    pages: int | None = None


class DocumentsOutcome(BaseModel):
    documents: list[AddedDocument] = Field(default_factory=list)

    @property
    def summary(self) -> str:
        """One line: how many were added, updated, unchanged and skipped."""
        counts: dict[str, int] = {}
        for document in self.documents:
            counts[document.status] = counts.get(document.status, 0) + 1
        said = [f"{counts[status]} {status}" for status in
                ("added", "updated", "unchanged", "removed", "skipped") if counts.get(status)]
        return ", ".join(said) or "nothing to add"


def _request_kind(value: Any) -> str:
    """Which request a job carries; rows stored before documents jobs are research."""
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return "documents" if kind == "documents" else "research"


JobRequest = Annotated[
    Annotated[ResearchRequest, Tag("research")] | Annotated[DocumentsRequest, Tag("documents")],
    Discriminator(_request_kind)]


class Job(BaseModel):
    """A job as stored: a question (its research's `trace`, its `result`) or documents to
    add (`added`), or the reason it failed."""

    id: str = Field(default_factory=new_job_id)
    tenant: str = "local"
    user: str = ""
    platform: str = "cli"
    worker: str = ""
    request: JobRequest
    status: JobStatus = JobStatus.PENDING
    stage: Stage | None = None
    progress: float = Field(default=0.0, ge=0.0, le=1.0)
    trace: Trace = Field(default_factory=Trace)
    result: ResearchResult | None = None
    added: DocumentsOutcome | None = None  # a documents job's, once it ended
    error: str | None = None
    failure: FailureKind | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)
    started_at: datetime | None = None
    completed_at: datetime | None = None

    @property
    def subject(self) -> str:
        """The question asked, or what the job adds to the knowledge base."""
        return self.request.subject


class FailureKind(enum.StrEnum):
    """Why a job ended without an answer, as its front end tells it."""

    INVALID = "invalid"  # the request cannot be researched (InvalidQuestionError)
    CONFIGURATION = "configuration"  # a setting is wrong or a credential was refused
    ERROR = "error"  # anything else: an outage, a bug
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"  # its process stopped, or its workers kept dying


class LabelledQuery(BaseModel):
    label: str  # the source as people know it, e.g. "Wikipedia"
    query: str


class ProgressDetail(BaseModel):
    """What a stage event says beyond its message, for front ends to render: the search
    round of the tier's maximum, the queries each source is sent, the results being
    processed, the checklist's count. Empty for stages that have none of these."""

    round: int | None = None
    rounds_allowed: int | None = None
    queries: list[LabelledQuery] = Field(default_factory=list)
    results: int | None = None
    checklist: ChecklistCount | None = None


class StageEvent(BaseModel):
    """A research stage started or finished: what core.research reports to its sink."""

    stage: Stage
    kind: Literal["started", "finished"]
    progress: float
    message: str
    counts: dict[str, int] = Field(default_factory=dict)
    detail: ProgressDetail = Field(default_factory=ProgressDetail)


class ProgressEvent(StageEvent):
    """A stage event of one job; front ends render these while a job runs."""

    job_id: str


class JobEvent(BaseModel):
    """One stored event of a job, numbered from 1 in the order it happened: a stage started
    or finished, or the job was queued, completed, failed, cancelled or delivered."""

    job_id: str
    seq: int
    at: datetime
    kind: str
    stage: Stage | None = None
    progress: float = 0.0
    message: str = ""
    counts: dict[str, int] = Field(default_factory=dict)
    detail: ProgressDetail = Field(default_factory=ProgressDetail)

    @field_validator("detail", mode="before")
    @classmethod
    def _stored_before_details(cls, value: Any) -> Any:
        """Events stored before details were kept have none (NULL)."""
        return {} if value is None else value

    def progress_event(self) -> ProgressEvent | None:
        """The stage event this is, for a front end's progress line; None for job events."""
        if self.stage is None or self.kind not in ("started", "finished"):
            return None
        return ProgressEvent(job_id=self.job_id, stage=self.stage,
                             kind="started" if self.kind == "started" else "finished",
                             progress=self.progress, message=self.message, counts=self.counts,
                             detail=self.detail)

    @property
    def terminal(self) -> bool:
        """The job ended (its result or error is stored); delivery events may follow."""
        return self.kind in TERMINAL_EVENTS


TERMINAL_EVENTS = frozenset({"completed", "failed", "cancelled"})


ConversationTurn.model_rebuild()
ResearchRequest.model_rebuild()
Improvement.model_rebuild()
Job.model_rebuild()
