"""The one gateway to language models: litellm, behind `ModelGateway.json`.

A call renders a prompt template, asks the role's model for JSON, parses it into a pydantic
model (repairing small slips, asking once more when that fails), and books the tokens and
cost on the job's `Usage`. Transient failures (408 and other timeouts, 429, 5xx, connection
errors) are retried with exponential backoff and jitter, honouring Retry-After, then the role's
fallback models are tried. A job whose calls keep failing is marked degraded: it stops calling
and finishes with what it has.

The job's budget is a hard limit on every call: a call gets the time left before
`Usage.deadline` as its timeout (retries only while time is left), and its reply is capped so
that the tokens spent, those promised to calls in flight and its own prompt and reply stay
within `Usage.token_limit`. A call that cannot fit is not made: LLMBudgetError.

A reply's size is capped too (`MAX_REPLY_BYTES`, decoded bytes, counted as it streams): a
server answering with far more than `max_tokens` asked for costs an LLMError, not the
process's memory (`cap_model_replies`).

    LLMError                a call failed for good (after retries and fallbacks)
    ├── LLMOutputError      the reply was not the JSON asked for, even after a repair turn
    ├── LLMDegradedError    too many of the job's calls failed; no more are made
    └── LLMBudgetError      the job's time or tokens are spent; the call was not made
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import random
import re
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from core.config import LLMSettings
from core.errors import (
    CredentialRefusedError,
    LLMBudgetError,
    LLMDegradedError,
    LLMError,
    LLMOutputError,
    ResponseTooLargeError,
)
from core.llm.prompts import PromptLibrary
from core.metrics import count_model_call
from core.text import estimate_tokens

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
CONSECUTIVE_FAILURES_TO_DEGRADE = 3
MAX_RETRY_AFTER_S = 30.0
MIN_CALL_SECONDS = 0.2  # less time than this left: the call is not started
MIN_REPLY_TOKENS = 64  # less room than this for a reply: the call is not started
DEFAULT_REPLY_TOKENS = 1000
GENEROUS_BYTES_PER_TOKEN = 2.5  # a prompt's tokens are overestimated before its call
# A reply of even 100k tokens is under 2 MB of JSON; embeddings of a 64-text batch of 3072
# dimensions as floats are ~4 MB. Past this, a reply is abandoned as it streams.
MAX_REPLY_BYTES = 16 * 1024 * 1024


class Role(enum.StrEnum):
    FAST = "fast"  # intent, planning, evidence, reflection
    STRONG = "strong"  # synthesis, verification


class Usage(BaseModel):
    """One job's model calls: tokens, cost and failures (stored in the job's metrics), and the
    budget they must stay within."""

    calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls_by_model: dict[str, int] = Field(default_factory=dict)
    consecutive_failures: int = 0
    degraded: bool = False
    # The job's budget, set by its caller (per phase): a loop.time() after which no call is
    # made, and the tokens all calls together may use. Tokens promised to calls in flight
    # are `reserved`.
    deadline: float | None = None
    token_limit: int | None = None
    reserved: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def seconds_left(self) -> float:
        if self.deadline is None:
            return float("inf")
        return self.deadline - asyncio.get_running_loop().time()

    def tokens_left(self) -> float:
        if self.token_limit is None:
            return float("inf")
        return self.token_limit - self.tokens - self.reserved

    def book(self, model: str, response: Any) -> tuple[int, float]:
        """Count a call that answered; its tokens and cost."""
        self.calls += 1
        self.consecutive_failures = 0
        self.calls_by_model[model] = self.calls_by_model.get(model, 0) + 1
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = _cost(response)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cost_usd += cost
        return prompt + completion, cost

    def fail(self) -> None:
        self.calls += 1
        self.failed_calls += 1
        self.consecutive_failures += 1
        if self.consecutive_failures >= CONSECUTIVE_FAILURES_TO_DEGRADE or (
            self.calls >= 4 and self.failed_calls * 2 >= self.calls
        ):
            self.degraded = True

    def metrics(self) -> dict[str, Any]:
        return {"llm_calls": self.calls, "llm_failed_calls": self.failed_calls,
                "llm_retries": self.retries, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "tokens": self.tokens,
                "cost_usd": round(self.cost_usd, 6), "llm_calls_by_model": self.calls_by_model,
                "llm_degraded": self.degraded}


class ModelGateway:
    def __init__(self, settings: LLMSettings, prompts: PromptLibrary | None = None) -> None:
        self._settings = settings
        self._prompts = prompts or PromptLibrary.load()
        strong = settings.strong_model or settings.fast_model
        fast = settings.fast_model or settings.strong_model
        assert fast and strong, "ModelGateway needs llm.fast_model or llm.strong_model"
        self._chains = {
            Role.FAST: [fast, *settings.fast_fallbacks],
            Role.STRONG: [strong, *settings.strong_fallbacks],
        }
        self._limit = asyncio.Semaphore(settings.concurrency)

    def model(self, role: Role) -> str:
        return self._chains[role][0]

    async def json(self, role: Role, prompt: str, schema: type[T], usage: Usage, *,
                   reply_tokens: int = DEFAULT_REPLY_TOKENS, **values: object) -> T:
        """Ask the role's model to fill `schema` from the `prompt` template, in at most
        `reply_tokens` tokens (fewer when the job's budget has less room)."""
        messages = self._prompts[prompt].messages(**values)
        reply = await self._complete(role, messages, usage, reply_tokens)
        try:
            return parse_json(reply, schema)
        except ValueError as error:
            log.info("%s: malformed reply to %s (%s); asking again", self.model(role), prompt,
                     error)
            messages = [*messages, {"role": "assistant", "content": reply[:4000]},
                        *self._prompts["repair"].messages(error=str(error)[:500])]
            again = await self._complete(role, messages, usage, reply_tokens)
            try:
                return parse_json(again, schema)
            except ValueError as second:
                raise LLMOutputError(self.model(role), f"the reply to {prompt!r} was not "
                                     f"valid JSON for {schema.__name__}: {second}") from None

    async def _complete(self, role: Role, messages: list[dict[str, str]], usage: Usage,
                        reply_tokens: int) -> str:
        if usage.degraded:
            raise LLMDegradedError(self.model(role), "too many failed calls in this job")
        failure: LLMError | None = None
        failures: list[LLMError] = []
        for model in self._chains[role]:
            try:
                async with self._limit:
                    return await self._within_budget(model, role, messages, usage,
                                                     reply_tokens)
            except LLMBudgetError:
                if failure is None:
                    raise
                break  # no time or tokens for a fallback: the first failure is the news
            except LLMError as error:
                failure = error
                failures.append(error)
                log.warning("model %s failed: %s", model, error)
        usage.fail()
        assert failure is not None
        if all(f.status in _SETTING_ERRORS for f in failures):
            # Every model of the chain refused the key or does not exist: a setting is wrong,
            # and every call of every job would fail the same way. Stop and name it.
            raise CredentialRefusedError(_setting_message(self._chains[role][0],
                                                          failure.status))
        raise failure

    async def _within_budget(self, model: str, role: Role, messages: list[dict[str, str]],
                             usage: Usage, reply_tokens: int) -> str:
        """One model's attempts, with the tokens they may use reserved for their duration."""
        if usage.seconds_left() < MIN_CALL_SECONDS:
            raise LLMBudgetError(model, "time")
        prompt = estimate_prompt_tokens(messages)
        room = usage.tokens_left() - prompt
        if room < MIN_REPLY_TOKENS:
            raise LLMBudgetError(model, "tokens")
        max_tokens = int(min(reply_tokens, room))
        usage.reserved += prompt + max_tokens
        try:
            return await self._attempts(model, role, messages, usage, max_tokens)
        finally:
            usage.reserved -= prompt + max_tokens

    async def _attempts(self, model: str, role: Role, messages: list[dict[str, str]],
                        usage: Usage, max_tokens: int) -> str:
        settings = self._settings
        for attempt in range(1, settings.attempts + 1):
            limit_s = min(settings.timeout_s, usage.seconds_left())
            try:
                async with asyncio.timeout(limit_s + 0.25):  # should litellm's own not fire
                    response = await self._call(model, messages, limit_s, max_tokens)
            except Exception as error:  # litellm raises many types; sorted out here
                oversized = _oversized(error)
                if oversized is not None:  # it would answer the same again: not retried
                    raise LLMError(model, f"the reply was larger than "
                                   f"{oversized.limit / 2**20:g} MB") from error
                status = _status(error)
                transient = _transient(error, status)
                delay = max(settings.backoff_s * 2 ** (attempt - 1) * random.uniform(0.8, 1.2),
                            _retry_after(error) or 0.0)
                if not transient or attempt == settings.attempts \
                        or usage.seconds_left() - delay < MIN_CALL_SECONDS:
                    raise LLMError(model, _describe(error), status) from error
                usage.retries += 1
                await asyncio.sleep(delay)
                continue
            count_model_call(model, role.value, *usage.book(model, response))
            text = _content(response)
            if text is None:
                raise LLMError(model, "the reply had no text")
            return text
        raise AssertionError("unreachable")

    async def _call(self, model: str, messages: list[dict[str, str]], limit_s: float,
                    max_tokens: int) -> Any:
        settings = self._settings
        return await _completion(
            settings, model=model, messages=messages, temperature=settings.temperature,
            timeout=limit_s, max_tokens=max_tokens, response_format={"type": "json_object"},
            drop_params=True)


async def ping_model(settings: LLMSettings, model: str, timeout_s: float) -> None:
    """One completion of one token, not retried: the cheapest proof that the key and the
    model work (`researchbot check`, a bot's start-up check). Raises litellm's own error, so
    that the caller can tell a refused key (401, 403) or model (404) from a busy one."""
    await _completion(settings, model=model, messages=[{"role": "user", "content": "Say OK."}],
                      max_tokens=1, timeout=timeout_s)


async def _completion(settings: LLMSettings, **arguments: Any) -> Any:
    """litellm's completion on the configured endpoint and key, its retries left to us."""
    if settings.api_base:
        arguments["api_base"] = settings.api_base
    if settings.api_key is not None:
        arguments["api_key"] = settings.api_key.get_secret_value()
    import litellm

    litellm.suppress_debug_info = True
    cap_model_replies()
    return await litellm.acompletion(num_retries=0, max_retries=0, **arguments)


def cap_model_replies(max_bytes: int = MAX_REPLY_BYTES) -> None:
    """Send litellm's calls that go through the OpenAI SDK (openai/..., any OpenAI-compatible
    server named by llm.api_base, and the providers litellm reaches that way) through an httpx
    client whose replies stop at `max_bytes` and which follows no redirect (litellm's own
    follows them). `litellm.aclient_session` is litellm's one hook for every such call; it is
    process-wide and litellm caches SDK clients around it, so it is set once and kept, and an
    aclient_session someone else set is left alone. Under the cap runs litellm's own transport
    (aiohttp: proxies from the environment and event-loop changes handled). Providers litellm
    calls through its own HTTP handler (anthropic/, ollama/, ...) have no such hook: their
    replies are bounded by max_tokens only."""
    import litellm
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    from core.web.net import capped_http_client

    if litellm.aclient_session is None:
        litellm.aclient_session = capped_http_client(
            max_bytes, AsyncHTTPHandler.create_async_transport())


def _oversized(error: BaseException) -> ResponseTooLargeError | None:
    """The cap's error when it is why a call failed: litellm reports it as a connection error
    (or even a 500), keeping it in the exception's causes."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ResponseTooLargeError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def estimate_prompt_tokens(messages: list[dict[str, str]]) -> int:
    """A generous count of a prompt's tokens (the budget is reserved before the call)."""
    text = "".join(m["content"] for m in messages)
    return estimate_tokens(text, GENEROUS_BYTES_PER_TOKEN) + 8 * len(messages)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_json(text: str, schema: type[T]) -> T:
    """The reply as `schema`, forgiving code fences, prose around the object and trailing
    commas; ValueError (with the reason) otherwise."""
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1)
    start, end = candidate.find("{"), candidate.rfind("}")
    if start == -1 or end < start:
        raise ValueError("no JSON object in the reply")
    candidate = candidate[start:end + 1]
    try:
        data = json.loads(candidate)
    except RecursionError:
        raise ValueError("invalid JSON: nested too deeply") from None
    except json.JSONDecodeError:
        try:
            data = json.loads(_TRAILING_COMMA.sub(r"\1", candidate))
        except json.JSONDecodeError as error:
            raise ValueError(f"invalid JSON: {error}") from None
        except RecursionError:
            raise ValueError("invalid JSON: nested too deeply") from None
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                             for e in error.errors()[:5])
        raise ValueError(f"wrong shape: {problems}") from None


