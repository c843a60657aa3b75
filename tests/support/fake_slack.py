"""A fake Slack Web API on 127.0.0.1 that records every call (POST /api/{method})."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.support.local_server import LocalServer


@dataclass
class Fault:
    """Answer the next `times` calls of `method` whose arguments `matches` with `status`."""

    method: str
    times: int
    status: int = 500
    matches: Callable[[dict[str, Any]], bool] = lambda args: True
    hits: int = 0


class FakeSlack(LocalServer):
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.received_at: list[float] = []  # time.perf_counter() of each call, as `calls`
        self._ts = itertools.count(1)
        super().__init__()
        self.app.router.add_post("/api/{method}", self._handle)
        self.app.router.add_get("/api/{method}", self._handle)  # slack_sdk GETs some reads
        self.app.router.add_get("/socket", self._socket)
        self.app.router.add_get("/files/{file_id}/{name}", self._file)
        # files shared: id -> (name, content), served by files.info and their private URL
        self.files: dict[str, tuple[str, bytes]] = {}
        self.socket_events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.socket_acks: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.rate_limited: dict[str, int] = {}  # method -> how many calls to answer with 429
        self.faults: list[Fault] = []  # server errors for calls that match, in order
        self.posted: list[dict[str, Any]] = []  # messages posted: channel, ts, thread, metadata
        # Calls that are carried out but never answered (the caller dies waiting, say).
        self.stall: Callable[[str, dict[str, Any]], bool] = lambda method, args: False
        self._stopping = asyncio.Event()
        self.teams = {"xoxb-test": "T1"}  # bot token -> workspace, for auth.test
        self.installed = {"access_token": "xoxb-installed", "team": {"id": "T3", "name": "Three"},
                          "bot_user_id": "UBOT3"}  # what oauth.v2.access grants

    async def stop(self) -> None:
        self._stopping.set()  # stalled calls end
        await super().stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def named(self, method: str) -> list[dict[str, Any]]:
        return [args for name, args in self.calls if name == method]

    async def wait_for(self, predicate: Any, within_s: float = 30.0) -> None:
        async with asyncio.timeout(within_s):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

    async def push_event(self, body: dict[str, Any]) -> None:
        """Deliver an Events API body over Socket Mode, as Slack does to a connected app."""
        await self.socket_events.put({"envelope_id": body["event_id"], "type": "events_api",
                                      "accepts_response_payload": False, "payload": body})

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_json({"type": "hello", "num_connections": 1,
                                "connection_info": {"app_id": "A1"}})

        async def forward() -> None:
            while True:
                await socket.send_json(await self.socket_events.get())

        sender = asyncio.create_task(forward())
        try:
            async for message in socket:
                if message.type == web.WSMsgType.TEXT:
                    self.socket_acks.append(message.json())
                    self.changed.set()
        finally:
            sender.cancel()
        return socket

    async def _file(self, request: web.Request) -> web.Response:
        """A file's private URL: its content for a workspace's bot token; without one, the
        sign-in page (HTML, status 200), as Slack answers."""
        self.calls.append(("file download", {"token": request.headers.get("Authorization")}))
        self.changed.set()
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        shared = self.files.get(request.match_info["file_id"])
        if token not in self.teams or shared is None:
            return web.Response(text="<html><body>Sign in to Slack</body></html>",
                                content_type="text/html")
        return web.Response(body=shared[1], content_type="application/octet-stream")

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        # slack_sdk sends some methods as JSON, some as a form, some as query parameters.
        args: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            args.update(await request.json())
        else:
            args.update(await request.post())
        bearer = request.headers.get("Authorization", "")
        if bearer.startswith("Bearer "):
            args["token"] = bearer.removeprefix("Bearer ")
        self.calls.append((method, args))
        self.received_at.append(time.perf_counter())
        self.changed.set()
        for fault in self.faults:
            if fault.times > 0 and fault.method == method and fault.matches(args):
                fault.times -= 1
                fault.hits += 1
                return web.json_response({"ok": False, "error": "internal_error"},
                                         status=fault.status)
        if self.rate_limited.get(method, 0) > 0:
            self.rate_limited[method] -= 1
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                     headers={"Retry-After": "1"})
        if method == "auth.test":
            team = self.teams.get(args.get("token", ""))
            if team is None:
                return web.json_response({"ok": False, "error": "invalid_auth"})
            return web.json_response({"ok": True, "user_id": "UBOT", "bot_id": "BBOT",
                                      "team_id": team, "user": "researchbot"})
        if method == "apps.connections.open":
            return web.json_response({"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"})
        if method == "oauth.v2.access":
            self.teams[self.installed["access_token"]] = self.installed["team"]["id"]
            return web.json_response({"ok": True, "app_id": "A1", "token_type": "bot",
                                      "scope": "chat:write", "authed_user": {"id": "U9"},
                                      "enterprise": None, "is_enterprise_install": False,
                                      **self.installed})
        if method in ("chat.postMessage", "chat.update"):
            ts = args.get("ts") or f"1700000000.{next(self._ts):06d}"
            if method == "chat.postMessage":
                self.posted.append({"channel": args.get("channel"), "ts": ts,
                                    "thread_ts": args.get("thread_ts") or ts,
                                    "metadata": _json_arg(args.get("metadata"))})
            if self.stall(method, args):
                await self._stopping.wait()
            return web.json_response({"ok": True, "channel": args.get("channel"), "ts": ts})
        if method == "files.info":
            shared = self.files.get(str(args.get("file", "")))
            if shared is None:
                return web.json_response({"ok": False, "error": "file_not_found"})
            name, content = shared
            return web.json_response({"ok": True, "file": {
                "id": args["file"], "name": name, "size": len(content),
                "url_private_download":
                    f"http://127.0.0.1:{self.port}/files/{args['file']}/{name}"}})
        if method == "conversations.replies":
            messages = [{"ts": m["ts"], "metadata": m["metadata"]} for m in self.posted
                        if m["channel"] == args.get("channel")
                        and m["thread_ts"] == args.get("ts")]
            return web.json_response({"ok": True, "messages": messages, "has_more": False})
        return web.json_response({"ok": True})


def _json_arg(value: Any) -> Any:
    """An argument slack_sdk sent as JSON text in a form, or as JSON itself."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
