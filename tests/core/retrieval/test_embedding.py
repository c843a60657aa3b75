from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from core.config import EmbeddingSettings, KnowledgeBaseSettings
from core.errors import ConfigurationError
from core.retrieval.embedding import LiteLLMEmbedder, OnnxMiniLMEmbedder, build_embedder
from core.retrieval.kb.knowledge_base import KnowledgeBase
from core.store.catalogue import KnowledgeCatalogue
from tests.support.fake_openai import DIMENSIONS, FakeOpenAI

pytestmark = pytest.mark.integration


def test_builtin_embedder_is_normalised_and_semantic(embedder: OnnxMiniLMEmbedder) -> None:
    vectors = embedder.embed(["How do cats sleep?", "Sleeping habits of cats",
                              "Tax rules for companies", ""])
    assert vectors.shape == (4, 384)
    assert abs(float((vectors[0] ** 2).sum()) - 1) < 1e-4
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    assert embedder.embed([]).shape == (0, 384)


def test_a_model_string_must_name_a_provider() -> None:
    with pytest.raises(ConfigurationError, match=r"embedding\.model"):
        build_embedder(EmbeddingSettings(model="text-embedding-3-small"))


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()


async def test_litellm_embedder_indexes_and_searches(
    fake_openai: FakeOpenAI, sqlite_engine: Any, chroma: Any, corpus: Path
) -> None:
    settings = EmbeddingSettings(model="openai/test-embedder", api_base=fake_openai.base_url,
                                 api_key=SecretStr("test-key"), batch_size=4)
    embedder = build_embedder(settings)
    assert isinstance(embedder, LiteLLMEmbedder)
    kb = KnowledgeBase(KnowledgeCatalogue(sqlite_engine), chroma, embedder, KnowledgeBaseSettings())
    report = await kb.index([corpus], "t1")
    assert len(report.added) == 5
    assert fake_openai.requests and all(len(r["input"]) <= 4 for r in fake_openai.requests)
    assert fake_openai.requests[0]["model"] == "test-embedder"
    hits = await kb.search("Mount Vesuvius Pompeii", "t1", limit=3, mode="dense")
    assert hits[0].path is not None and hits[0].path.endswith("volcanoes.rst")
    assert len(hits[0].embedding or []) == DIMENSIONS
