"""How every long-running process logs (`log.*` settings): one handler on the root logger,
writing text lines or JSON objects to stderr.

A JSON line carries `time`, `level`, `logger`, `message` and, where known, `job_id`, `tenant`
and `stage` (from the job running, core.logfields), plus the fields a call passes in `extra`.
Secrets never reach it: messages, arguments and tracebacks are redacted as records are made
(core.redact.install_log_redaction), and `extra` fields, which logging sets after that, are
redacted here before they are written. Question text, which core passes as the `question`
field, is dropped unless `log.include_questions` is set."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

from pythonjsonlogger.json import JsonFormatter

from bot.config import LogSettings
from core.logfields import JOB_FIELDS
from core.redact import REDACTOR, install_log_redaction

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
QUESTION_FIELDS = ("question",)


class JobFields(logging.Filter):
    """Adds the running job's id, tenant and stage to a record that does not name them."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in (JOB_FIELDS.get() or {}).items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class DropQuestions(logging.Filter):
    """Removes question text passed as a field: logs name jobs, never what was asked."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name in QUESTION_FIELDS:
            record.__dict__.pop(name, None)
        return True


class RedactedJsonFormatter(JsonFormatter):
    """One JSON object a line, every value redacted. Values are redacted one by one, never the
    serialised line: a credential pattern run over JSON text could swallow its quotes."""

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        # uvicorn adds a copy of each message with terminal colour codes: not for a collector
        return {key: _redacted(value) for key, value in log_data.items()
                if key != "color_message"}

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")


def _redacted(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(key): _redacted(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_redacted(item) for item in value]
    return REDACTOR(value if isinstance(value, str) else str(value))


def configure_logging(settings: LogSettings, stream: TextIO | None = None) -> logging.Handler:
    """Log to `stream` (stderr) in `log.format` from `log.level` up, replacing the handler an
    earlier call installed (and leaving other handlers alone). The handler, for tests."""
    install_log_redaction()
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(__name__)
    handler.addFilter(JobFields())
    if not settings.include_questions:
        handler.addFilter(DropQuestions())
    if settings.format == "json":
        handler.setFormatter(RedactedJsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False))
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == __name__]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(settings.level)
    return handler
