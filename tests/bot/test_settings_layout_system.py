"""An old setting's name in a real `researchbot` run: one warning line, and the command runs
(system tier)."""


from pathlib import Path

import pytest

from tests.bot.test_settings_layout import _config
from tests.support import researchbot

pytestmark = pytest.mark.system


def test_the_cli_prints_one_warning_line_and_runs(clean_env: Path) -> None:
    _config(clean_env, "[chat]\nmax_queue_seconds = 5\n")
    done = researchbot.run("jobs", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "chat.max_queue_seconds is deprecated: use advanced.chat.max_queue_seconds"]
