"""The settings tree: config.toml, overridden by RESEARCHBOT_<SECTION>__<KEY> variables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from core.config import (
    CacheSettings,
    EmbeddingSettings,
    KnowledgeBaseSettings,
    LLMSettings,
    PipelineSettings,
    SourcesSettings,
    StoreSettings,
)
from core.errors import ConfigurationError
from core.models import Depth


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
    redis_url: str | None = Field(
        default=None, description="Redis URL (redis://host:6379/0): event dedupe and question "
        "limits shared by every bot process. Default: kept in each process.")
    event_ttl_seconds: float = Field(
        default=3600.0, gt=0, description="How long a delivered event id is remembered, so "
        "that a platform's re-delivery is answered once.")


class SlackSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bot_token: SecretStr | None = Field(
        default=None, description="xoxb- bot token: one workspace (leave unset for OAuth).")
    signing_secret: SecretStr | None = Field(
        default=None, description="Verifies that HTTP requests come from Slack."
    )
    app_token: SecretStr | None = Field(
        default=None, description="xapp- app-level token: Socket Mode instead of HTTP."
    )
    host: str = Field(default="0.0.0.0", description="HTTP mode: address to listen on.")
    port: int = Field(default=3000, ge=0, le=65535, description="HTTP mode: port.")
    path: str = Field(default="/slack/events", description="HTTP mode: request URL path.")
    api_base_url: str = Field(
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
    scopes: list[str] = Field(
        default_factory=lambda: [
            "app_mentions:read", "channels:history", "groups:history", "im:history",
            "mpim:history", "chat:write", "reactions:read", "reactions:write", "commands"],
        description="OAuth: bot scopes requested at install.")


class DiscordSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: SecretStr | None = Field(default=None, description="Bot token (Developer Portal > "
                                    "Bot > Reset Token).")
    dev_guild_id: int | None = Field(
        default=None, description="Register /research in this server only (appears at once; "
        "for development). Default: globally (can take up to an hour to appear).")
    sync_commands: bool = Field(
        default=True, description="Register /research with Discord at start-up.")
    shards: int | Literal["auto"] | None = Field(
        default=None, description="Gateway shards: unset for one connection, 'auto' for "
        "Discord's recommendation, or a number (an AutoShardedClient either way).")
    api_base_url: str = Field(default="https://discord.com/api/v10",
                              description="Discord REST base URL (a REST proxy).")
    gateway_url: str | None = Field(default=None,
                                    description="Gateway URL (a gateway proxy).")

    @field_validator("shards")
    @classmethod
    def _positive(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("shards must be at least 1, 'auto', or unset")
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
    tenant: str = Field(default="local", min_length=1, description="Tenant of CLI requests.")
    store: StoreSettings = Field(default_factory=StoreSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    knowledge_base: KnowledgeBaseSettings = Field(default_factory=KnowledgeBaseSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sources: SourcesSettings = Field(default_factory=SourcesSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)

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

    @property
    def store_url(self) -> str:
        from core.db import sqlite_url

        return self.store.url or sqlite_url(str(self.data_dir / "researchbot.sqlite3"))


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
    path = config_path(explicit)

    class _FromFile(Settings):
        model_config = SettingsConfigDict(toml_file=path)

    try:
        settings: Settings = _FromFile()
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
            for e in error.errors()
        )
        raise ConfigurationError(f"invalid settings ({path or 'defaults'}): {problems}") from None
    except (OSError, ValueError) as error:  # unreadable or malformed TOML
        raise ConfigurationError(f"cannot read {path}: {error}") from None
    return Settings.model_validate(settings.model_dump())
