"""The settings tree: config.toml, overridden by RESEARCHBOT_<SECTION>__<KEY> variables.

A person sees the settings they decide, in their sections. The parameters core needs that
nobody decides per deployment sit apart: `advanced.<section>.<key>` (resilience, capacity and
the tier budgets) and `endpoints.<key>` (API base URLs, for proxies and test fakes); after
validation their values are placed into the section slices core receives, so core reads
`sources.breaker_failures` wherever a person set it. Ranking constants and calibrated
thresholds are code, not settings.

A mistyped name is refused, not ignored: an unknown RESEARCHBOT_* variable or config.toml key
stops start-up with the nearest valid name. A name moved or removed in this release still
loads, with one warning line naming its new place (`MOVED`, `REMOVED`)."""

from __future__ import annotations

import copy
import difflib
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from platformdirs import user_data_dir
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from core.config import (
    CacheSettings,
    EmbeddingSettings,
    HttpUrl,
    KnowledgeBaseSettings,
    LLMSettings,
    OptionalHttpUrl,
    PipelineSettings,
    QueueSettings,
    RedisUrl,
    SourcesSettings,
    StoreSettings,
    StrList,
    tier_defaults,
)
from core.errors import ConfigurationError
from core.models import Depth
from core.redact import redact, safe_url

log = logging.getLogger(__name__)

ENV_PREFIX = "RESEARCHBOT_"
# RESEARCHBOT_* variables that are not settings: read by the CLI and by the tests.
NOT_SETTINGS = frozenset({"RESEARCHBOT_CONFIG", "RESEARCHBOT_DEBUG",
                          "RESEARCHBOT_REQUIRE_SERVICES"})
NOT_SETTINGS_PREFIXES = ("RESEARCHBOT_TEST_",)


class ChatSettings(BaseModel):
    """What every chat front end shares: limits, redelivery dedupe, the default depth."""

    model_config = ConfigDict(extra="forbid")

    depth: Depth = Field(default=Depth.AUTO, description="Research depth of chat questions: "
                         "auto (quick or standard, from the question), quick, standard or deep.")
    user_questions_per_minute: int = Field(
        default=5, ge=1, description="Questions one person may ask per minute.")
    tenant_questions_per_minute: int = Field(
        default=60, ge=1, description="Questions one workspace (Slack) or server (Discord) may "
        "ask per minute.")
    max_queue_seconds: float = Field(
        default=20.0, ge=0, description="A question over a limit waits in a queue up to this "
        "long (a question to the HTTP API too); beyond it, it is refused with a friendly "
        "message saying when to ask again.")
    event_ttl_seconds: float = Field(
        default=3600.0, gt=0, description="How long a delivered event id is remembered, so "
        "that a platform's re-delivery is answered once.")
    delivery_retry_minutes: float = Field(
        default=10.0, ge=0, description="How long an answer's delivery is retried (with "
        "backoff) while Slack or Discord answers 429, 5xx or not at all; then the delivery "
        "is recorded as failed on the job (researchbot show).")
    delivery_first_wait_seconds: float = Field(
        default=2.0, gt=0, description="The first wait before a delivery is retried; each "
        "next wait doubles, up to a minute (with jitter).")
    document_adders: StrList = Field(
        default=["everyone"], description="Who may add documents from chat (a file shared "
        "with the bot in a thread it answers in, in a direct message or with a mention, or "
        "'@researchbot add <link>'): 'everyone' in the workspace or server, or the listed "
        "Slack user ids, Discord user ids and Discord role ids; an empty list: nobody. The "
        "files go into that workspace's (server's) knowledge base only.")



