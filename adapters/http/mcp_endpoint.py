"""/mcp: the MCP server (adapters.mcp) over streamable HTTP, behind the same API keys and
tenant rules as /v1: a request without a valid key is answered 401 (or, where keyless access
is allowed, served as the default tenant) before the SDK sees it; the caller rides in the
request's state, where the tools read their tenant."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from adapters.http.auth import api_caller
from adapters.http.errors import ApiError, error_response
from adapters.http.failed_auth import FailedAuthentications
from adapters.http.services import ApiServices

PATH = "/mcp"


class McpEndpoint:
    """The ASGI endpoint of /mcp: authenticate, then hand the request to the SDK's session
    manager (run for the app's lifetime by its lifespan)."""

    def __init__(self, session_manager: Any, services: ApiServices,
                 failures: FailedAuthentications) -> None:
        self._sessions = session_manager
        self._services = services
        self._failures = failures

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            caller = await api_caller(request, self._services, self._failures)
        except ApiError as error:
            refused = error_response(error.status, error.kind, error.message,
                                     error.retryable, error.headers)
            await refused(scope, receive, send)
            return
        scope.setdefault("state", {})["caller"] = caller
        await self._sessions.handle_request(scope, receive, send)
