"""The headers every response carries, whatever answered it (a route, an error handler, the
body-size limit, routing's own 404):

    X-Content-Type-Options: nosniff    a browser never takes JSON or text for HTML or script
    Cache-Control: no-store            unless the response chose its own (the page's assets)

A job's JSON and pages are one caller's and change while the job runs, so no cache, shared
or private, keeps them. A 500 is sent from outside every middleware (Starlette's
ServerErrorMiddleware), so `errors.error_response` sets the same headers itself."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFETY_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


class SafetyHeaders:
    """Adds `SAFETY_HEADERS` to each HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SAFETY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
