"""A local OpenAI-compatible server for tests, on 127.0.0.1: /v1/embeddings, and
/v1/chat/completions answered by a per-test script keyed by the prompt's task."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from aiohttp import web

from tests.support.local_server import LocalServer

DIMENSIONS = 64


def bag_of_words_vector(text: str) -> list[float]:
    """Deterministic: texts sharing words get similar vectors."""
    vector = np.zeros(DIMENSIONS)
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % DIMENSIONS] += 1.0
    norm = np.linalg.norm(vector) or 1.0
    return (vector / norm).tolist()


async def _still_wanted(request: web.Request, seconds: float) -> bool:
    """Wait `seconds`, or less if the client hangs up (a stall must not outlive its test)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        if request.transport is None or request.transport.is_closing():
            return False
        await asyncio.sleep(min(0.05, end - time.perf_counter()))
    return True


@dataclass
class HttpError:
    """A scripted failure: the status, and Retry-After when set."""

    status: int
    retry_after: float | None = None


@dataclass
class Chat:
    """One recorded chat completion request."""

    task: str
    model: str
    messages: list[dict[str, str]]
    at: float
    max_tokens: int | None = None

    @property
    def prompt(self) -> str:
        return self.messages[-1]["content"] if self.messages else ""


Reply = dict[str, Any] | str | HttpError
Script = Callable[[Chat], Reply]
Step = Reply | Script  # a list of these is used in order, its last one from then on


class FakeOpenAI(LocalServer):
    def __init__(self, latency_s: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.chats: list[Chat] = []
        self.script: dict[str, Script | list[Step]] = {}  # task -> a function, or steps
        self.latency_s = latency_s
        self.delays: dict[str, float] = {}  # task -> extra seconds before it answers (a stall)
        self.completion_tokens: int | None = None  # reported per call (default: ~chars/4)
        super().__init__()
        self.app.router.add_post("/v1/embeddings", self._embeddings)
        self.app.router.add_post("/v1/chat/completions", self._chat)

    def tasks(self) -> list[str]:
        return [chat.task for chat in self.chats]

    async def _chat(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer test-key":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        body = await request.json()
        messages = body["messages"]
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        match = re.match(r"TASK: (\w+)", system)
        chat = Chat(match.group(1) if match else "unknown", body["model"], messages,
                    time.perf_counter(), body.get("max_tokens"))
        self.chats.append(chat)
        delay = self.latency_s + self.delays.get(chat.task, 0.0)
        if delay and not await _still_wanted(request, delay):
            return web.Response(status=499)  # the client gave up waiting
        script = self.script.get(chat.task)
        if isinstance(script, list):
            picked = script.pop(0) if len(script) > 1 else script[0]
            reply = picked(chat) if callable(picked) else picked
        elif script is not None:
            reply = script(chat)
        else:
            return web.json_response({"error": {"message": f"no script for {chat.task}"}},
                                     status=400)
        if isinstance(reply, HttpError):
            headers = {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after else {}
            return web.json_response({"error": {"message": f"scripted {reply.status}",
                                                "type": "server_error"}},
                                     status=reply.status, headers=headers)
        content = reply if isinstance(reply, str) else json.dumps(reply)
        prompt_tokens = sum(len(m["content"]) for m in messages) // 4
        completion = self.completion_tokens if self.completion_tokens is not None \
            else len(content) // 4
        finish = "stop"
        if chat.max_tokens is not None:  # a real server stops writing at max_tokens
            if len(content) // 4 > chat.max_tokens:
                content, finish = content[:chat.max_tokens * 4], "length"
            completion = min(completion, chat.max_tokens)
        return web.json_response({
            "id": f"chatcmpl-{len(self.chats)}", "object": "chat.completion",
            "created": int(time.time()), "model": body["model"],
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                      "total_tokens": prompt_tokens + completion},
        })

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _embeddings(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer test-key":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        body = await request.json()
        self.requests.append(body)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        return web.json_response({
            "object": "list",
            "model": body["model"],
            "data": [
                {"object": "embedding", "index": n, "embedding": bag_of_words_vector(text)}
                for n, text in enumerate(inputs)
            ],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        })
