"""A local OpenAI-compatible server (the /v1/embeddings route) for tests, on 127.0.0.1."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np
from aiohttp import web

from tests.local_server import LocalServer

DIMENSIONS = 64


def bag_of_words_vector(text: str) -> list[float]:
    """Deterministic: texts sharing words get similar vectors."""
    vector = np.zeros(DIMENSIONS)
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % DIMENSIONS] += 1.0
    norm = np.linalg.norm(vector) or 1.0
    return (vector / norm).tolist()


class FakeOpenAI(LocalServer):
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        super().__init__()
        self.app.router.add_post("/v1/embeddings", self._embeddings)

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
