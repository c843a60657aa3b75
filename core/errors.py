"""The one error tree of the research core.

    ResearchBotError
    ├── ConfigurationError      a setting is wrong; found at start-up, before any request
    │   └── CredentialRefusedError  a key or model a setting names was refused at run time
    │                           (401/403/404): every request would fail alike; names the setting
    ├── InvalidQuestionError    the user's question cannot be researched (empty, too long, binary)
    ├── RateLimitedError        too many questions from a person or tenant; when to ask again
    ├── IndexingError           a knowledge-base path cannot be indexed at all (missing path)
    ├── UnreadableDocumentError a file is not the document its name says (skipped, with why)
    ├── DocumentRefusedError    a file or link offered to the knowledge base is refused before
    │                           anything is kept: too large, a type it cannot read, a URL it
    │                           may not fetch; `reason` names which
    ├── BlockedAddressError     an outbound URL (or a redirect's target) is this machine, a private
    │                           network or not http(s); refused before any connection is made
    ├── RedirectError           a redirect without a target, or more redirects than the limit
    ├── ResponseTooLargeError   an answer passed its size cap while streaming (decoded bytes count)
    ├── FetchError              a web page was not fetched or read; `outcome` names the kind
    ├── SourceError             a search source failed (outage, timeout); carries the source name
    │   ├── SourceTimeoutError
    │   ├── SourceUnreachableError  no connection (no network, name not found, refused)
    │   ├── SourceResponseTooLargeError  its answer passed advanced.sources.max_response_mb
    │   ├── SourceHttpError     it answered a non-2xx status (429 and 5xx are retried)
    │   ├── SourceDroppedError  the connection broke mid-call (retried)
    │   └── SourceBusyError     never sent: no turn (rate limit, concurrency) before the deadline
    ├── LLMError                a model call failed for good (after retries and fallbacks)
    │   ├── LLMOutputError      the reply was not the JSON asked for, even after a repair
    │   ├── LLMDegradedError    too many of the job's calls failed: finish without the model
    │   └── LLMBudgetError      the job's time or tokens are spent: the call was not made
    ├── StoreError              the job store or a cache could not be read or written
    ├── UnavailableError        a server answering needs is away for now; ask again after
    │   │                       `retry_after_s` (HTTP 503 with Retry-After)
    │   ├── StoreUnavailableError  the database cannot be reached (down, restarting) or its
    │   │                       disk is full (core.store.outage tells one from a bug)
    │   ├── VectorStoreUnavailableError  the Chroma server cannot be reached
    │   └── QueueUnavailableError  the job queue (Redis) cannot be reached: nothing was queued
    ├── JobNotFoundError        no job has that id
    └── JobFailedError          a job ended without an answer (its stored reason)

"No evidence" is not an error: it is an answer graded Insufficient. The HTTP front end's
`ApiError` (adapters/http/errors.py) is not part of this tree: it is the adapter's HTTP
answer (a status and a body), raised and caught inside the app.
"""

from __future__ import annotations

from typing import Literal


class ResearchBotError(Exception):
    """Base of every error the core raises on purpose."""


class ConfigurationError(ResearchBotError):
    """A setting is missing or invalid."""


class CredentialRefusedError(ConfigurationError):
    """A key or model named by a setting was refused while a job ran (HTTP 401, 403 or 404):
    every job would fail the same way. The message names the setting to fix."""


class InvalidQuestionError(ResearchBotError):
    """The question cannot be researched; the message is safe to show to the user."""


class RateLimitedError(ResearchBotError):
    """Too many questions; `retry_after_s` says when one would be accepted."""

    def __init__(self, scope: str, limit: int, window_s: float, retry_after_s: float) -> None:
        super().__init__(f"{scope} limit of {limit} questions per {window_s:g} s reached")
        self.scope = scope
        self.limit = limit
        self.window_s = window_s
        self.retry_after_s = retry_after_s


class IndexingError(ResearchBotError):
    """A path given to the indexer cannot be indexed at all."""


class UnreadableDocumentError(ResearchBotError):
    """The file cannot be read as the document its name says it is."""


DocumentRefusal = Literal["too_large", "unsupported", "not_allowed", "invalid"]


