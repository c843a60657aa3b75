"""Setting slices the core needs. bot/ assembles them into one tree and passes them down."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    model_validator,
)
from pydantic_settings import NoDecode

from core.redact import safe_url


def comma_list(value: Any) -> Any:
    """A list setting given as one string (an environment variable): 'a, b' or '["a", "b"]'."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ValueError('not a JSON list: write a,b or ["a", "b"]') from None
    return [item.strip() for item in text.split(",") if item.strip()]


def http_url(value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{safe_url(value)!r} is not an http(s) URL: write http(s)://host[:port]")
    return value.strip()


def _blank_is_unset(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


# Every list of strings reads "a,b" (friendly in an environment variable) as well as a JSON
# or TOML list; every URL is checked when the settings load, not at the first request.
StrList = Annotated[list[str], NoDecode, BeforeValidator(comma_list)]
HttpUrl = Annotated[str, AfterValidator(http_url)]
OptionalHttpUrl = Annotated[HttpUrl | None, BeforeValidator(_blank_is_unset)]
STORE_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")


def store_url(value: str | None) -> str | None:
    if value is None:
        return None
    scheme = value.partition("://")[0].lower()
    if scheme in ("postgres", "postgresql") or scheme.startswith("postgresql+"):
        hint = "write postgresql+asyncpg://user@host:5432/db"
    elif scheme.startswith("sqlite"):
        hint = "write sqlite+aiosqlite:////absolute/path.db"
    else:
        hint = "use sqlite+aiosqlite:///path or postgresql+asyncpg://user@host/db"
    if scheme not in STORE_DRIVERS:
        raise ValueError(f"{safe_url(value)!r} is not a supported async URL: {hint}")
    return value


def _secret_store_url(value: SecretStr | None) -> SecretStr | None:
    return None if value is None else SecretStr(store_url(value.get_secret_value()) or "")


# URLs that may carry a password are secrets: printed settings show them as '**********'.
StoreUrl = Annotated[SecretStr | None, BeforeValidator(_blank_is_unset),
                     AfterValidator(_secret_store_url)]


def _redis_url(value: SecretStr | None) -> SecretStr | None:
    if value is not None and urlsplit(value.get_secret_value()).scheme not in (
            "redis", "rediss", "unix"):
        raise ValueError(f"{safe_url(value.get_secret_value())!r} is not a Redis URL: write "
                         "redis://host:6379/0 (rediss:// for TLS)")
    return value


# A Redis URL may carry a password: a secret, like the store's URL.
RedisUrl = Annotated[SecretStr | None, BeforeValidator(_blank_is_unset),
                     AfterValidator(_redis_url)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreSettings(_Section):
    url: StoreUrl = Field(
        default=None,
        description="SQLAlchemy async URL of the job store; default a SQLite file in the data dir "
        "(e.g. postgresql+asyncpg://user@host/db).",
    )
    stale_job_minutes: float = Field(
        default=60.0,
        gt=0,
        description="Unfinished jobs whose process is gone are run again when serve or a chat "
        "front end starts (without a queue; their events continue and the answer page says "
        "'Resumed after a restart') or queued again by a worker's sweep; those older than this "
        "are marked failed.",
    )
    min_free_mb: float = Field(
        default=64.0,
        ge=0,
        description="Below this much free space on the data folder's disk the API is not "
        "ready (/readyz) and refuses questions with 503: their jobs could not be stored.",
    )


class QueueSettings(_Section):
    """The job queue, in redis.url: chat front ends and the API submit jobs to it and
    `researchbot worker` processes answer them."""

    enabled: bool = Field(
        default=True, description="With redis.url set, jobs go to the queue and `researchbot "
        "worker` processes answer them. false: every process answers the questions it takes "
        "and Redis shares only limits, event dedupe and source breakers.")
    concurrency: int = Field(default=8, ge=1, description="Quick and standard jobs one worker "
                             "runs at once.")
    deep_concurrency: int = Field(default=2, ge=1, description="Deep jobs one worker runs at "
                                  "once (their own queue, so they never hold up quick ones).")
    max_attempts: int = Field(default=3, ge=1, description="Tries of one job whose worker died "
                              "or stopped; then the job fails and the person is told. Retries "
                              "wait 2 s, doubling up to 60 s, so an outage does not burn them.")
    heartbeat_seconds: int = Field(default=20, ge=1, description="A running job proves its "
                                   "worker alive this often (a third of it, in fact); past it "
                                   "without a sign the job is taken up again.")
    sweep_seconds: int = Field(default=10, ge=1, description="How often workers look for jobs "
                               "whose worker died.")
    lost_job_seconds: int = Field(default=60, ge=1, description="An unfinished job the queue "
                                  "no longer holds (Redis came back empty, or its attempts "
                                  "ended while the database was away) is queued again "
                                  "by a worker's sweep once it is this old.")
    shutdown_grace_seconds: int = Field(default=30, ge=0, description="A worker told to stop "
                                        "(SIGTERM) finishes its jobs for this long, then hands "
                                        "the rest back to the queue.")
    metrics_port: int = Field(default=0, ge=0, le=65535, description="`researchbot worker` "
                              "serves Prometheus metrics (GET /metrics, queue depth included) "
                              "on this port; a port already taken stops the worker with a "
                              "message naming this setting. 0: no metrics server.")
    metrics_host: str = Field(default="127.0.0.1", description="Address the worker's metrics "
                              "server listens on: this machine only by default; 0.0.0.0 for "
                              "every address (a Prometheus on another host).")


class EmbeddingSettings(_Section):
    model: str = Field(
        default="builtin",
        description="'builtin' (all-MiniLM-L6-v2 int8 ONNX, offline, no PyTorch) or any litellm "
        "embedding model string, e.g. 'openai/text-embedding-3-small'.",
    )
    api_base: OptionalHttpUrl = Field(default=None, description="Base URL for a litellm model.")
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
    chroma_url: OptionalHttpUrl = Field(
        default=None,
        description="URL of a Chroma server (http://host:8000); default an embedded "
        "PersistentClient in the data dir.",
    )
    chunk_tokens: int = Field(default=400, ge=50, le=2000, description="Target tokens a chunk.")
    overlap_tokens: int = Field(default=60, ge=0, description="Tokens repeated between chunks.")
    max_file_mb: float = Field(default=20.0, gt=0, description="Larger files (and web pages) "
                               "are skipped.")
    candidates: int = Field(default=40, ge=1, description="Candidates each retriever returns "
                            "before fusion.")
    refresh_hours: float = Field(
        default=24.0, ge=0, description="Web pages and sites indexed from a URL are read "
        "again this often by serve, the chat bots or a worker, each site by one process however "
        "many run (unchanged pages skipped, "
        "changed ones replaced, vanished ones removed); 0: only by researchbot refresh.")
    max_loaded_tenants: int = Field(
        default=64, ge=1, description="Tenants whose search index a process keeps in memory; "
        "the least recently searched is dropped (and rebuilt when it is searched again)."
    )
    tenant_idle_seconds: float = Field(
        default=1800.0, gt=0, description="A tenant's search index not searched for this long "
        "is dropped from memory (checked at the next search)."
    )

    @model_validator(mode="after")
    def _overlap_below_chunk(self) -> KnowledgeBaseSettings:
        if self.overlap_tokens >= self.chunk_tokens:
            raise ValueError("overlap_tokens must be smaller than chunk_tokens")
        return self


class CacheSettings(_Section):
    enabled: bool = Field(default=True, description="Serve and store answers in the cache.")
    ttl_hours: float = Field(default=168.0, ge=0, description="Lifetime of a cached answer.")
    current_event_ttl_hours: float = Field(
        default=1.0, ge=0, description="Lifetime for current-event questions (0: never cached)."
    )
    outage_ttl_minutes: float = Field(
        default=10.0, ge=0, description="Lifetime of an answer researched while a source was "
        "failing (0: never cached); it says so instead of repeating the outage.")


class PipelineSettings(_Section):
    source_timeout_s: float = Field(default=10.0, gt=0, description="Time one source may take "
                                    "to answer one search, its retries included (set as "
                                    "sources.timeout_s).")
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
    local_only: bool = Field(
        default=False, description="Search the local knowledge base only: no web request at "
        "all, for every tenant.")
    local_only_tenants: StrList = Field(
        default_factory=list, description="Tenants (workspaces, servers) whose questions never "
        "leave the local knowledge base.")
    allow_domains: StrList = Field(
        default_factory=list, description="Web domains ranked as most trustworthy "
        "(e.g. your company's docs site).")
    block_domains: StrList = Field(
        default_factory=list, description="Web domains never used as sources.")

    def remote_allowed(self, tenant: str) -> bool:
        return not self.local_only and tenant not in self.local_only_tenants


class TierBudget(_Section):
    """How far one depth tier may go; whichever limit is reached first ends the loop."""

    iterations: int = Field(ge=1, le=50, description="Search-and-reflect rounds.")
    queries: int = Field(ge=1, le=100, description="Search queries in all rounds together.")
    sources: int = Field(ge=1, le=50, description="Passages the answer is written from.")
    seconds: float = Field(gt=0, description="Wall time of the research loop.")
    tokens: int = Field(ge=1000, description="LLM tokens (prompt + completion) for the job.")


# The depth tiers, one table. The designs cap a research run at 60-120 s in every tier: deeper
# tiers search more in that time, they do not wait longer. Without a model a tier runs
# `plain_queries` query variations, then up to `plain_hops` searches for what the first
# passages name (the second hop), and keeps `plain_sources` x pipeline.max_sources passages
# (advanced.pipeline.max_sources); with a model the other columns are its budget (each
# overridable: advanced.llm.quick.seconds, ...).
TIERS: dict[str, dict[str, Any]] = {
    "quick": {"plain_queries": 2, "plain_hops": 2, "plain_sources": 0.625,
              "iterations": 2, "queries": 3, "sources": 5, "seconds": 60, "tokens": 30_000},
    "standard": {"plain_queries": 4, "plain_hops": 3, "plain_sources": 1.0,
                 "iterations": 5, "queries": 10, "sources": 15, "seconds": 120,
                 "tokens": 120_000},
    "deep": {"plain_queries": 6, "plain_hops": 4, "plain_sources": 2.0,
             "iterations": 10, "queries": 15, "sources": 20, "seconds": 120,
             "tokens": 300_000},
}


def _budget(tier: str) -> dict[str, Any]:
    """A tier's columns that are a model's budget."""
    return {key: value for key, value in TIERS[tier].items() if not key.startswith("plain_")}


def tier_defaults(data: Any) -> Any:
    """A tier given in part (advanced.llm.quick.seconds = 30) keeps its other limits."""
    if isinstance(data, dict):
        for name in TIERS:
            given = data.get(name)
            if isinstance(given, dict):
                data = {**data, name: {**_budget(name), **given}}
    return data


class LLMSettings(_Section):
    fast_model: str | None = Field(
        default=None, description="litellm model for intent, planning, evidence and reflection, "
        "e.g. 'openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku-latest', 'ollama/llama3.1'. "
        "Unset (and no strong_model): extractive answers, no LLM.")
    strong_model: str | None = Field(
        default=None, description="litellm model for synthesis and claim verification "
        "(default: fast_model).")
    fast_fallbacks: StrList = Field(
        default_factory=list, description="Models tried in order when fast_model keeps failing.")
    strong_fallbacks: StrList = Field(
        default_factory=list, description="Models tried in order when strong_model keeps "
        "failing.")
    api_base: OptionalHttpUrl = Field(
        default=None, description="Base URL for the models (an OpenAI-compatible server, "
        "Ollama, a proxy); default the provider's.")
    api_key: SecretStr | None = Field(default=None, description="API key for the models "
                                      "(default: the provider's usual environment variable).")
    timeout_s: float = Field(default=60.0, gt=0, description="Limit of one LLM call.")
    attempts: int = Field(default=3, ge=1, le=5, description="Tries of a call on 429, 5xx "
                          "and timeouts (exponential backoff with jitter, honouring "
                          "Retry-After) before the next fallback model.")
    backoff_s: float = Field(default=1.0, ge=0, description="First retry delay; doubles.")
    temperature: float = Field(default=0.1, ge=0, le=2, description="Sampling temperature.")
    concurrency: int = Field(default=4, ge=1, le=64, description="LLM calls in flight per job.")
    check_at_start: bool = Field(
        default=True, description="`researchbot slack` and `discord` call each configured model "
        "once (one token) at start-up and refuse to start when a key or model is refused.")
    evidence_batch: int = Field(default=4, ge=1, le=20, description="Passages an evidence "
                                "call scores together.")
    compact_facts_tokens: int = Field(
        default=6000, ge=500, description="When the gathered facts grow past this many tokens, "
        "the older ones are summarised (their sources kept by reference).")
    quick: TierBudget = Field(default_factory=lambda: TierBudget(**_budget("quick")),
                              description="Budget of the quick tier.")
    standard: TierBudget = Field(default_factory=lambda: TierBudget(**_budget("standard")),
                                 description="Budget of the standard tier.")
    deep: TierBudget = Field(default_factory=lambda: TierBudget(**_budget("deep")),
                             description="Budget of the deep tier.")

    @model_validator(mode="before")
    @classmethod
    def _tier_defaults(cls, data: Any) -> Any:
        return tier_defaults(data)

    @property
    def enabled(self) -> bool:
        return bool(self.fast_model or self.strong_model)


class SourcesSettings(_Section):
    """The web and academic sources and how politely they are used."""

    wikipedia: bool = Field(default=True, description="Search Wikipedia (no key).")
    arxiv: bool = Field(default=True, description="Search arXiv (no key).")
    pubmed: bool = Field(default=True, description="Search PubMed (no key).")
    tavily_api_key: SecretStr | None = Field(
        default=None, description="Tavily API key: web search through Tavily when set.")
    tavily_search_depth: Literal["basic", "advanced"] = Field(
        default="basic", description="Tavily: basic or advanced.")
    tavily_include_domains: StrList = Field(default_factory=list,
                                            description="Tavily: only these domains.")
    tavily_exclude_domains: StrList = Field(default_factory=list,
                                            description="Tavily: never these domains.")
    exa_api_key: SecretStr | None = Field(
        default=None, description="Exa API key: meaning-based web search through Exa when "
        "set, for explanation and conceptual questions, news and research papers.")
    searxng_url: OptionalHttpUrl = Field(
        default=None, description="A SearXNG instance (https://search.example.org) with the "
        "JSON format enabled: web search through it when set.")
    pubmed_api_key: SecretStr | None = Field(
        default=None, description="NCBI API key: 10 instead of 3 PubMed requests a second.")
    wikipedia_api: HttpUrl = Field(default="https://{language}.wikipedia.org/w/api.php",
                                   description="MediaWiki API URL ({language} is filled in).")
    arxiv_api: HttpUrl = Field(default="https://export.arxiv.org/api/query",
                               description="arXiv API URL.")
    pubmed_api: HttpUrl = Field(default="https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
                                description="E-utilities base URL.")
    tavily_api: HttpUrl = Field(default="https://api.tavily.com", description="Tavily API URL.")
    exa_api: HttpUrl = Field(default="https://api.exa.ai", description="Exa API URL.")
    timeout_s: float = Field(default=10.0, gt=0, description="Time one source may take to "
                             "answer one search, its retries included (each call is fitted "
                             "inside it); a source past it is reported as failed, and the "
                             "answer is written from the others.")
    attempts: int = Field(default=3, ge=1, le=5, description="Tries of a call on 429/5xx and "
                          "timeouts (backoff, Retry-After honoured).")
    concurrency: int = Field(default=4, ge=1, description="Calls in flight per source.")
    rate_per_second: float = Field(default=3.0, gt=0, description="Calls a second per source "
                                   "(NCBI allows 3 without a key).")
    breaker_failures: int = Field(default=5, ge=1, description="Failed calls in a row that "
                                  "pause a source.")
    breaker_reset_s: float = Field(default=60.0, gt=0, description="How long a paused source "
                                   "rests before one trial call (in every process: the "
                                   "pause is kept in the data dir, or Redis).")
    cache_ttl_hours: float = Field(default=24.0, ge=0, description="How long a source's "
                                   "answer to a query is reused (0: never).")
    fetch_pages: int = Field(default=5, ge=0, le=20, description="Web hits whose pages are "
                             "read (the rest keep their snippet).")
    trusted_pages: StrList = Field(
        default_factory=list, description="Sites on your own network whose pages may be read "
        "behind search hits (http://wiki.internal:8080, say: a SearXNG that indexes an "
        "intranet) or indexed (researchbot index URL). Every other private or loopback "
        "address stays refused.")
    fetch_concurrency: int = Field(default=8, ge=1, description="Pages fetched at once.")
    fetch_per_host: int = Field(default=2, ge=1, description="Pages fetched at once from one "
                                "host.")
    max_page_mb: float = Field(default=5.0, gt=0, description="Larger pages are skipped.")
    max_response_mb: float = Field(
        default=4.0, gt=0, description="Largest answer read from a search API (decompressed); "
        "a larger one is abandoned as it streams and reported as that source's failure.")
    user_agent: str = Field(default="researchbot/0.1 (research assistant; reads robots.txt)",
                            description="User-Agent of every request (robots.txt is read for "
                            "the token 'researchbot').")
