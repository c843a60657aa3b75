"""A fake Discord on 127.0.0.1: the REST API (recording every call) and the gateway websocket
(HELLO, heartbeat ACKs, READY after IDENTIFY, then whatever a test dispatches).

Point discord.py at it with `discord.http.Route.BASE = fake.api_base` and
`discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)`.
"""

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

APP_ID = "900000000000000001"
BOT_ID = "900000000000000002"
GUILD_ID = "800000000000000001"
CHANNEL_ID = "800000000000000002"
USER_ID = "700000000000000001"
BOT_USER = {"id": BOT_ID, "username": "researchbot", "discriminator": "0", "avatar": None,
            "bot": True, "global_name": None}
STAMP = "2026-11-21T00:00:00.000000+00:00"


def user(user_id: str = USER_ID, name: str = "ada") -> dict[str, Any]:
    return {"id": user_id, "username": name, "discriminator": "0", "avatar": None,
            "global_name": name}


@dataclass
class Call:
    method: str
    path: str
    body: Any
    at: float  # time.perf_counter() when it arrived


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # discord.py reads a body as JSON only when Content-Type is exactly application/json
    # (web.json_response adds "; charset=utf-8").
    return web.Response(body=json.dumps(data).encode(), status=status, headers={
        "Content-Type": "application/json", **(headers or {})})


