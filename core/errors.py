"""The one error tree of the research core.

    ResearchBotError
    ├── ConfigurationError      a setting is wrong; raised at start-up, never mid-request
    ├── InvalidQuestionError    the user's question cannot be researched (empty, too long, binary)
    ├── IndexingError           a knowledge-base path cannot be indexed at all (missing path)
    ├── SourceError             a search source failed (outage, timeout); carries the source name
    │   ├── SourceTimeoutError
    │   └── SourceUnreachableError  no connection (no network, name not found, refused)
    ├── StoreError              the job store or a cache could not be read or written
    └── JobNotFoundError        no job has that id

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


class StoreError(ResearchBotError):
    """The job store or a cache failed."""


class JobNotFoundError(ResearchBotError):
    """No job has the given id."""
