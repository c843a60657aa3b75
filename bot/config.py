"""The settings tree: config.toml, overridden by RESEARCHBOT_<SECTION>__<KEY> variables.

A mistyped name is refused, not ignored: an unknown RESEARCHBOT_* variable or config.toml key
stops start-up with the nearest valid name."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
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
)
from core.errors import ConfigurationError
from core.models import Depth
from core.redact import redact, safe_url

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
        "long; beyond it, it is refused with a friendly message saying when to ask again.")
    redis_url: RedisUrl = Field(
        default=None, description="Redis URL (redis://host:6379/0): event dedupe and question "
        "limits shared by every bot process. Default: kept in each process.")
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
        "API. A question over a limit waits up to chat.max_queue_seconds, beyond that 429 with "
        "Retry-After (shared in Redis when chat.redis_url is set).")
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
    host: str = Field(default="0.0.0.0", description="HTTP mode: address to listen on.")
    port: int = Field(default=3000, ge=0, le=65535, description="HTTP mode: port.")
    path: str = Field(default="/slack/events", description="HTTP mode: request URL path.")
    api_base_url: HttpUrl = Field(
        default="https://slack.com/api/", description="Slack Web API base URL (a proxy)."
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
                                  description="Discord REST base URL (a REST proxy).")
    gateway_url: str | None = Field(default=None,
                                    description="Gateway URL (a gateway proxy).")

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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))

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

    try:
        settings: Settings = _FromFile()
    except ValidationError as error:
        raise ConfigurationError("; ".join(_problem(e, path) for e in error.errors())) from None
    except SettingsError as error:  # a section set whole (RESEARCHBOT_LLM=...) is not JSON
        raise ConfigurationError(f"{error}: a section set whole must be a JSON object; or set "
                                 "one key, e.g. RESEARCHBOT_LLM__FAST_MODEL") from None
    except (OSError, ValueError) as error:  # unreadable or malformed TOML
        raise ConfigurationError(f"cannot read {path}: {error}") from None
    return Settings.model_validate(settings.model_dump())


def setting_variables(model: type[BaseModel] | None = None, prefix: str = ENV_PREFIX) -> set[str]:
    """Every environment variable that sets something: each key and each section, any depth."""
    names = set()
    for name, field in (model or Settings).model_fields.items():
        variable = prefix + name.upper()
        names.add(variable)
        for section in _sections_in(field.annotation):
            names |= setting_variables(section, variable + "__")
    return names


def check_environment(environ: Mapping[str, str]) -> None:
    """Refuse RESEARCHBOT_* variables that set nothing: a typo must not pass silently."""
    known = setting_variables()
    problems = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in known or upper in NOT_SETTINGS \
                or upper.startswith(NOT_SETTINGS_PREFIXES):
            continue
        guess = difflib.get_close_matches(upper, known, n=1, cutoff=0.6)
        problems.append(f"{name} (did you mean {guess[0]}?)" if guess else name)
    if problems:
        raise ConfigurationError(
            f"unknown environment variable{'s' if len(problems) > 1 else ''} "
            f"{', '.join(problems)}: not a setting; rename or unset it "
            "(RESEARCHBOT_<SECTION>__<KEY>, two underscores)")


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
        variable = ENV_PREFIX + "__".join(str(part) for part in loc[:end]).upper()
        if variable in present:
            return f" (from {variable})"
    return f" (in {path})" if path else ""