class FakeDiscord(LocalServer):
    def __init__(self, shards: int = 1) -> None:
        super().__init__()
        self.calls: list[Call] = []
        self.changed = asyncio.Event()
        self.shards = shards
        self.identified: list[dict[str, Any]] = []  # IDENTIFY payloads, one a shard
        self.failures: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
        self.body_faults: list[list[Any]] = []  # [method, matches, status, times left]
        self._ids = itertools.count(600000000000000001)
        self._channels: dict[str, str] = {}  # interaction token -> its channel
        self._nonces: dict[str, dict[str, Any]] = {}  # enforced nonce -> message posted
        self._threaded: set[str] = set()  # messages a thread was started from
        self._sockets: list[web.WebSocketResponse] = []
        self._sequence = itertools.count(1)
        self.app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self.app.router.add_get("/gateway", self._gateway)
        self.app.router.add_get("/attachments/{attachment_id}/{name}", self._attachment)
        self.attachments: dict[str, bytes] = {}  # id -> content, as its CDN serves it
        # Role ids of the test server; when set, the server is announced (GUILD_CREATE) so
        # that members' roles resolve.
        self.guild_roles: tuple[str, ...] = ()
        self.downloads: list[str] = []  # attachment ids downloaded

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def fail(self, method: str, path_start: str, status: int, body: dict[str, Any],
             times: int = 1) -> None:
        """Answer the next `times` calls whose path starts with `path_start` with an error."""
        self.failures.setdefault((method, path_start), []).extend([(status, body)] * times)

    def fail_when(self, method: str, matches: Callable[[Any], bool], status: int,
                  times: int) -> None:
        """Answer the next `times` calls of `method` whose JSON body `matches` with a
        server error `status`."""
        self.body_faults.append([method, matches, status, times])

    def posted_ids(self, calls: list[Call]) -> set[str]:
        """The ids of the messages these POSTs created (a repeated nonce creates none)."""
        return {self._nonces[c.body["nonce"]]["id"] if c.body.get("nonce") in self._nonces
                else c.path for c in calls}

    def named(self, method: str, path_part: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and path_part in c.path]

    async def wait_for(self, predicate: Any, within_s: float = 30.0) -> None:
        async with asyncio.timeout(within_s):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

    # Gateway

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a dispatch (op 0) on the first shard's socket, once every shard is ready."""
        await self.wait_for(lambda: len(self.identified) >= self.shards)
        await self._sockets[0].send_str(json.dumps({"op": 0, "t": event,
                                                    "s": next(self._sequence), "d": data}))

    async def interaction(self, question: str, depth: str | None = None, *,
                          guild: str | None = GUILD_ID, user_id: str = USER_ID,
                          channel: str = CHANNEL_ID, **more: str) -> str:
        """A person runs /research (with `more` string options: recency="week"); returns
        the interaction token."""
        options = [{"name": "question", "type": 3, "value": question}]
        if depth:
            options.append({"name": "depth", "type": 3, "value": depth})
        options += [{"name": name, "type": 3, "value": value} for name, value in more.items()]
        return await self._interaction({"id": "500000000000000001", "name": "research",
                                        "type": 1, "options": options},
                                       guild, user_id, channel)

    async def message_command(self, name: str, content: str, *, guild: str | None = GUILD_ID,
                              user_id: str = USER_ID, channel: str = CHANNEL_ID,
                              author: dict[str, Any] | None = None) -> str:
        """A person runs the message command `name` on a message saying `content` (by
        `author`, another person by default); returns the interaction token."""
        target = str(next(self._ids))
        message = self._message(channel, {"content": content}, target,
                                author or user("700000000000000009", "bo"))
        return await self._interaction({"id": "500000000000000002", "name": name, "type": 3,
                                        "target_id": target,
                                        "resolved": {"messages": {target: message}}},
                                       guild, user_id, channel)

    async def _interaction(self, command: dict[str, Any], guild: str | None, user_id: str,
                           channel: str) -> str:
        interaction_id = str(next(self._ids))
        token = f"token-{interaction_id}"
        self._channels[token] = channel
        data: dict[str, Any] = {
            "id": interaction_id, "application_id": APP_ID, "type": 2, "token": token,
            "version": 1, "locale": "en-US", "app_permissions": "2248473465835073",
            "attachment_size_limit": 26214400, "entitlements": [], "context": 0,
            "authorizing_integration_owners": {"0": GUILD_ID}, "data": command,
        }
        if guild:
            data.update(guild_id=guild, guild_locale="en-US",
                        channel={"id": channel, "type": 0, "guild_id": guild, "name": "general",
                                 "position": 0, "permission_overwrites": [], "nsfw": False,
                                 "parent_id": None},
                        member={"user": user(user_id), "roles": [], "joined_at": STAMP,
                                "deaf": False, "mute": False, "flags": 0,
                                "permissions": "2248473465835073"})
        else:
            data.update(channel={"id": channel, "type": 1, "recipients": [user(user_id)]},
                        user=user(user_id), context=1)
        await self.dispatch("INTERACTION_CREATE", data)
        return token

    async def message(self, channel: str, content: str, *, author: dict[str, Any] | None = None,
                      guild: str | None = GUILD_ID, files: dict[str, bytes] | None = None,
                      mentions_bot: bool = False, roles: tuple[str, ...] = ()) -> str:
        """A message posted in `channel` (a thread, say) by a person (or `author`), with
        `files` (name -> content) attached, served from this server as from Discord's CDN."""
        message_id = str(next(self._ids))
        data = self._message(channel, {"content": content}, message_id,
                             author or user())
        for name, content_bytes in (files or {}).items():
            attachment_id = str(next(self._ids))
            self.attachments[attachment_id] = content_bytes
            url = f"http://127.0.0.1:{self.port}/attachments/{attachment_id}/{name}"
            data["attachments"].append({"id": attachment_id, "filename": name,
                                        "size": len(content_bytes), "url": url,
                                        "proxy_url": url})
        if mentions_bot:
            data["mentions"] = [BOT_USER]
        if guild:
            data["guild_id"] = guild
            data["member"] = {"roles": list(roles), "joined_at": STAMP, "deaf": False,
                              "mute": False, "flags": 0}
        await self.dispatch("MESSAGE_CREATE", data)
        return message_id

    async def reaction(self, channel: str, message: str, emoji: str, *, user_id: str = USER_ID,
                       guild: str | None = GUILD_ID, removed: bool = False) -> None:
        data: dict[str, Any] = {"user_id": user_id, "channel_id": channel, "message_id": message,
                                "emoji": {"id": None, "name": emoji}, "type": 0,
                                "burst": False}
        if guild:
            data["guild_id"] = guild
        await self.dispatch("MESSAGE_REACTION_REMOVE" if removed else "MESSAGE_REACTION_ADD",
                            data)

    def _guild(self) -> dict[str, Any]:
        roles = [{"id": role, "name": f"role {role}", "permissions": "0", "position": number,
                  "color": 0, "hoist": False, "managed": False, "mentionable": False,
                  "flags": 0} for number, role in enumerate((GUILD_ID, *self.guild_roles))]
        return {"id": GUILD_ID, "name": "Lighthouse keepers", "icon": None, "owner_id": USER_ID,
                "roles": roles, "emojis": [], "features": [], "channels": [], "threads": [],
                "members": [], "member_count": 1, "large": False, "unavailable": False,
                "verification_level": 0, "default_message_notifications": 0,
                "explicit_content_filter": 0, "mfa_level": 0, "premium_tier": 0,
                "preferred_locale": "en-US", "nsfw_level": 0, "stickers": [],
                "joined_at": STAMP}

    async def _attachment(self, request: web.Request) -> web.Response:
        attachment_id = request.match_info["attachment_id"]
        self.downloads.append(attachment_id)
        self.changed.set()
        content = self.attachments.get(attachment_id)
        if content is None:
            return web.Response(status=404)
        return web.Response(body=content, content_type="application/octet-stream")

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        async for frame in socket:
            if frame.type != web.WSMsgType.TEXT:
                continue
            payload = json.loads(frame.data)
            if payload["op"] == 1:
                await socket.send_str(json.dumps({"op": 11}))
            elif payload["op"] == 2:
                identify = payload["d"]
                self.identified.append(identify)
                self._sockets.append(socket)
                shard = identify.get("shard", [0, 1])
                await socket.send_str(json.dumps({"op": 0, "t": "READY", "s": 1, "d": {
                    "v": 10, "user": BOT_USER, "guilds": [], "session_id": f"s{shard[0]}",
                    "resume_gateway_url": self.gateway_url, "shard": shard,
                    "application": {"id": APP_ID, "flags": 0}}}))
                if self.guild_roles:  # the server, with its roles, as Discord sends it next
                    await socket.send_str(json.dumps({"op": 0, "t": "GUILD_CREATE", "s": 2,
                                                      "d": self._guild()}))
                self.changed.set()
        return socket

    # REST

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        body: Any = None
        if request.content_type == "application/json":
            body = await request.json()
        elif request.content_type.startswith("multipart/"):
            form = await request.post()
            body = json.loads(str(form["payload_json"])) if "payload_json" in form else {}
        call = Call(request.method, path, body, time.perf_counter())
        self.calls.append(call)
        self.changed.set()
        for fault in self.body_faults:
            if fault[0] == request.method and fault[3] > 0 and fault[1](body):
                fault[3] -= 1
                return _json({"message": "Internal Server Error", "code": 0}, fault[2],
                             {"Via": "1.1 google"})
        for (method, start), queued in self.failures.items():
            if method == request.method and path.startswith(start) and queued:
                status, error = queued.pop(0)
                # discord.py takes a 429 without a Via header for a Cloudflare ban.
                headers = {"Via": "1.1 google"}
                if status == 429:
                    headers.update({"Retry-After": str(error["retry_after"]),
                                    "X-RateLimit-Scope": "user"})
                return _json(error, status, headers)
        return self._answer(request.method, path, body or {})

    def _answer(self, method: str, path: str, body: dict[str, Any]) -> web.Response:
        parts = path.strip("/").split("/")
        if path == "/users/@me":
            return _json(BOT_USER)
        if path == "/oauth2/applications/@me":
            return _json({"id": APP_ID, "name": "researchbot", "icon": None,
                          "description": "", "rpc_origins": [], "bot_public": True,
                          "bot_require_code_grant": False, "owner": user("1", "owner"),
                          "summary": "", "verify_key": "00", "team": None, "flags": 0})
        if path == "/gateway/bot":
            return _json({"url": self.gateway_url, "shards": self.shards,
                          "session_start_limit": {"total": 1000, "remaining": 999,
                                                  "reset_after": 0, "max_concurrency": 1}})
        if parts[0] == "applications" and parts[-1] == "commands" and method == "PUT":
            return _json([{"description": "", **command, "id": str(next(self._ids)),
                           "application_id": APP_ID, "version": "1",
                           "default_member_permissions": None,
                           "type": command.get("type", 1)} for command in body])
        if parts[0] == "interactions":  # POST /interactions/{id}/{token}/callback
            return _json({"interaction": {"id": parts[1], "type": 2,
                                          "response_message_loading": body.get("type") == 5,
                                          "response_message_ephemeral": bool(
                                              (body.get("data") or {}).get("flags", 0) & 64)},
                          "resource": {"type": body.get("type")}})
        if parts[0] == "webhooks":
            # PATCH .../messages/@original, POST /webhooks/{app}/{token} (a follow-up)
            message_id = parts[-1] if method == "PATCH" else str(next(self._ids))
            if message_id == "@original":
                message_id = self._original(parts[2])
            return _json(self._message(self._channels.get(parts[2], CHANNEL_ID), body,
                                       message_id, BOT_USER, webhook=APP_ID))
        if parts[0] == "channels" and parts[-1] == "threads" and method == "POST":
            channel, message_id = parts[1], parts[3]
            if message_id in self._threaded:
                return _json({"message": "A thread has already been created for this message",
                              "code": 160004}, 400)
            self._threaded.add(message_id)
            return _json({"id": message_id, "type": 11, "guild_id": GUILD_ID,
                          "parent_id": channel, "name": body.get("name", ""),
                          "owner_id": BOT_ID, "message_count": 0, "member_count": 1,
                          "rate_limit_per_user": 0, "flags": 0,
                          "thread_metadata": {"archived": False, "locked": False,
                                              "auto_archive_duration": 1440,
                                              "archive_timestamp": STAMP}}, 201)
        if parts[0] == "channels" and "reactions" in parts:
            return web.Response(status=204)
        if parts[0] == "channels" and parts[2] == "messages" and method in ("POST", "PATCH"):
            nonce = body.get("nonce") if body.get("enforce_nonce") else None
            if method == "POST" and nonce in self._nonces:
                return _json(self._nonces[nonce])  # Discord: the message already posted
            message_id = parts[3] if method == "PATCH" else str(next(self._ids))
            message = self._message(parts[1], body, message_id, BOT_USER)
            if method == "POST" and nonce:
                self._nonces[nonce] = message
            return _json(message)
        return _json({"message": f"fake Discord has no {method} {path}", "code": 0}, 404)

    def _original(self, token: str) -> str:
        """A stable id for an interaction's original response message."""
        return str(600000000000000000 + int(token.removeprefix("token-")) % 10**12)

    @staticmethod
    def _message(channel: str, body: dict[str, Any], message_id: str, author: dict[str, Any],
                 webhook: str | None = None) -> dict[str, Any]:
        message = {"id": message_id, "channel_id": channel, "author": author,
                   "content": body.get("content") or "", "timestamp": STAMP,
                   "edited_timestamp": None, "tts": False, "mention_everyone": False,
                   "mentions": [], "mention_roles": [], "attachments": [],
                   "embeds": body.get("embeds") or [], "pinned": False, "type": 0,
                   "flags": body.get("flags", 0), "components": []}
        if webhook:
            message["webhook_id"] = webhook
            message["application_id"] = webhook
        return message