def _content(response: Any) -> str | None:
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    return content if isinstance(content, str) and content.strip() else None


def _status(error: Exception) -> int | None:
    """The HTTP status of a failed call (litellm reports its timeouts as 408); None for
    connection errors and our own timeout."""
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


# A provider's answers that mean a setting is wrong: the key (401, 403) or the model (404).
_SETTING_ERRORS = frozenset({401, 403, 404})


def _setting_message(model: str, status: int | None) -> str:
    if status == 404:
        return (f"llm.fast_model / llm.strong_model: the provider does not know the model "
                f"{model!r} (HTTP 404): fix the model name")
    return (f"llm.api_key: the provider refused the API key for {model!r} (HTTP {status}): set "
            "a valid key in llm.api_key (or the provider's own variable)")


def _transient(error: Exception, status: int | None) -> bool:
    """Worth another attempt: a timeout (408 included), a rate limit, a server error, or no
    connection. Anything else, a bug included, would fail the same way again."""
    if status is not None:
        return status in (408, 429) or status >= 500
    name = type(error).__name__
    return isinstance(error, (TimeoutError, ConnectionError)) or "Timeout" in name \
        or "Connection" in name


def _retry_after(error: Exception) -> float | None:
    for headers in (getattr(getattr(error, "response", None), "headers", None),
                    getattr(error, "litellm_response_headers", None),
                    getattr(error, "headers", None)):
        if not headers:
            continue
        value = headers.get("retry-after") or headers.get("Retry-After")
        try:
            return min(float(value), MAX_RETRY_AFTER_S) if value is not None else None
        except ValueError:
            return None
    return None


def _describe(error: Exception) -> str:
    """What went wrong in plain words. A provider's error body is never repeated: some echo
    the request, API key included; it goes to the (redacted) debug log only."""
    from core.redact import redact

    detail = re.sub(r"\s+", " ", str(getattr(error, "message", "") or error))[:500]
    log.debug("model call failed: %s: %s", type(error).__name__, redact(detail))
    status = _status(error)
    if status in (401, 403):
        return f"the provider refused the API key (HTTP {status}): check llm.api_key"
    if status == 404:
        return "the provider does not know this model (HTTP 404)"
    if status in (408, 504) or isinstance(error, TimeoutError) or "Timeout" in type(error).__name__:
        return "the call timed out"
    if status == 429:
        return "the provider is rate limiting (HTTP 429)"
    if status is not None:
        return f"the provider answered HTTP {status}"
    if "Connection" in type(error).__name__:
        return "the provider could not be reached"
    return f"the call failed ({type(error).__name__})"


def _cost(response: Any) -> float:
    try:
        import litellm

        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # unknown models have no price: cost unknown, not an error
        return 0.0
