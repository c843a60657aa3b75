"""The one error tree of the research core.

    ResearchBotError
    ├── ConfigurationError      a setting is wrong; raised at start-up, never mid-request
    ├── InvalidQuestionError    the user's question cannot be researched (empty, too long, binary)
    ├── IndexingError           a knowledge-base path cannot be indexed at all (missing path)
    ├── BlockedAddressError     an outbound URL (or a redirect's target) is this machine, a private
    │                           network or not http(s); refused before any connection is made
    ├── RedirectError           a redirect without a target, or more redirects than the limit
    ├── ResponseTooLargeError   an answer passed its size cap while streaming (decoded bytes count)
    ├── FetchError              a web page was not fetched or read; `outcome` names the kind
    ├── SourceError             a search source failed (outage, timeout); carries the source name
    │   ├── SourceTimeoutError
    │   ├── SourceUnreachableError  no connection (no network, name not found, refused)
    │   ├── SourceResponseTooLargeError  its answer passed sources.max_response_mb
    │   ├── SourceHttpError     it answered a non-2xx status (429 and 5xx are retried)
    │   ├── SourceDroppedError  the connection broke mid-call (retried)
    │   └── SourceBusyError     never sent: no turn (rate limit, concurrency) before the deadline
    ├── StoreError              the job store or a cache could not be read or written
    ├── JobNotFoundError        no job has that id
    └── JobFailedError          a job ended without an answer (its stored reason)

"No evidence" is not an error: it is an answer graded Insufficient.
"""

from __future__ import annotations


class ResearchBotError(Exception):
    """Base of every error the core raises on purpose."""


class ConfigurationError(ResearchBotError):
    """A setting is missing or invalid."""


class InvalidQuestionError(ResearchBotError):
    """The question cannot be researched; the message is safe to show to the user."""


class IndexingError(ResearchBotError):
    """A path given to the indexer cannot be indexed at all."""


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
    """A search source answered with more than `sources.max_response_mb`: it was not read
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


class StoreError(ResearchBotError):
    """The job store or a cache failed."""


class JobNotFoundError(ResearchBotError):
    """No job has the given id."""


class JobFailedError(ResearchBotError):
    """A job ended without an answer; the message is the reason stored on the job."""
