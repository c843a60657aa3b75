"""The settings a person decides, apart from `advanced` and `endpoints`; one Redis; one source
time limit; the names of the previous release still loading, each with one warning naming its
new place; every listener on this machine's own address unless told otherwise.

This file names the previous release's names on purpose (test_config_errors' scan of the
repository's RESEARCHBOT_* names skips it)."""

from pathlib import Path

import httpx
import psutil
import pytest

from bot.config import ADVANCED, ENDPOINTS, MOVED, REMOVED, Settings, load_settings
from bot.reference import setting_rows
from core.errors import ConfigurationError
from tests.support.cluster import free_port

pytestmark = pytest.mark.integration


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.config"]


def _config(clean_env: Path, text: str) -> None:
    (clean_env.parent / "config.toml").write_text(text)


def test_old_names_in_config_toml_take_effect_and_name_their_new_place(
        clean_env: Path, caplog: pytest.LogCaptureFixture) -> None:
    _config(clean_env, "[queue]\nurl = 'redis://127.0.0.1:6379/3'\nheartbeat_seconds = 15\n"
                       "[sources]\nwikipedia_api = 'http://127.0.0.1:9/w/api.php'\n"
                       "breaker_failures = 2\n[pipeline]\nsource_timeout_s = 4\n"
                       "[llm.quick]\nseconds = 30\n")
    settings = load_settings()
    assert settings.redis.url is not None and settings.queue_url == settings.redis.url
    assert settings.redis.url.get_secret_value() == "redis://127.0.0.1:6379/3"
    assert settings.queue.heartbeat_seconds == 15
    assert settings.sources.wikipedia_api == "http://127.0.0.1:9/w/api.php"
    assert settings.sources.breaker_failures == 2
    assert settings.sources.timeout_s == settings.pipeline.source_timeout_s == 4
    assert settings.llm.quick.seconds == 30 and settings.llm.quick.tokens == 30_000  # in part
    assert sorted(_warnings(caplog)) == sorted([
        "queue.url is deprecated: use redis.url",
        "queue.heartbeat_seconds is deprecated: use advanced.queue.heartbeat_seconds",
        "sources.wikipedia_api is deprecated: use endpoints.wikipedia_api",
        "sources.breaker_failures is deprecated: use advanced.sources.breaker_failures",
        "pipeline.source_timeout_s is deprecated: use sources.timeout_s",
        "llm.quick is deprecated: use advanced.llm.quick"])


def test_old_variables_take_effect_and_name_their_new_variable(
        clean_env: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"RESEARCHBOT_QUEUE__URL": "redis://127.0.0.1:6379/4",
                        "RESEARCHBOT_SLACK__API_BASE_URL": "http://127.0.0.1:9/api/",
                        "RESEARCHBOT_DISCORD__GATEWAY_URL": "ws://127.0.0.1:9",
                        "RESEARCHBOT_LLM__DEEP__TOKENS": "5000",
                        "RESEARCHBOT_CHAT__MAX_QUEUE_SECONDS": "3"}.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.queue_url is not None
    assert settings.queue_url.get_secret_value() == "redis://127.0.0.1:6379/4"
    assert settings.slack.api_base_url == "http://127.0.0.1:9/api/"
    assert settings.discord.gateway_url == "ws://127.0.0.1:9"
    assert settings.llm.deep.tokens == 5000 and settings.llm.deep.seconds == 120
    assert settings.chat.max_queue_seconds == 3
    warned = _warnings(caplog)
    assert "RESEARCHBOT_QUEUE__URL (queue.url) is deprecated: use RESEARCHBOT_REDIS__URL " \
           "(redis.url)" in warned
    assert "RESEARCHBOT_SLACK__API_BASE_URL (slack.api_base_url) is deprecated: use " \
           "RESEARCHBOT_ENDPOINTS__SLACK_API (endpoints.slack_api)" in warned
    assert len(warned) == 5


