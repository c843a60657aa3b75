"""The HTTP API's request and response bodies. They are the OpenAPI document's schemas too,
so what the document promises is what the handlers are checked against."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)

from core.models import (
    MAX_DOMAIN_LENGTH,
    MAX_DOMAINS,
    MAX_ITERATIONS,
    AddedDocument,
    Citation,
    Confidence,
    ContentType,
    Depth,
    JobStatus,
    ProgressDetail,
    PublicTrace,
    Recency,
    Reference,
    SearchControls,
    Stage,
    normalised_domain,
    turns_as_history,
)
from core.store.feedback import MAX_COMMENT_CHARS, Rating
from core.text import unstorable_characters

MAX_HISTORY_TURNS = 10


class ErrorBody(BaseModel):
    type: str = Field(description="invalid_request, invalid_question, unauthorized, not_found, "
                      "conflict, payload_too_large, unsupported_type, rate_limited, "
                      "unavailable or internal")
    message: str = Field(description="What went wrong and what to do, for a person to read.")
    retryable: bool = Field(description="Whether the same request may succeed later.")


class ErrorResponse(BaseModel):
    error: ErrorBody


class HistoryTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(max_length=2000)
    answer: str = Field(default="", max_length=8000)


class ResearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question, 1 to 2,000 characters of text.")
    depth: Depth = Field(default=Depth.AUTO, description="auto (chosen from the question), "
                         "quick, standard or deep.")
    bypass_cache: bool = Field(default=False, description="Research again even when a cached "
                               "answer to the same question exists.")
    context: str = Field(
        default="", description="Your needs or constraints, up to 2,000 characters (\"for a "
        "beginner\", \"only peer-reviewed studies\"): a language model researches and writes "
        "within them; without one they are kept with the job, not used. A list of earlier "
        "turns is still accepted here (deprecated: send it as `history`).")
    history: list[HistoryTurn] = Field(
        default_factory=list, max_length=MAX_HISTORY_TURNS,
        description="Earlier questions and answers this one follows up on, oldest first.")
    recency: Recency | None = Field(
        default=None, description="day, week, month, year or any: how recent results must "
        "be. Unset: the question decides (\"recent\" means a month).")
    include_domains: list[Annotated[str, Field(max_length=2 * MAX_DOMAIN_LENGTH)]] = Field(
        default_factory=list, max_length=MAX_DOMAINS,
        description="Only results from these sites (and their subdomains), like nature.com.")
    exclude_domains: list[Annotated[str, Field(max_length=2 * MAX_DOMAIN_LENGTH)]] = Field(
        default_factory=list, max_length=MAX_DOMAINS,
        description="Never results from these sites (and their subdomains).")
    content_type: ContentType = Field(
        default=ContentType.GENERAL, description="news, academic (arXiv, PubMed, research "
        "papers) or general (sources chosen from the question).")

    @field_validator("include_domains", "exclude_domains")
    @classmethod
    def _domains(cls, domains: list[str]) -> list[str]:
        return list(dict.fromkeys(normalised_domain(domain) for domain in domains))

    @property
    def controls(self) -> SearchControls:
        return SearchControls(recency=self.recency, include_domains=tuple(self.include_domains),
                              exclude_domains=tuple(self.exclude_domains),
                              content_type=self.content_type)

    max_iterations: int | None = Field(
        default=None, ge=1, le=MAX_ITERATIONS, description="Search rounds at most; the depth "
        "tier's own limit applies when it is lower (the lower of the two is used).")
    _turns_in_context: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _turns_as_history(cls, data: Any, handler: ModelWrapValidatorHandler[ResearchBody]
                          ) -> ResearchBody:
        """The old body sent earlier turns as a list in `context`."""
        moved = isinstance(data, dict) and isinstance(data.get("context"), list)
        body = handler(turns_as_history(data))
        body._turns_in_context = moved
        return body

    @property
    def turns_in_context(self) -> bool:
        """Whether the earlier turns came in `context` (deprecated), not `history`."""
        return self._turns_in_context


class ImproveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    feedback: str = Field(min_length=1, max_length=4000, description="How the answer should "
                          "change: \"shorter\", \"add the 2019 figures\", \"compare with X\".")


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rating: Rating
    comment: str = Field(default="", max_length=MAX_COMMENT_CHARS)

    @field_validator("comment")
    @classmethod
    def _storable(cls, comment: str) -> str:
        refused = unstorable_characters(comment)
        if refused:
            raise ValueError(f"holds characters that are not text ({', '.join(refused[:5])})")
        return comment


class Links(BaseModel):
    self: str = Field(description="GET: the job (this shape).")
    events: str = Field(description="GET: its progress as Server-Sent Events.")
    page: str = Field(description="Its answer page, shareable without a key.")


class Accepted(BaseModel):
    job_id: str
    status: JobStatus
    links: Links


class AnswerBody(BaseModel):
    summary: str
    detail: str
    confidence: Confidence
    limitations: list[str]


class SourceBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    title: str
    url: str | None = None
    path: str | None = None
    location: str | None = None
    snippet: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class JobResponse(BaseModel):
    """A job. Once completed, its fields are the object `researchbot ask --json` prints
    (answer, citations, references, sources, metadata), plus where it is."""

    job_id: str
    status: JobStatus
    question: str
    stage: Stage | None = None
    progress: float
    created_at: datetime
    completed_at: datetime | None = None
    error: str | None = Field(default=None, description="Why it failed or was cancelled.")
    context: str | None = Field(default=None, description="A question's: the needs or "
                                "constraints it was asked with (\"\" when none).")
    max_iterations: int | None = Field(default=None, description="A question's: the search "
                                       "rounds it asked for at most (null: the tier's).")
    answer: AnswerBody | None = None
    citations: list[Citation] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    sources: list[SourceBody] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    kind: Literal["research", "documents"] = Field(
        default="research", description="research: a question; documents: adding documents "
        "(POST /v1/documents), its `question` saying what it adds.")
    documents: list[AddedDocument] | None = Field(
        default=None, description="A documents job's, once it ended: what became of each "
        "file or page (added, updated, unchanged, removed or skipped, with why).")
    trace: PublicTrace | None = Field(
        default=None, description="A completed question's: how it was researched (rounds "
        "and the queries each source was sent, the checklist, totals, facts, the search "
        "behind each passage of evidence, and whether a limit stopped it).")
    links: Links


class JobSummary(BaseModel):
    job_id: str
    status: JobStatus
    question: str
    platform: str
    created_at: datetime
    completed_at: datetime | None = None
    confidence: Confidence | None = None
    links: Links


class JobList(BaseModel):
    jobs: list[JobSummary]


class FeedbackStored(BaseModel):
    job_id: str
    rating: Rating
    comment: str


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    checks: dict[str, str] = Field(description="Each dependency: ok, not used, or why not.")


class ProgressEventBody(BaseModel):
    """The data of each `progress` Server-Sent Event (its `id` is `seq`)."""

    seq: int
    kind: str = Field(description="queued, started, finished, resumed, requeued, "
                      "cancel_requested, then completed, failed or cancelled")
    stage: Stage | None = None
    progress: float
    message: str
    detail: ProgressDetail = Field(
        default_factory=ProgressDetail, description="A search round of the tier's maximum, "
        "the query each source is sent, the results processed, the checklist's count.")
    at: datetime


class DocumentBody(BaseModel):
    document_id: str = Field(description="The document's id: its chunks and vectors carry it.")
    title: str
    authors: str | None = Field(description="As the document names them, when it does.")
    date: str | None = Field(description="Its publication or creation date, when known.")
    origin: Literal["path", "url", "upload"] = Field(
        description="path: indexed from the server's files (researchbot index); url: read "
        "from the web; upload: sent to POST /v1/documents.")
    path: str = Field(description="The file's path or the page's URL.")
    chunks: int = Field(description="Passages indexed.")
    words: int
    pages: int | None = Field(default=None, description="A PDF's pages, a deck's slides, a "
                              "workbook's sheets.")
    status: Literal["indexed"]
    added_at: datetime = Field(description="When this version was indexed.")
    added_by: str | None = Field(default=None, description="Who added it: the API key's "
                                 "name or the chat user (none for files indexed on the server).")


class DocumentList(BaseModel):
    documents: list[DocumentBody]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on "
                                    "the last.")


class DocumentRemoved(BaseModel):
    document_id: str
    status: Literal["removed"]


class Crawl(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_pages: int = Field(default=50, ge=1, le=500)
    max_depth: int = Field(default=2, ge=0, le=10)


class AddUrl(BaseModel):
    """A web page to add; with `crawl`, the pages of its site it links to (under its path)
    and its sitemap lists."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=4096)
    crawl: Crawl | None = None


class DocumentQueued(BaseModel):
    document_id: str = Field(description="The id it will be listed under once indexed "
                             "(a URL's start page; a crawl's other pages get their own).")
    name: str = Field(description="The file name as kept, or the URL.")
    status: Literal["queued"]


class DocumentsAccepted(BaseModel):
    documents: list[DocumentQueued]
    job_id: str
    status: JobStatus
    links: Links


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=4000)
    limit: int = Field(default=8, ge=1, le=25)


class Passage(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    title: str
    text: str = Field(description="The passage.")
    url: str | None = None
    path: str | None = None
    location: str | None = None


class SearchFailure(BaseModel):
    source: str
    kind: str = Field(description="unreachable, timeout, busy, too_large, rate_limited, "
                      "refused or error")


class SearchFound(BaseModel):
    query: str
    passages: list[Passage]
    failures: list[SearchFailure] = Field(description="Sources that failed this search.")