class DocumentRefusedError(ResearchBotError):
    """A file or link sent to be added was refused; the message is safe to show and says
    what would be accepted."""

    def __init__(self, message: str, reason: DocumentRefusal) -> None:
        super().__init__(message)
        self.reason = reason


class BlockedAddressError(ResearchBotError):
    """A URL points at an address the bot must not reach (loopback, private, link-local, ...)
    or uses a scheme other than http(s). Raised before connecting: nothing was sent."""


class RedirectError(ResearchBotError):
    """A redirect named no target, or the chain of redirects was longer than the limit."""


class ResponseTooLargeError(ResearchBotError):
    """An answer grew past `limit` bytes while it was read (decompressed bytes are counted, so
    a small compressed bomb is stopped too). `read` is how far it got."""

    def __init__(self, limit: int, read: int) -> None:
        super().__init__(f"the answer is larger than {limit / 2**20:g} MB")
        self.limit = limit
        self.read = read


class FetchError(ResearchBotError):
    """A page was not fetched; the message says why (refused, too big, not text, ...) and
    `outcome` names the kind (source_fetch_total): blocked, robots, too_large, timeout,
    http_error, not_a_page or error."""

    def __init__(self, message: str, outcome: str = "error") -> None:
        super().__init__(message)
        self.outcome = outcome


class SourceError(ResearchBotError):
    """A search source failed. An outage, not an empty result."""

    def __init__(self, source: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.status = status


class SourceTimeoutError(SourceError):
    """A search source did not answer within its time limit."""


class SourceUnreachableError(SourceError):
    """No connection to a search source could be made: no network, an unknown name, a
    refused or silently dropped connection. Not retried; the source rests a while."""


class SourceResponseTooLargeError(SourceError):
    """A search source answered with more than `advanced.sources.max_response_mb`: it was not read
    further. Not retried (it would answer the same)."""


class SourceHttpError(SourceError):
    """A non-2xx answer; `retry_after` from the response when it said."""

    def __init__(self, source: str, status: int, retry_after: float | None = None) -> None:
        super().__init__(source, f"HTTP {status}", status)
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        return self.status == 429 or (self.status or 0) >= 500


class SourceDroppedError(SourceError):
    """The connection broke mid-call: worth another attempt."""


class SourceBusyError(SourceError):
    """The call waited for its turn (a concurrency slot, the rate limit: this process's or the
    one shared in Redis) until its time was nearly up, and was never sent. The source is busy
    with other questions, not down: the breaker does not count it."""


class LLMError(ResearchBotError):
    """A model call failed for good (after retries and fallbacks)."""

    def __init__(self, model: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{model}: {message}")
        self.model = model
        self.status = status


class LLMOutputError(LLMError):
    """The model's reply was not the JSON asked for, even after one repair attempt."""


class LLMDegradedError(LLMError):
    """Too many calls of this job failed: stop calling, finish with what is gathered."""


class LLMBudgetError(LLMError):
    """The job's time (`kind` "time") or tokens ("tokens") are spent: the call was not made."""

    def __init__(self, model: str, kind: Literal["time", "tokens"]) -> None:
        super().__init__(model, f"the job's {'time' if kind == 'time' else 'token'} budget "
                         "is spent")
        self.kind = kind


class StoreError(ResearchBotError):
    """The job store or a cache failed."""


class UnavailableError(ResearchBotError):
    """Something answering needs is away for now (a restart, an outage, a full disk): not
    the request's fault, and worth asking again after `retry_after_s`. The message says
    what is away, without addresses or credentials."""

    def __init__(self, message: str, retry_after_s: float = 5.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class StoreUnavailableError(UnavailableError):
    """The database cannot be reached or written (down, restarting, its disk full)."""


class VectorStoreUnavailableError(UnavailableError):
    """The vector store (a Chroma server) cannot be reached: down, restarting, unreachable."""


class QueueUnavailableError(UnavailableError):
    """The job queue cannot be reached: the job was not queued (and is not pending)."""


class JobNotFoundError(ResearchBotError):
    """No job has the given id."""


class JobFailedError(ResearchBotError):
    """A job ended without an answer; the message is the reason stored on the job."""
