"""Secrets never leave the process: one redaction for everything that does (terminal, logs,
chat messages, job rows, error text from providers).

A `Redactor` replaces the values it was given (every configured secret: tokens, API keys, the
passwords inside database and Redis URLs) and anything shaped like a credential whether or not
it was configured: a URL's password, `api_key=`-style query parameters, `Bearer` headers and
the token formats of Slack, OpenAI-style providers and Tavily. The process has one, `REDACTOR`:
what must be redacted is a property of the process (its settings and environment), and the
places that need it (a log record, a job row, a line on stderr) cannot all be handed an object.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from pydantic import BaseModel, SecretStr

MASK = "[redacted]"
MIN_SECRET_CHARS = 6
# Environment variables whose names say they hold a credential (litellm reads provider keys
# such as OPENAI_API_KEY from the environment, so they can reach a provider's error text).
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|_PASS|_PWD|CREDENTIALS?)$",
                          re.I)
# Query parameters that carry credentials, and the narrower set of names that mark one in
# "name: value" text (plain "key" or "token" there is too often ordinary prose).
_PARAM_KEYS = (r"(?:api[_-]?key|apikey|key|token|access[_-]?token|auth|secret|password|passwd"
               r"|pwd|sig|signature|client[_-]?secret)")
_FIELD_KEYS = (r"(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|bot[_-]?token"
               r"|app[_-]?token|client[_-]?secret|signing[_-]?secret|secret[_-]?key|password)")
# Each shape with the strings one of which any text it matches contains (lower-cased where the
# shape ignores case): most text holds none of them and skips the shape's scan, which
# costs ten times the test (the "name: value" shape alone ~50 us on a 500-character answer).
_PATTERNS: tuple[tuple[re.Pattern[str], str, tuple[str, ...], bool], ...] = (
    # scheme://user:password@host
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/?#@\s]*:)[^@/?#\s]+@", re.I), rf"\1{MASK}@",
     ("://",), False),
    # ?api_key=...&token=...
    (re.compile(rf"([?&;]{_PARAM_KEYS}=)[^&#\s\"'<>]+", re.I), rf"\1{MASK}", ("=",), False),
    # "api_key": "...", api_key='...', token: ...
    (re.compile(rf"([\"']?{_FIELD_KEYS}[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}}&]{{6,}}", re.I),
     rf"\1{MASK}", ("key", "token", "secret", "password"), True),
    # Authorization: Bearer ..., Bot ..., Basic ...
    # (a credential has digits and some length: "Bearer bonds" is prose)
    (re.compile(r"\b(Bearer|Bot|Basic|Token)\s+(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}"),
     rf"\1 {MASK}", ("Bearer", "Bot", "Basic", "Token"), False),
    # Slack, OpenAI/Anthropic-style, Tavily and GitHub token formats
    (re.compile(r"\b(?:xox[abposr]|xapp|xoxe(?:\.xox[bp])?)-[A-Za-z0-9-]{6,}"), MASK,
     ("xox", "xapp"), False),
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{16,}"), MASK, ("sk-", "rk-", "pk-"), False),
    (re.compile(r"\btvly-[A-Za-z0-9_-]{8,}"), MASK, ("tvly-",), False),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), MASK,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), False),
)


# The redactions kept (see Redactor.__call__): texts up to this long, this many of them
MEMO_CHARS = 2000
MEMO_ENTRIES = 4096


class Redactor:
    """Replaces known secret values and credential-shaped text. Thread-safe to extend."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()
        # The known values' pattern, and the texts redacted with it (oldest first) with their
        # redaction: replaced together, so a redaction is never kept under a newer pattern.
        self._current: tuple[re.Pattern[str] | None, dict[str, str]] = (None, {})

    def add(self, *values: str | SecretStr | None) -> None:
        """Redact these values from now on (too short to be a secret: ignored)."""
        fresh = set()
        for value in values:
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if not value or len(value) < MIN_SECRET_CHARS:
                continue
            fresh |= {value, quote(value, safe=""), quote_plus(value)}
        with self._lock:
            if fresh - self._values:
                self._values |= fresh
                ordered = sorted(self._values, key=len, reverse=True)
                self._current = (re.compile("|".join(re.escape(v) for v in ordered)), {})

    def add_settings(self, settings: BaseModel) -> None:
        """Every secret in a settings tree: SecretStr fields, and passwords inside URLs."""
        self.add(*_secrets_in(settings))

    def add_environment(self, environ: Mapping[str, str]) -> None:
        """Values of environment variables named like credentials (OPENAI_API_KEY, ...), and
        passwords in URLs held by any of them (DATABASE_URL, ...)."""
        for name, value in environ.items():
            if _SECRET_NAME.search(name):
                self.add(value)
            elif "://" in value:
                self.add(_url_password(value))

    def __call__(self, text: str) -> str:
        """The text redacted. The same texts come back often (a cached answer's passages and
        references, stored again with every job it answers), so the latest few thousand
        short ones are kept with their redaction."""
        if not text:
            return text
        pattern, memo = self._current
        done = memo.get(text)
        if done is not None:
            return done
        redacted = self._redacted(text, pattern)
        if len(text) <= MEMO_CHARS:
            if len(memo) >= MEMO_ENTRIES:
                # another thread may change it meanwhile: then it is one entry over, for now
                with contextlib.suppress(RuntimeError):
                    memo.pop(next(iter(memo), text), None)
            memo[text] = redacted
        return redacted

    @staticmethod
    def _redacted(text: str, pattern: re.Pattern[str] | None) -> str:
        if pattern is not None:
            text = pattern.sub(MASK, text)
        lowered = text.lower()
        for shape, replacement, needles, ignore_case in _PATTERNS:
            within = lowered if ignore_case else text
            if any(needle in within for needle in needles):
                text = shape.sub(replacement, text)
                lowered = text.lower()
        return text

    def data(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, strings) with every string redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {key: self.data(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value


REDACTOR = Redactor()


def redact(text: str) -> str:
    return REDACTOR(text)


def error_line(error: BaseException, limit: int = 200) -> str:
    """An error in one short redacted line: its type and the first line of what it says (of
    the driver's error, for a database error, which would carry its statement and
    parameters). For logs a person reads: no stack trace."""
    said = str(getattr(error, "orig", None) or error).strip().splitlines()
    return f"{type(error).__name__}: {redact(said[0] if said else '')[:limit]}"


def _secrets_in(model: BaseModel) -> Iterable[str]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        yield from _secrets_of(value)


def _secrets_of(value: Any) -> Iterable[str]:
    if isinstance(value, SecretStr):
        secret = value.get_secret_value()
        if "://" in secret:  # a URL (a database's, Redis's): its password is the secret
            yield from filter(None, [_url_password(secret)])
        else:
            yield secret
    elif isinstance(value, BaseModel):
        yield from _secrets_in(value)
    elif isinstance(value, str) and "://" in value:
        yield from filter(None, [_url_password(value)])
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _secrets_of(item)


def _url_password(url: str) -> str | None:
    try:
        return urlsplit(url.strip()).password
    except ValueError:
        return None


# ---- where text leaves the process --------------------------------------------------------

_factory_installed = False


def install_log_redaction() -> None:
    """Redact every log record as it is made, whichever logger or handler it goes to: its
    message, its arguments and its traceback."""
    global _factory_installed
    if _factory_installed:
        return
    make = logging.getLogRecordFactory()

    def redacted_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed format string: logging reports it later as it would
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)))
            record.exc_text = record.exc_text.rstrip("\n")
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    logging.setLogRecordFactory(redacted_record)
    _factory_installed = True


def safe_url(url: str) -> str:
    """`url` fit for a message: its password, and credentials in its query, redacted."""
    return REDACTOR(url)
