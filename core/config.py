"""Setting slices the core needs. bot/ assembles them into one tree and passes them down."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreSettings(_Section):
    url: str | None = Field(
        default=None,
        description="SQLAlchemy async URL of the job store; default a SQLite file in the data dir "
        "(e.g. postgresql+asyncpg://user@host/db).",
    )
    stale_job_minutes: float = Field(
        default=60.0,
        gt=0,
        description="At start-up, unfinished jobs whose process is gone, or that are older "
        "than this, are marked failed.",
    )


class EmbeddingSettings(_Section):
    model: str = Field(
        default="builtin",
        description="'builtin' (all-MiniLM-L6-v2 int8 ONNX, offline, no PyTorch) or any litellm "
        "embedding model string, e.g. 'openai/text-embedding-3-small'.",
    )
    api_base: str | None = Field(default=None, description="Base URL for a litellm model.")
    api_key: SecretStr | None = Field(default=None, description="API key for a litellm model.")
    batch_size: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="Texts per embedding call (default 8 for 'builtin': larger batches of "
        "256-token passages cost ~3x the memory and run slower on CPU; 64 for litellm).",
    )
    threads: int = Field(default=0, ge=0, description="ONNX threads for 'builtin' (0: all cores).")


class KnowledgeBaseSettings(_Section):
    chroma_url: str | None = Field(
        default=None,
        description="URL of a Chroma server (http://host:8000); default an embedded "
        "PersistentClient in the data dir.",
    )
    chunk_tokens: int = Field(default=400, ge=50, le=2000, description="Target tokens a chunk.")
    overlap_tokens: int = Field(default=60, ge=0, description="Tokens repeated between chunks.")
    max_file_mb: float = Field(default=20.0, gt=0, description="Larger files are skipped.")
    candidates: int = Field(default=40, ge=1, description="Candidates each retriever returns.")
    mmr_lambda: float = Field(
        default=0.75, ge=0, le=1, description="MMR trade-off: 1 pure relevance, 0 pure diversity."
    )
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal-rank-fusion constant.")

    @model_validator(mode="after")
    def _overlap_below_chunk(self) -> KnowledgeBaseSettings:
        if self.overlap_tokens >= self.chunk_tokens:
            raise ValueError("overlap_tokens must be smaller than chunk_tokens")
        return self


class CacheSettings(_Section):
    enabled: bool = Field(default=True, description="Serve and store answers in the cache.")
    similarity_threshold: float = Field(
        default=0.92,
        ge=0.5,
        le=1.0,
        description="Cosine similarity at or above which a past question counts as the same.",
    )
    ttl_hours: float = Field(default=168.0, ge=0, description="Lifetime of a cached answer.")
    current_event_ttl_hours: float = Field(
        default=1.0, ge=0, description="Lifetime for current-event questions (0: never cached)."
    )


class PipelineSettings(_Section):
    source_timeout_s: float = Field(default=10.0, gt=0, description="Per-source search limit.")
    max_sources: int = Field(default=8, ge=1, le=50, description="Passages kept after ranking.")
    max_per_document: int = Field(
        default=3, ge=1, description="Passages kept from any one document."
    )
    min_relevance: float = Field(
        default=0.30,
        ge=0,
        le=1,
        description="Evidence below this relevance never reaches an answer.",
    )
    answer_sentences: int = Field(
        default=6, ge=1, le=30, description="Sentences in an extractive answer."
    )
