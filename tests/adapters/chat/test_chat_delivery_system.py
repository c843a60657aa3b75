"""Delivery to chat through the bot's own processes: a delivery that finally fails is recorded on
the job that `researchbot show` reads (system tier)."""


import os

import pytest

from tests.adapters.chat.test_chat_delivery import QUESTION, _carries_answer, _jobs
from tests.support import researchbot
from tests.support.chat_harness import Options
from tests.support.corpus import Indexed
from tests.support.fake_slack import Fault
from tests.support.slack_harness import SlackHarness, mention

pytestmark = pytest.mark.system


@pytest.mark.parametrize("server", [Options(give_up_delivery_s=0.5)], indirect=True)
async def test_slack_a_delivery_that_finally_fails_is_recorded_on_the_job(
    server: SlackHarness, indexed: Indexed,
) -> None:
    fault = Fault("chat.update", times=1000, status=503, matches=_carries_answer)
    server.slack.faults.append(fault)
    assert await server.post(mention(QUESTION)) == 200
    assert server.desk is not None
    await server.slack.wait_for(lambda: fault.hits >= 2)
    (job,) = await _jobs(server)
    await server.desk.jobs.wait(job.id)
    delivery = await server.desk.jobs.delivery(job.id)
    assert delivery is not None and delivery.status == "failed"
    assert "HTTP 503" in str(delivery.error)
    # `researchbot show` prints it (the job itself completed: its answer is stored).
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("RESEARCHBOT_")}
    env["RESEARCHBOT_STORE__URL"] = f"sqlite+aiosqlite:///{indexed.folder / 'test.sqlite3'}"
    env["RESEARCHBOT_DATA_DIR"] = str(indexed.folder / "data")
    show = await researchbot.run_async("show", job.id, env=env)
    assert show.returncode == 0, show.stderr
    shown = show.stdout
    assert "delivery to slack: failed after" in shown
    assert "HTTP 503" in shown and "12 and 16 hours" in shown
