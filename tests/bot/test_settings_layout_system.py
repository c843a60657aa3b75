"""An old setting's name in a real `researchbot` run: one warning line, and the command runs
(system tier)."""


import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bot.test_settings_layout import _config

pytestmark = pytest.mark.system


def test_the_cli_prints_one_warning_line_and_runs(clean_env: Path) -> None:
    _config(clean_env, "[chat]\nmax_queue_seconds = 5\n")
    done = subprocess.run([sys.executable, "-m", "bot", "jobs"], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "chat.max_queue_seconds is deprecated: use advanced.chat.max_queue_seconds"]
