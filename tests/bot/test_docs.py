"""The documentation agrees with the code: the generated references list every setting, command
and flag and nothing else, the pages and README name only settings that exist, and README's
links and commands are the files and the commands CI uses."""

import contextlib
import io
import re

import pytest
from pydantic import BaseModel, Field

from bot.cli import build_parser
from bot.config import ENV_PREFIX, MOVED, REMOVED, Settings, setting_variables
from bot.reference import cli_reference, setting_rows, settings_reference
from core.config import TIERS, QueueSettings
from tests.support import PROJECT

pytestmark = pytest.mark.unit

ROOT = PROJECT
PAGES = sorted((ROOT / "docs").rglob("*.md"))
ROW = re.compile(r"^\| `([a-z0-9_.]+)`<br>`(RESEARCHBOT_[A-Z0-9_]+)` "
                 r"\| (.*?) \| `(.*?)` \| (.*) \|$", re.MULTILINE)


def _leaf_variables() -> set[str]:
    """Every variable that sets one value: those that are not a section of another."""
    variables = setting_variables()
    return {v for v in variables if not any(w.startswith(v + "__") for w in variables)}


def _rows() -> dict[str, tuple[str, str, str, str]]:
    return {match[0]: match[1:] for match in ROW.findall(settings_reference())}


def test_every_setting_is_in_the_reference_and_nothing_else() -> None:
    rows = _rows()
    assert {variable for variable, *_ in rows.values()} == _leaf_variables()
    for key, (variable, _type, _default, _description) in rows.items():
        assert variable == ENV_PREFIX + key.replace(".", "__").upper()


def test_every_setting_in_the_reference_is_described_typed_and_has_its_default() -> None:
    rows = _rows()
    assert all(description.strip() and type_.strip()
               for _variable, type_, _default, description in rows.values())
    assert rows["advanced.queue.concurrency"][1:3] == ("integer, ≥ 1",
                                                       str(QueueSettings().concurrency))
    assert rows["advanced.llm.deep.tokens"][2] == str(TIERS["deep"]["tokens"])
    assert rows["log.format"][1] == '"text" or "json"'
    assert rows["chat.depth"][2] == '"auto"'
    assert rows["sources.tavily_api_key"][1:3] == ("secret string", "unset")
    assert rows["data_dir"][2].startswith("~/")  # not the home folder of whoever built it


def test_no_moved_or_removed_name_is_in_the_reference_or_the_pages() -> None:
    """A name of the previous release is only in the deprecation table, never documented as
    a setting; the reference lists the sections a person decides before advanced and
    endpoints."""
    reference = settings_reference()
    rows = _rows()
    for old in (*MOVED, *REMOVED):
        assert not any(key == old or key.startswith(old + ".") for key in rows), old
    headings = re.findall(r"^#+ (?:`([a-z_.]+)`|(Advanced settings))", reference, re.MULTILINE)
    order = [name or title for name, title in headings]
    first_advanced = order.index("Advanced settings")
    assert all(not name.startswith(("advanced", "endpoints")) for name in order[:first_advanced])
    assert order[-1] == "endpoints"


def test_a_setting_added_to_the_tree_appears_without_an_edit() -> None:
    class Knobs(BaseModel):
        timeout_s: float = Field(default=2.5, gt=0, description="How long to wait.")

    class Tree(BaseModel):
        top: bool = Field(default=False, description="A top-level switch.")
        knobs: Knobs = Field(default_factory=Knobs)
        spare: Knobs | None = None

    assert [(row.key, row.variable, row.type, row.default, row.description)
            for row in setting_rows(Tree())] == [
        ("top", f"{ENV_PREFIX}TOP", "boolean", "false", "A top-level switch."),
        ("knobs.timeout_s", f"{ENV_PREFIX}KNOBS__TIMEOUT_S", "number, > 0", "2.5",
         "How long to wait."),
        ("spare.timeout_s", f"{ENV_PREFIX}SPARE__TIMEOUT_S", "number, > 0", "2.5",
         "How long to wait.")]


def _help(words: list[str]) -> str:
    output = io.StringIO()
    with contextlib.redirect_stdout(output), pytest.raises(SystemExit):
        build_parser().parse_args([*words, "--help"])
    return output.getvalue()


def _subcommands(help_text: str) -> list[str]:
    """The commands a help text lists under its COMMAND or ACTION argument."""
    listing = re.search(r"\n  (?:COMMAND|ACTION)\n((?:    .*\n)+)", help_text)
    return re.findall(r"^    (\w+)", listing[1], re.MULTILINE) if listing else []


def _command_paths(words: list[str]) -> list[list[str]]:
    return [words] + [path for name in _subcommands(_help(words))
                      for path in _command_paths([*words, name])]


def test_the_cli_reference_lists_every_command_and_flag() -> None:
    reference = cli_reference(build_parser())
    sections = dict(re.findall(r"^## `researchbot ?([^`]*)`\n(.*?)(?=^## |\Z)", reference,
                               re.MULTILINE | re.DOTALL))
    paths = _command_paths([])
    assert {" ".join(path) for path in paths} == set(sections)
    assert {"ask", "index", "documents remove", "keys create", "serve"} <= set(sections)
    for path in paths:
        help_text = _help(path)
        options = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", help_text.split("options:")[1]))
        options -= {"-h", "--help"}
        cells = re.findall(r"^\| `([^`]+)` \|", sections[" ".join(path)], re.MULTILINE)
        documented = {flag for cell in cells for flag in re.findall(r"(--?[a-z][a-z-]*)", cell)}
        assert options == documented, path


def _inline_code(text: str) -> list[str]:
    without_blocks = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.findall(r"`([^`\n]+)`", without_blocks)


def test_the_pages_and_readme_name_only_settings_that_exist() -> None:
    keys = {row.key for row in setting_rows()}
    known = keys | {key.rsplit(".", end)[0] for key in keys for end in range(1, key.count(".") + 1)}
    sections = "|".join(name for name in Settings.model_fields if name in known)
    name = re.compile(rf"(?<![\w/.-])((?:{sections})\.[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)")
    named = {(path.name, match) for path in [ROOT / "README.md", *PAGES]
             for code in _inline_code(path.read_text()) for match in name.findall(code)}
    assert named, "the scan found no setting names at all"
    assert {(page, key) for page, key in named if key not in known} == set()


def test_readme_links_lead_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    targets = [target for target in re.findall(r"\]\(([^)\s]+)\)", readme)
               if not re.match(r"[a-z]+:", target)]
    assert any(target.startswith("docs/") for target in targets)
    missing = [target for target in targets if not (ROOT / target.split("#")[0]).exists()]
    assert not missing


def test_readme_gives_the_commands_ci_runs() -> None:
    """.ci/run does README's install step and runs its test commands: the same lines."""
    readme = (ROOT / "README.md").read_text()
    commands = [re.sub(r"^(\w+=\S+ )+", "", line)
                for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if re.match(r"(\w+=\S+ )*(\.venv/bin/|python3 -m venv)", line)]
    assert len(commands) >= 6
    assert [command for command in commands if command not in readme] == []
