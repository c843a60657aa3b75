"""Which failures are worth another attempt: network errors, timeouts, 429 and 5xx only. A
refused key, a missing model or a bug fails the same way again."""


import aiohttp
import discord
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from core.jobs.delivery import http_status, transient
from core.llm.gateway import _transient

pytestmark = pytest.mark.unit


class _Response:
    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "scripted"


def _slack_error(status: int) -> SlackApiError:
    response = AsyncSlackResponse(client=None, http_verb="POST", api_url="chat.update",
                                  req_args={}, data={"ok": False, "error": "x"}, headers={},
                                  status_code=status)
    return SlackApiError("failed", response)


@pytest.mark.parametrize(("error", "expected"), [
    (_slack_error(500), True), (_slack_error(429), True), (_slack_error(400), False),
    (discord.HTTPException(_Response(503), "x"), True),  # type: ignore[arg-type]
    (discord.Forbidden(_Response(403), {"code": 50013, "message": "x"}), False),  # type: ignore[arg-type]
    (aiohttp.ServerDisconnectedError(), True), (ConnectionResetError(), True),
    (TimeoutError(), True), (TimeoutError(), True),
    (KeyError("ts"), False), (ValueError("bug"), False),
])
def test_delivery_retries_only_transient_platform_failures(error: BaseException,
                                                           expected: bool) -> None:
    assert transient(error) is expected


def test_the_status_is_read_from_each_clients_exception() -> None:
    assert http_status(_slack_error(502)) == 502
    assert http_status(discord.HTTPException(_Response(429), "x")) == 429  # type: ignore[arg-type]
    assert http_status(ValueError()) is None


@pytest.mark.parametrize(("error", "status", "expected"), [
    (RuntimeError("boom"), None, False),  # a bug: not retried
    (TypeError("bad"), None, False),
    (ConnectionError(), None, True), (TimeoutError(), None, True),
    (RuntimeError(), 401, False), (RuntimeError(), 404, False),
    (RuntimeError(), 408, True), (RuntimeError(), 429, True), (RuntimeError(), 503, True),
])
def test_model_calls_retry_only_transient_failures(error: Exception, status: int | None,
                                                    expected: bool) -> None:
    assert _transient(error, status) is expected
