"""Fields that tag every log record made while a job runs: its id, its tenant and the stage
it is in.

The job service sets them around a job's work (`job_log_fields`) and moves `stage` along; a
logging filter (bot/logs.py) copies them onto each record made meanwhile, whichever module
logs it, so a JSON log line names its job without every call passing it. A context variable,
because a job's work spans tasks: each task copies the context it was started in, and with it
this same mapping, so a stage moved on is seen by all of them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

JOB_FIELDS: ContextVar[dict[str, str] | None] = ContextVar("job_log_fields", default=None)


@contextmanager
def job_log_fields(**fields: str) -> Iterator[dict[str, str]]:
    """Tag the records logged inside the block; the mapping yielded may be updated."""
    current = dict(fields)
    token = JOB_FIELDS.set(current)
    try:
        yield current
    finally:
        JOB_FIELDS.reset(token)