def test_new_names_take_effect_without_a_warning(
        clean_env: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _config(clean_env, "[redis]\nurl = 'redis://127.0.0.1:6379/5'\n"
                       "[advanced.sources]\nattempts = 1\n[advanced.llm.standard]\nqueries = 4\n"
                       "[endpoints]\narxiv_api = 'http://127.0.0.1:9/arxiv'\n")
    monkeypatch.setenv("RESEARCHBOT_ENDPOINTS__DISCORD_API", "http://127.0.0.1:9/api/v10")
    monkeypatch.setenv("RESEARCHBOT_SOURCES__TIMEOUT_S", "6")
    settings = load_settings()
    assert settings.queue_url is not None and settings.sources.attempts == 1
    assert settings.llm.standard.queries == 4 and settings.llm.standard.sources == 15
    assert settings.sources.arxiv_api == "http://127.0.0.1:9/arxiv"
    assert settings.discord.api_base_url == "http://127.0.0.1:9/api/v10"
    assert settings.pipeline.source_timeout_s == 6  # the search stage's limit is the same one
    assert settings.advanced.sources.attempts == 1  # what is in force, wherever it was set
    assert settings.endpoints.arxiv_api == "http://127.0.0.1:9/arxiv"
    assert _warnings(caplog) == []


def test_a_variable_overrides_the_file_whichever_name_either_uses(
        clean_env: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _config(clean_env, "[redis]\nurl = 'redis://127.0.0.1:6379/1'\n"
                       "[sources]\nbreaker_failures = 2\n")
    monkeypatch.setenv("RESEARCHBOT_QUEUE__URL", "redis://127.0.0.1:6379/2")  # old over new
    monkeypatch.setenv("RESEARCHBOT_ADVANCED__SOURCES__BREAKER_FAILURES", "7")  # new over old
    settings = load_settings()
    assert settings.redis.url is not None
    assert settings.redis.url.get_secret_value() == "redis://127.0.0.1:6379/2"
    assert settings.sources.breaker_failures == 7


def test_in_one_place_the_new_name_wins_over_the_old(
        clean_env: Path, caplog: pytest.LogCaptureFixture) -> None:
    _config(clean_env, "[redis]\nurl = 'redis://127.0.0.1:6379/1'\n"
                       "[queue]\nurl = 'redis://127.0.0.1:6379/2'\n")
    settings = load_settings()
    assert settings.redis.url is not None
    assert settings.redis.url.get_secret_value() == "redis://127.0.0.1:6379/1"
    assert _warnings(caplog) == ["queue.url is deprecated: use redis.url"]


def test_old_redis_urls_naming_two_servers_stop_start_up(clean_env: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESEARCHBOT_QUEUE__URL", "redis://queue.lan:6379/0")
    monkeypatch.setenv("RESEARCHBOT_CHAT__REDIS_URL", "redis://limits.lan:6379/0")
    with pytest.raises(ConfigurationError, match=r"one RESEARCHBOT_REDIS__URL \(redis.url\)"):
        load_settings()


def test_a_redis_kept_for_limits_alone_keeps_the_jobs_in_process(
        clean_env: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """chat.redis_url without queue.url shared the limits of processes that answer their own
    questions: as redis.url it must not start queueing jobs for workers nobody runs."""
    monkeypatch.setenv("RESEARCHBOT_CHAT__REDIS_URL", "redis://127.0.0.1:6379/6")
    settings = load_settings()
    assert settings.redis.url is not None and settings.queue_url is None
    assert any("queue.enabled = false" in line for line in _warnings(caplog))
    monkeypatch.setenv("RESEARCHBOT_QUEUE__ENABLED", "true")  # unless the queue is asked for
    assert load_settings().queue_url is not None


def test_a_removed_setting_is_ignored_with_a_warning_not_a_crash(
        clean_env: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _config(clean_env, "[cache]\nsimilarity_threshold = 0.95\n[knowledge_base]\nrrf_k = 30\n")
    monkeypatch.setenv("RESEARCHBOT_LLM__EVIDENCE_LLM_WEIGHT", "0.2")
    load_settings()
    warned = _warnings(caplog)
    assert any(line.startswith("cache.similarity_threshold is no longer a setting (ignored)")
               and "cache safety benchmark" in line for line in warned)
    assert any(line.startswith("knowledge_base.rrf_k is no longer a setting") for line in warned)
    assert any(line.startswith("RESEARCHBOT_LLM__EVIDENCE_LLM_WEIGHT (llm.evidence_llm_weight) "
                               "is no longer a setting") for line in warned)




def test_the_visible_settings_are_few_and_the_rest_apart() -> None:
    keys = [row.key for row in setting_rows()]
    visible = [k for k in keys if not k.startswith(("advanced.", "endpoints."))]
    assert len(visible) <= 50, visible
    assert {"redis.url", "sources.timeout_s", "chat.depth", "llm.fast_model",
            "web.host", "slack.host", "queue.metrics_host"} <= set(visible)
    assert len([k for k in keys if k.startswith("endpoints.")]) == len(ENDPOINTS)
    for section, names in ADVANCED.items():  # each at its new place only
        for name in names:
            assert not any(k == f"{section}.{name}" or k.startswith(f"{section}.{name}.")
                           for k in keys)
    assert not set(REMOVED) & set(keys) and not set(MOVED) & set(keys)


def test_every_listener_defaults_to_this_machine() -> None:
    settings = Settings.model_validate({})
    assert settings.web.host == settings.slack.host == settings.queue.metrics_host \
        == "127.0.0.1"


async def test_the_workers_metrics_server_listens_on_this_machine_by_default(
        clean_env: Path) -> None:
    from bot.worker import metrics_server

    port = free_port()
    settings = load_settings()
    async with metrics_server(port, None, settings.queue.metrics_host):
        listening = {c.laddr.ip for c in psutil.Process().net_connections(kind="tcp")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port == port}
        async with httpx.AsyncClient() as client:
            answered = await client.get(f"http://127.0.0.1:{port}/metrics")
    assert listening == {"127.0.0.1"}
    assert answered.status_code == 200
