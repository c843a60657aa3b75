"""Every configuration mistake stops start-up with one line that names the setting and says
what to do: no traceback, no secret. The real CLI (`bot.cli.main`) runs each case."""

import re
import socket
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import NOT_SETTINGS, NOT_SETTINGS_PREFIXES, load_settings, setting_variables
from tests.support import PROJECT
from tests.support.services import POSTGRES_URL, skip_or_fail

pytestmark = pytest.mark.integration

# Files that name wrong or old variables on purpose.
MISSPELLING_TESTS = ("test_config_errors.py", "test_config_errors_system.py",
                     "test_settings_layout.py", "test_settings_layout_system.py")

SECRET = "s3cret-pass-4711"
ROOT = PROJECT


def _configuration_error(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                         args: list[str], env: dict[str, str]) -> str:
    """The CLI's one line on stderr for a bad setting (exit 1); checked for leaks."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = main(args)
    out = capsys.readouterr()
    assert code == 1, out.err
    assert "Traceback" not in out.err + out.out and SECRET not in out.err + out.out
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert lines[0].startswith("researchbot: error: configuration: "), lines[0]
    return lines[0]


@pytest.mark.parametrize(("variable", "suggestion"), [
    ("RESEARCHBOT_STORE_URL", "RESEARCHBOT_STORE__URL"),
    ("RESEARCHBOT_PIPELNE__LOCAL_ONLY", "RESEARCHBOT_PIPELINE__LOCAL_ONLY"),
    ("RESEARCHBOT_ADVANCED__LLM__QUICK__SECOND", "RESEARCHBOT_ADVANCED__LLM__QUICK__SECONDS"),
])
def test_a_misspelt_variable_stops_start_up_with_the_nearest_name(
        clean_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        variable: str, suggestion: str) -> None:
    line = _configuration_error(capsys, monkeypatch, ["jobs"], {variable: "1"})
    assert f"{variable} (did you mean {suggestion}?)" in line




def test_variables_that_are_not_settings_are_allowed(
        clean_env: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env.parent / "other.toml").write_text("tenant = 'local'\n")
    for name, value in {"RESEARCHBOT_DEBUG": "0", "RESEARCHBOT_TEST_ANYTHING": "x",
                        "RESEARCHBOT_CONFIG": str(clean_env.parent / "other.toml"),
                        "RESEARCHBOT_ADVANCED__LLM__QUICK__SECONDS": "30"}.items():
        monkeypatch.setenv(name, value)
    assert main(["jobs"]) == 0, capsys.readouterr().err


def test_every_researchbot_variable_the_repository_names_is_known() -> None:
    """The allow-list is the one place for RESEARCHBOT_* names that are not settings."""
    known = setting_variables()
    files = [ROOT / "README.md", ROOT / "config.toml", ROOT / ".ci" / "run",
             *(ROOT / "docs").rglob("*.md"),
             *(p for folder in ("core", "bot", "adapters", "tests", "bench")
               for p in (ROOT / folder).rglob("*.py")
               if p.name not in MISSPELLING_TESTS)]
    named = {name for path in files if path.is_file()
             for name in re.findall(r"RESEARCHBOT_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_<])",
                                       path.read_text())}
    unknown = {name for name in named if name not in known and name not in NOT_SETTINGS
               and not name.startswith(NOT_SETTINGS_PREFIXES)}
    assert not unknown


def test_a_typo_in_config_toml_is_refused(clean_env: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env.parent / "config.toml").write_text(
        "[pipeline]\nalow_domains = ['example.com']\n[advanced.llm.quick]\nsecs = 3\n")
    line = _configuration_error(capsys, monkeypatch, ["jobs"], {})
    assert "pipeline.alow_domains (in config.toml): not a setting; did you mean " \
           "pipeline.allow_domains?" in line
    assert "advanced.llm.quick.secs (in config.toml): not a setting; did you mean " \
           "advanced.llm.quick.seconds?" in line


def test_list_settings_read_a_comma_separated_variable(
        clean_env: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    lists = {"PIPELINE__ALLOW_DOMAINS": "example.com", "PIPELINE__BLOCK_DOMAINS": "a.com, b.org",
             "PIPELINE__LOCAL_ONLY_TENANTS": "t1,t2", "ADVANCED__LLM__FAST_FALLBACKS": "openai/a",
             "ADVANCED__LLM__STRONG_FALLBACKS": '["openai/b", "openai/c"]',
             "ADVANCED__SOURCES__TAVILY_INCLUDE_DOMAINS": "x.org",
             "ADVANCED__SOURCES__TAVILY_EXCLUDE_DOMAINS": "",
             "ADVANCED__SLACK__SCOPES": "chat:write,commands"}
    for name, value in lists.items():
        monkeypatch.setenv(f"RESEARCHBOT_{name}", value)
    assert main(["jobs"]) == 0, capsys.readouterr().err
    settings = load_settings()
    assert settings.pipeline.allow_domains == ["example.com"]
    assert settings.pipeline.block_domains == ["a.com", "b.org"]
    assert settings.pipeline.local_only_tenants == ["t1", "t2"]
    assert settings.llm.fast_fallbacks == ["openai/a"]
    assert settings.llm.strong_fallbacks == ["openai/b", "openai/c"]
    assert settings.sources.tavily_include_domains == ["x.org"]
    assert settings.sources.tavily_exclude_domains == []
    assert settings.slack.scopes == ["chat:write", "commands"]


def test_a_broken_json_list_names_the_setting(clean_env: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    line = _configuration_error(capsys, monkeypatch, ["jobs"],
                                {"RESEARCHBOT_PIPELINE__ALLOW_DOMAINS": '["example.com"'})
    assert "pipeline.allow_domains (from RESEARCHBOT_PIPELINE__ALLOW_DOMAINS)" in line
    assert 'write a,b or ["a", "b"]' in line


def test_a_sqlite_file_in_a_missing_folder(clean_env: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    line = _configuration_error(capsys, monkeypatch, ["jobs"], {
        "RESEARCHBOT_STORE__URL": "sqlite+aiosqlite:////nonexistent/dir/x.db"})
    assert "store.url: the folder /nonexistent/dir of the SQLite file does not exist" in line
    assert "mkdir -p /nonexistent/dir" in line


def _postgres_up() -> None:
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=2).close()
    except OSError as error:
        skip_or_fail(f"PostgreSQL not reachable at 127.0.0.1:5432: {error}")


def test_a_missing_postgres_database(clean_env: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _postgres_up()
    base = POSTGRES_URL.rsplit("/", 1)[0].replace("postgres@", f"postgres:{SECRET}@")
    line = _configuration_error(capsys, monkeypatch, ["jobs"], {
        "RESEARCHBOT_STORE__URL": f"{base}/no_such_db"})
    assert "store.url: database 'no_such_db' does not exist" in line
    assert "createdb -h 127.0.0.1 -p 5432 -U postgres no_such_db" in line


def test_an_unreachable_postgres_server(clean_env: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    line = _configuration_error(capsys, monkeypatch, ["jobs"], {
        "RESEARCHBOT_STORE__URL": f"postgresql+asyncpg://postgres:{SECRET}@127.0.0.1:1/x"})
    assert "store.url: cannot connect to the PostgreSQL server at 127.0.0.1:1" in line
    assert "start it or fix store.url" in line




def test_an_unreachable_chroma_server(clean_env: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    line = _configuration_error(capsys, monkeypatch, ["ask", "How long do cats sleep?"], {
        "RESEARCHBOT_KNOWLEDGE_BASE__CHROMA_URL": "http://127.0.0.1:1"})
    assert "knowledge_base.chroma_url: cannot reach the Chroma server at http://127.0.0.1:1" \
        in line
    assert "unset knowledge_base.chroma_url" in line


@pytest.mark.parametrize("args", [["index", "docs"], ["ask", "How long do cats sleep?"]])
def test_an_unknown_embedding_provider(clean_env: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    (clean_env.parent / "docs").mkdir()
    line = _configuration_error(capsys, monkeypatch, args, {
        "RESEARCHBOT_EMBEDDING__MODEL": "nosuchprovider/foo"})
    assert "embedding.model: 'nosuchprovider/foo' names no provider litellm knows" in line


def test_an_unknown_llm_provider(clean_env: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    line = _configuration_error(capsys, monkeypatch, ["ask", "How long do cats sleep?"], {
        "RESEARCHBOT_LLM__FAST_MODEL": "nosuchprovider/foo",
        "RESEARCHBOT_LLM__API_KEY": SECRET})
    assert "llm.fast_model: 'nosuchprovider/foo' names no provider litellm knows" in line
    assert "write provider/model" in line


def test_a_data_dir_that_is_a_file(clean_env: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    file = clean_env.parent / "a-file"
    file.write_text("")
    line = _configuration_error(capsys, monkeypatch, ["jobs"],
                                {"RESEARCHBOT_DATA_DIR": str(file)})
    assert f"data_dir (from RESEARCHBOT_DATA_DIR): {file} is a file, not a folder" in line


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("SOURCES__SEARXNG_URL", "search.example.org",
     "sources.searxng_url (from RESEARCHBOT_SOURCES__SEARXNG_URL): 'search.example.org' is "
     "not an http(s) URL"),
    ("ADVANCED__PIPELINE__MAX_SOURCES", "-3", "advanced.pipeline.max_sources (from "
     "RESEARCHBOT_ADVANCED__PIPELINE__MAX_SOURCES): Input should be greater than or equal to 1"),
    ("ADVANCED__SOURCES__TAVILY_SEARCH_DEPTH", "deep", "Input should be 'basic' or 'advanced'"),
    ("KNOWLEDGE_BASE__CHROMA_URL", "127.0.0.1:8000", "knowledge_base.chroma_url"),
    ("REDIS__URL", f"http://u:{SECRET}@h", "redis.url (from RESEARCHBOT_REDIS__URL): "
     "'http://u:[redacted]@h' is not a Redis URL"),
    ("STORE__URL", f"postgresql://u:{SECRET}@h/db",
     "store.url (from RESEARCHBOT_STORE__URL): 'postgresql://u:[redacted]@h/db' is not a "
     "supported async URL: write postgresql+asyncpg://"),
    ("DISCORD__DEV_GUILD_ID", "-1", "discord.dev_guild_id"),
    ("LLM", "{not json", "RESEARCHBOT_LLM__FAST_MODEL"),
])
def test_other_bad_values_name_the_setting(
        clean_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        name: str, value: str, expected: str) -> None:
    line = _configuration_error(capsys, monkeypatch, ["jobs"], {f"RESEARCHBOT_{name}": value})
    assert expected in line