class WebSettings(BaseModel):
    """`researchbot serve`: the HTTP API, the answer pages and /metrics."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", description="Address the API server listens on. "
                      "On any address but this machine's own, API keys are required (researchbot "
                      "keys create) unless web.allow_anonymous is set.")
    port: int = Field(default=8080, ge=0, le=65535, description="Port of the API server.")
    public_url: OptionalHttpUrl = Field(
        default=None, description="Address people reach the API server at "
        "(https://research.example.com): chat answers then link to their answer page (View "
        "full analysis). Default: no link.")
    allow_anonymous: bool = Field(
        default=False, description="Serve requests without an API key (as the tenant setting's "
        "tenant) on any address. Without it, requests without a key are served only while no "
        "key exists and the server listens on this machine's own address.")
    questions_per_minute: int = Field(
        default=30, ge=1, description="Questions one API key may ask per minute through the "
        "API. A question over a limit waits up to advanced.chat.max_queue_seconds, beyond that "
        "429 with Retry-After (shared in Redis when redis.url is set).")
    tenant_questions_per_minute: int = Field(
        default=120, ge=1, description="Questions one tenant may ask per minute through the API.")
    metrics: bool = Field(default=True, description="Serve Prometheus metrics on /metrics.")
    mcp: bool = Field(default=True, description="Serve the MCP server (streamable HTTP) on "
                      "/mcp, behind the same API keys as /v1.")


class LogSettings(BaseModel):
    """How every process logs."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["text", "json"] = Field(
        default="text", description="text (one readable line) or json (one JSON object per "
        "line for a log collector: time, level, logger, message, and job_id, tenant and stage "
        "where known).")
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="The lowest level logged.")
    include_questions: bool = Field(
        default=False, description="Put question text in log lines (the question field of a job's "
        "first line). Off: logs name jobs, "
        "tenants and stages, never what was asked.")


class SlackSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bot_token: SecretStr | None = Field(
        default=None, description="xoxb- bot token: one workspace (leave unset for OAuth).")
    signing_secret: SecretStr | None = Field(
        default=None, description="Verifies that HTTP requests come from Slack (required in "
        "HTTP mode)."
    )
    app_token: SecretStr | None = Field(
        default=None, description="xapp- app-level token: Socket Mode instead of HTTP."
    )
    host: str = Field(default="127.0.0.1", description="HTTP mode: address to listen on: this "
                      "machine only by default (behind a reverse proxy); 0.0.0.0 for every "
                      "address.")
    port: int = Field(default=3000, ge=0, le=65535, description="HTTP mode: port.")
    path: str = Field(default="/slack/events", description="HTTP mode: request URL path.")
    api_base_url: HttpUrl = Field(
        default="https://slack.com/api/", description="Slack Web API base URL."
    )
    client_id: str | None = Field(
        default=None, description="OAuth client id: install in many workspaces; installations "
        "are kept in the job store's database.")
    client_secret: SecretStr | None = Field(default=None, description="OAuth client secret.")
    install_path: str = Field(default="/slack/install", description="OAuth: install page path.")
    redirect_path: str = Field(
        default="/slack/oauth_redirect", description="OAuth: redirect URL path (add "
        "https://<your host><path> as a redirect URL in the app settings).")
    scopes: StrList = Field(
        default_factory=lambda: [
            "app_mentions:read", "channels:history", "groups:history", "im:history",
            "mpim:history", "chat:write", "reactions:read", "reactions:write", "commands",
            "files:read"],
        description="OAuth: bot scopes requested at install.")


class DiscordSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: SecretStr | None = Field(default=None, description="Bot token (Developer Portal > "
                                    "Bot > Reset Token); required for researchbot discord.")
    dev_guild_id: int | None = Field(
        default=None, gt=0, description="Register /research in this server only (appears at once; "
        "for development). Default: globally (can take up to an hour to appear).")
    sync_commands: bool = Field(
        default=True, description="Register /research with Discord at start-up.")
    shards: int | Literal["auto"] | None = Field(
        default=None, description="Gateway shards: unset for one connection, 'auto' for "
        "Discord's recommendation, or a number (an AutoShardedClient either way).")
    api_base_url: HttpUrl = Field(default="https://discord.com/api/v10",
                                  description="Discord REST base URL.")
    gateway_url: str | None = Field(default=None, description="Discord gateway URL (wss://); "
                                    "default the one Discord names.")

    @field_validator("shards")
    @classmethod
    def _positive(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("shards must be at least 1, 'auto', or unset")
        return value

    @field_validator("gateway_url")
    @classmethod
    def _websocket_url(cls, value: str | None) -> str | None:
        if value is not None and (urlsplit(value).scheme not in ("ws", "wss")
                                  or not urlsplit(value).hostname):
            raise ValueError(f"{safe_url(value)!r} is not a websocket URL: write wss://host")
        return value


class RedisSettings(BaseModel):
    """One Redis for the deployment."""

    model_config = ConfigDict(extra="forbid")

    url: RedisUrl = Field(
        default=None, description="Redis URL (redis://host:6379/0) shared by every process: the "
        "job queue (`researchbot worker` answers; queue.enabled), the chat front ends' and the "
        "API's question limits and event dedupe, the sources' rate limits and circuit "
        "breakers. Default: no queue, limits kept in each process, breakers shared through "
        "the data dir.")


# The parameters no deployment decides, where a person may still set them: `advanced.<section>`
# holds these keys of each section (resilience, capacity, chunking, the tier budgets).
ADVANCED: dict[str, tuple[str, ...]] = {
    "store": ("stale_job_minutes", "min_free_mb"),
    "queue": ("concurrency", "deep_concurrency", "max_attempts", "heartbeat_seconds",
              "sweep_seconds", "lost_job_seconds", "shutdown_grace_seconds"),
    "embedding": ("batch_size", "threads"),
    "knowledge_base": ("chunk_tokens", "overlap_tokens", "max_file_mb", "candidates",
                       "refresh_hours", "max_loaded_tenants", "tenant_idle_seconds"),
    "cache": ("current_event_ttl_hours", "outage_ttl_minutes"),
    "pipeline": ("max_sources", "max_per_document", "min_relevance", "answer_sentences"),
    "llm": ("fast_fallbacks", "strong_fallbacks", "timeout_s", "attempts", "backoff_s",
            "temperature", "concurrency", "check_at_start", "evidence_batch",
            "compact_facts_tokens", "quick", "standard", "deep"),
    "sources": ("tavily_search_depth", "tavily_include_domains", "tavily_exclude_domains",
                "attempts", "concurrency", "rate_per_second", "breaker_failures",
                "breaker_reset_s", "cache_ttl_hours", "fetch_pages", "fetch_concurrency",
                "fetch_per_host", "max_page_mb", "max_response_mb", "user_agent"),
    "chat": ("user_questions_per_minute", "tenant_questions_per_minute", "max_queue_seconds",
             "event_ttl_seconds", "delivery_retry_minutes", "delivery_first_wait_seconds"),
    "web": ("questions_per_minute", "tenant_questions_per_minute"),
    "slack": ("path", "install_path", "redirect_path", "scopes"),
    "discord": ("sync_commands", "shards"),
}
# `endpoints.<key>`: the API base URLs, for a proxy or a test's local fake; (section, key) is
# where core reads it.
ENDPOINTS: dict[str, tuple[str, str]] = {
    "wikipedia_api": ("sources", "wikipedia_api"),
    "arxiv_api": ("sources", "arxiv_api"),
    "pubmed_api": ("sources", "pubmed_api"),
    "tavily_api": ("sources", "tavily_api"),
    "exa_api": ("sources", "exa_api"),
    "slack_api": ("slack", "api_base_url"),
    "discord_api": ("discord", "api_base_url"),
    "discord_gateway": ("discord", "gateway_url"),
}
# Names of the previous release that still load, each with a warning naming its new place.
MOVED: dict[str, str] = {
    "queue.url": "redis.url",
    "chat.redis_url": "redis.url",
    "sources.redis_url": "redis.url",
    # two limits of 10 s each, the stage's around the policy's: the policy now fits its calls
    # inside the stage's, so one setting is both
    "pipeline.source_timeout_s": "sources.timeout_s",
    **{f"{section}.{key}": f"advanced.{section}.{key}"
       for section, keys in ADVANCED.items() for key in keys},
    **{f"{section}.{key}": f"endpoints.{name}" for name, (section, key) in ENDPOINTS.items()},
}
# Settings of the previous release that are code now: set, they are ignored with a warning.
REMOVED: dict[str, str] = {
    "knowledge_base.rrf_k": "a ranking constant (core.retrieval.kb.search.RRF_K)",
    "knowledge_base.mmr_lambda": "a ranking constant (core.retrieval.kb.search.MMR_LAMBDA)",
    "llm.evidence_llm_weight": "a ranking constant "
                               "(core.research.model_steps.EVIDENCE_LLM_WEIGHT)",
    "cache.similarity_threshold": "calibrated by the cache safety benchmark, which a change "
                                  "must re-run (core.answer.cache.SIMILARITY_THRESHOLD)",
}
_REDIS_ONLY_FOR_LIMITS = ("chat.redis_url", "sources.redis_url")

_SECTIONS: dict[str, type[BaseModel]] = {
    "store": StoreSettings, "queue": QueueSettings, "embedding": EmbeddingSettings,
    "knowledge_base": KnowledgeBaseSettings, "cache": CacheSettings,
    "pipeline": PipelineSettings, "llm": LLMSettings, "sources": SourcesSettings,
    "chat": ChatSettings, "web": WebSettings, "slack": SlackSettings,
    "discord": DiscordSettings}


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _TierBudgets(_Part):
    @model_validator(mode="before")
    @classmethod
    def _tier_defaults(cls, data: Any) -> Any:
        return tier_defaults(data)


def _fields(picked: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """Fields under new names, each the section field's own (type, default, limits, text)."""
    return {name: (_SECTIONS[section].model_fields[key].annotation,
                   copy.copy(_SECTIONS[section].model_fields[key]))
            for name, (section, key) in picked.items()}


_ADVANCED_SECTIONS: dict[str, type[BaseModel]] = {
    section: create_model(
        f"Advanced{_SECTIONS[section].__name__}",
        __base__=_TierBudgets if section == "llm" else _Part,
        **_fields({key: (section, key) for key in keys}))
    for section, keys in ADVANCED.items()}

if TYPE_CHECKING:  # built below from the sections' own fields, one definition each
    class AdvancedSettings(_Part):
        def __getattr__(self, name: str) -> Any: ...

    class EndpointSettings(_Part):
        def __getattr__(self, name: str) -> Any: ...
else:
    AdvancedSettings = create_model(
        "AdvancedSettings", __base__=_Part,
        __doc__="Resilience, capacity, chunking and the tier budgets: parameters set for "
        "every deployment by the code's defaults, which a person changes only for a reason "
        "(a rate limit the provider lowered, a slower model, a bigger worker).",
        **{section: (model, Field(default_factory=model))
           for section, model in _ADVANCED_SECTIONS.items()})

    EndpointSettings = create_model(
        "EndpointSettings", __base__=_Part,
        __doc__="API base URLs: a proxy in front of an API, or a test's local fake. Nobody "
        "else sets them.",
        **_fields(ENDPOINTS))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RESEARCHBOT_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    data_dir: Path = Field(
        default_factory=lambda: Path(user_data_dir("researchbot", appauthor=False)),
        description="Folder of every embedded store (SQLite, Chroma, caches).",
    )
    tenant: str = Field(default="local", min_length=1, description="Tenant of CLI requests "
                        "(each tenant has its own knowledge base and answer cache).")
    store: StoreSettings = Field(default_factory=StoreSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    queue: QueueSettings = Field(default_factory=QueueSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    knowledge_base: KnowledgeBaseSettings = Field(default_factory=KnowledgeBaseSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sources: SourcesSettings = Field(default_factory=SourcesSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    log: LogSettings = Field(default_factory=LogSettings)
    advanced: AdvancedSettings = Field(default_factory=lambda: AdvancedSettings())
    endpoints: EndpointSettings = Field(default_factory=lambda: EndpointSettings())

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _RelocatedEnvironment(env_settings),
                _RelocatedToml(settings_cls))

    @model_validator(mode="after")
    def _placed(self) -> Settings:
        """advanced.* and endpoints.* into the sections core reads; the one source time
        limit into the search stage; then advanced and endpoints showing what is in force."""
        for section in ADVANCED:
            given = getattr(self.advanced, section)
            self._update(section, {key: getattr(given, key) for key in given.model_fields_set})
        for name, (section, key) in ENDPOINTS.items():
            if name in self.endpoints.model_fields_set:
                self._update(section, {key: getattr(self.endpoints, name)})
        self._update("pipeline", {"source_timeout_s": self.sources.timeout_s})
        self.advanced = AdvancedSettings.model_construct(None, **{
            section: _ADVANCED_SECTIONS[section].model_construct(
                None, **{key: getattr(getattr(self, section), key) for key in keys})
            for section, keys in ADVANCED.items()})
        self.endpoints = EndpointSettings.model_construct(None, **{
            name: getattr(getattr(self, section), key)
            for name, (section, key) in ENDPOINTS.items()})
        return self

    def _update(self, section: str, values: dict[str, Any]) -> None:
        if not values:
            return
        current = getattr(self, section)
        try:
            setattr(self, section, type(current).model_validate({**dict(current), **values}))
        except ValidationError as error:
            raise ValueError(f"advanced.{section}: "
                             + "; ".join(e["msg"] for e in error.errors())) from None

    @property
    def queue_url(self) -> SecretStr | None:
        """Where jobs are queued for workers: redis.url while queue.enabled (None: jobs run
        in the process that took them)."""
        return self.redis.url if self.queue.enabled else None

    @field_validator("data_dir")
    @classmethod
    def _a_writable_folder(cls, value: Path) -> Path:
        path = value.expanduser()
        existing = next(p for p in (path, *path.parents) if p.exists())
        if not existing.is_dir():
            raise ValueError(f"{existing} is a file, not a folder: point data_dir at a folder")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ValueError(f"cannot write in {existing}: point data_dir at a folder you own")
        return path

    @property
    def store_url(self) -> str:
        from core.store.database import sqlite_url

        if self.store.url is not None:
            return self.store.url.get_secret_value()
        return sqlite_url(str(self.data_dir / "researchbot.sqlite3"))


_MISSING = object()


class _Renames:
    """What the sources of one load found under names of the previous release: the warning
    lines, and the old names used (and queue.enabled, when given)."""

    notes: list[str] = []  # noqa: RUF012 - emptied by load_settings before each load
    seen: set[str] = set()  # noqa: RUF012


def _relocated(data: dict[str, Any], named: Callable[[str], str]) -> dict[str, Any]:
    """One source's values with each moved name at its new place (the new name wins when a
    source gives both) and each removed setting dropped, every one noted for the warning.
    One source at a time, so an environment variable still overrides config.toml whichever
    name either uses."""
    data = copy.deepcopy(data)
    moved_here: set[str] = set()
    for old, new in MOVED.items():
        value = _pop(data, old)
        if value is _MISSING:
            continue
        _Renames.seen.add(old)
        _Renames.notes.append(f"{named(old)} is deprecated: use {named(new)}")
        present = _get(data, new)
        if present is _MISSING:
            _put(data, new, value)
            moved_here.add(new)
        elif new in moved_here and present != value:
            raise ConfigurationError(
                f"{named(old)} names another server than the other Redis URLs: one "
                f"{named(new)} now serves the queue, the limits and the sources; set it alone")
    for old, why in REMOVED.items():
        if _pop(data, old) is not _MISSING:
            _Renames.notes.append(f"{named(old)} is no longer a setting (ignored): {why}")
    if _get(data, "queue.enabled") is not _MISSING:
        _Renames.seen.add("queue.enabled")
    return data


class _RelocatedEnvironment(PydanticBaseSettingsSource):
    """The RESEARCHBOT_* variables, names of the previous release moved (`_relocated`)."""

    def __init__(self, inner: PydanticBaseSettingsSource) -> None:
        super().__init__(inner.settings_cls)
        self._inner = inner

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads the whole source

    def __call__(self) -> dict[str, Any]:
        return _relocated(self._inner(), _variable)


class _RelocatedToml(TomlConfigSettingsSource):
    """config.toml, names of the previous release moved (`_relocated`)."""

    def __call__(self) -> dict[str, Any]:
        return _relocated(super().__call__(), str)


def _variable(key: str) -> str:
    """A dotted key as its environment variable (and the key itself, to find it in docs)."""
    return f"{ENV_PREFIX}{'__'.join(key.split('.')).upper()} ({key})"


def _pop(data: dict[str, Any], key: str) -> Any:
    *sections, name = key.split(".")
    for section in sections:
        data = data.get(section)  # type: ignore[assignment]
        if not isinstance(data, dict):
            return _MISSING
    return data.pop(name, _MISSING)


def _get(data: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return _MISSING
        data = data[part]
    return data


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    *sections, name = key.split(".")
    for section in sections:
        data = data.setdefault(section, {})
    data[name] = value


def config_path(explicit: Path | None = None) -> Path | None:
    """--config, else RESEARCHBOT_CONFIG, else ./config.toml when it exists."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigurationError(f"config file not found: {explicit}")
        return explicit
    named = os.environ.get("RESEARCHBOT_CONFIG")
    if named:
        if not Path(named).is_file():
            raise ConfigurationError(f"RESEARCHBOT_CONFIG: file not found: {named}")
        return Path(named)
    default = Path("config.toml")
    return default if default.is_file() else None


def load_settings(explicit: Path | None = None) -> Settings:
    """Read and validate the settings once; ConfigurationError names each bad key."""
    check_environment(os.environ)
    path = config_path(explicit)

    class _FromFile(Settings):
        model_config = SettingsConfigDict(toml_file=path)

    _Renames.notes, _Renames.seen = [], set()
    try:
        settings: Settings = _FromFile()
    except ValidationError as error:
        raise ConfigurationError("; ".join(_problem(e, path) for e in error.errors())) from None
    except SettingsError as error:  # a section set whole (RESEARCHBOT_LLM=...) is not JSON
        raise ConfigurationError(f"{error}: a section set whole must be a JSON object; or set "
                                 "one key, e.g. RESEARCHBOT_LLM__FAST_MODEL") from None
    except (OSError, ValueError) as error:  # unreadable or malformed TOML
        raise ConfigurationError(f"cannot read {path}: {error}") from None
    loaded = Settings.model_validate(settings.model_dump())
    for note in dict.fromkeys(_Renames.notes):
        log.warning("%s", note)
    return _redis_kept_for_limits(loaded, _Renames.seen)


def _redis_kept_for_limits(settings: Settings, seen: set[str]) -> Settings:
    """chat.redis_url or sources.redis_url without queue.url shared limits, not jobs: their
    redis.url keeps the jobs in process (queue.enabled = false) unless the queue is named."""
    if seen.isdisjoint(_REDIS_ONLY_FOR_LIMITS) or not seen.isdisjoint(
            ("queue.url", "queue.enabled")):
        return settings
    log.warning("redis.url from %s: jobs stay in process (queue.enabled = false), as "
                "before; set queue.enabled = true to queue them for workers",
                " and ".join(sorted(seen & set(_REDIS_ONLY_FOR_LIMITS))))
    settings.queue = settings.queue.model_copy(update={"enabled": False})
    return settings


def setting_variables(model: type[BaseModel] | None = None, prefix: str = ENV_PREFIX) -> set[str]:
    """Every environment variable that sets something: each key and each section, any depth
    (a key moved elsewhere only at its new place)."""
    names = set()
    for name, field in (model or Settings).model_fields.items():
        variable = prefix + name.upper()
        if variable in _OLD_VARIABLES:
            continue
        names.add(variable)
        for section in _sections_in(field.annotation):
            names |= setting_variables(section, variable + "__")
    return names


def check_environment(environ: Mapping[str, str]) -> None:
    """Refuse RESEARCHBOT_* variables that set nothing: a typo must not pass silently. A name
    of the previous release passes (load_settings warns)."""
    known = setting_variables()
    problems = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in known or upper in NOT_SETTINGS \
                or upper.startswith(NOT_SETTINGS_PREFIXES) or _old_variable(upper):
            continue
        guess = difflib.get_close_matches(upper, known, n=1, cutoff=0.6)
        problems.append(f"{name} (did you mean {guess[0]}?)" if guess else name)
    if problems:
        raise ConfigurationError(
            f"unknown environment variable{'s' if len(problems) > 1 else ''} "
            f"{', '.join(problems)}: not a setting; rename or unset it "
            "(RESEARCHBOT_<SECTION>__<KEY>, two underscores)")


_OLD_VARIABLES = frozenset(ENV_PREFIX + "__".join(key.split(".")).upper()
                           for key in (*MOVED, *REMOVED))


def _old_variable(variable: str) -> bool:
    """A variable of the previous release: a moved or removed key, or one inside it
    (a tier's limit, inside llm.quick)."""
    return any(variable == old or variable.startswith(old + "__") for old in _OLD_VARIABLES)


def _sections_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [section for arg in get_args(annotation) for section in _sections_in(arg)]


def _section_at(loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] = Settings
    for part in loc:
        field = model.model_fields.get(str(part))
        sections = _sections_in(field.annotation) if field else []
        if not sections:
            return None
        model = sections[0]
    return model


def _problem(error: ErrorDetails, path: Path | None) -> str:
    """One invalid setting: its dotted key, where it was set, what is wrong."""
    loc = error["loc"]
    key = ".".join(str(part) for part in loc) or "(settings)"
    where = _origin(loc, path)
    if error["type"] == "extra_forbidden":
        section = _section_at(loc[:-1])
        guess = difflib.get_close_matches(str(loc[-1]), list(section.model_fields), n=1) \
            if section else []
        hint = f"; did you mean {'.'.join([*map(str, loc[:-1]), guess[0]])}?" if guess else ""
        return f"{key}{where}: not a setting{hint}"
    message = error["msg"].removeprefix("Value error, ")
    value = error.get("input")
    if error["type"] != "value_error" and isinstance(value, str | int | float):
        message += f" (got {redact(str(value))[:60]!r})"
    return f"{key}{where}: {message}"


def _origin(loc: tuple[str | int, ...], path: Path | None) -> str:
    """Where the key was set: ' (from RESEARCHBOT_<SECTION>__<KEY>)' or ' (in config.toml)'."""
    present = {name.upper() for name in os.environ}
    for end in range(len(loc), 0, -1):
        key = ".".join(str(part) for part in loc[:end])
        for named in (key, *(old for old, new in MOVED.items() if new == key)):
            variable = ENV_PREFIX + "__".join(named.split(".")).upper()
            if variable in present:
                return f" (from {variable})"
    return f" (in {path})" if path else ""
