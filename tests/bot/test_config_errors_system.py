"""Configuration mistakes that stop a real process: a misspelt variable, an unreachable Redis
(system tier)."""


import os
from pathlib import Path

import pytest

from tests.bot.test_config_errors import SECRET
from tests.support import researchbot

pytestmark = pytest.mark.system


def test_a_misspelt_variable_fails_the_process(clean_env: Path) -> None:
    env = {**os.environ, "RESEARCHBOT_STORE_URL": f"postgresql+asyncpg://u:{SECRET}@h/db"}
    done = researchbot.run("jobs", env=env, timeout=60)
    assert done.returncode == 1 and "did you mean RESEARCHBOT_STORE__URL?" in done.stderr
    assert "Traceback" not in done.stderr and SECRET not in done.stderr


def test_an_unreachable_redis_stops_the_chat_bot(clean_env: Path) -> None:
    env = {**os.environ, "RESEARCHBOT_SLACK__BOT_TOKEN": "xoxb-1-2-abcdef",
           "RESEARCHBOT_SLACK__SIGNING_SECRET": "signing-secret-123",
           "RESEARCHBOT_REDIS__URL": f"redis://:{SECRET}@127.0.0.1:1/0"}
    done = researchbot.run("slack", env=env, timeout=90)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert SECRET not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("researchbot: error: configuration: redis.url: cannot use")
    assert "fix redis.url" in line
