"""The embedded vector store shared by the processes of one machine: a bot that stays up while
`researchbot index` runs beside it, and several processes asking at once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import researchbot
from tests.support.corpus import CORPUS, index_corpus

pytestmark = pytest.mark.system

LOCAL_ONLY = {"RESEARCHBOT_SOURCES__WIKIPEDIA": "false", "RESEARCHBOT_SOURCES__ARXIV": "false",
              "RESEARCHBOT_SOURCES__PUBMED": "false"}

MOON = "# The Moon\n\nThe Moon orbits the Earth every 27.3 days; its gravity raises the tides.\n"


@pytest.fixture
def docs(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test corpus, indexed by a `researchbot index` process of its own."""
    for name, value in LOCAL_ONLY.items():
        monkeypatch.setenv(name, value)
    return index_corpus(clean_env)


@pytest.fixture
async def bot_process(docs: Path) -> AsyncIterator[Any]:
    """The research core opened once, as a chat bot holds it for days."""
    from bot.config import load_settings
    from bot.wiring import open_research

    async with open_research(load_settings(None)) as research:
        yield research


async def _paths(research: Any, question: str) -> list[str]:
    hits = await research.knowledge_base.search(question, "local", limit=4)
    return [Path(hit.path).name for hit in hits]


async def test_a_running_bot_sees_another_process_index_add_change_and_remove(
    bot_process: Any, docs: Path
) -> None:
    assert (await _paths(bot_process, "How long do cats sleep?"))[0] == "cats.md"
    (docs / "cats.md").write_text(CORPUS["cats.md"].replace(
        "between 12 and 16 hours", "about 15 hours, and they purr while they doze,"))
    (docs / "tea.txt").unlink()
    (docs / "moon.md").write_text(MOON)

    indexer = asyncio.create_task(researchbot.run_async("index", str(docs)))
    answered_meanwhile = 0
    while not indexer.done():  # the bot keeps answering while the index run writes
        assert await _paths(bot_process, "Which eruption buried Pompeii?")
        answered_meanwhile += 1
        await asyncio.sleep(0.05)
    indexed = indexer.result()
    assert indexed.returncode == 0, indexed.stderr
    assert "1 added, 1 updated" in indexed.stdout and "1 removed" in indexed.stdout
    assert answered_meanwhile > 0

    questions = ["What raises the tides?", "Do cats purr while they doze?",
                 "How much caffeine is in black tea?", "Which eruption buried Pompeii?",
                 "What gives sourdough bread its sour taste?"] * 3
    answers = [await _paths(bot_process, question) for question in questions]
    assert answers[0][0] == "moon.md"
    cats = await bot_process.knowledge_base.search("Do cats purr while they doze?", "local")
    assert "purr" in cats[0].content and "12 and 16" not in cats[0].content
    assert all("tea.txt" not in paths for paths in answers)
    assert answers[3][0] == "volcanoes.rst" and answers[4][0] == "bread.html"


async def test_processes_asking_at_once_share_the_answer_cache(bot_process: Any) -> None:
    from core.models import ResearchRequest
    from tests.support.job_client import JobClient

    question, pompeii = "What gives sourdough bread its sour taste?", "What buried Pompeii?"
    askers = [_ask(text) for text in (question, "How long do cats sleep?")]
    here = await JobClient(bot_process.jobs).run(
        ResearchRequest(question=pompeii, tenant="local", platform="cli"))
    assert "Vesuvius" in here.answer.summary + here.answer.detail
    for asker in askers:
        assert '"cached": false' in await _answer(asker)

    again = await JobClient(bot_process.jobs).run(
        ResearchRequest(question=question, tenant="local", platform="cli"))
    assert again.cached  # written by another process, read without a restart
    assert "acid" in again.answer.summary + again.answer.detail
    assert '"cached": true' in await _answer(_ask(pompeii))  # the bot's, elsewhere


def _ask(question: str) -> asyncio.Task[subprocess.CompletedProcess[str]]:
    """`researchbot ask` in a process of its own, answering beside this one."""
    return asyncio.create_task(researchbot.run_async("ask", question, "--json"))


async def _answer(asker: asyncio.Task[subprocess.CompletedProcess[str]]) -> str:
    asked = await asker
    assert asked.returncode == 0, asked.stderr
    assert '"status": "completed"' in asked.stdout
    return asked.stdout


def test_a_store_without_file_locks_is_refused_at_start_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the data dir cannot lock files, opening fails at once and says what to run."""
    from core.errors import ConfigurationError
    from core.retrieval.vectors import _ProcessSharedLock

    class NoLocks:
        LOCK_SH, LOCK_EX, LOCK_UN, LOCK_NB = 1, 2, 8, 4

        @staticmethod
        def flock(_fd: int, _how: int) -> None:
            raise OSError(37, "No locks available")

    monkeypatch.setitem(sys.modules, "fcntl", NoLocks)  # the OS, not our code
    with pytest.raises(ConfigurationError, match="chroma run --path"):
        _ProcessSharedLock(tmp_path / "lock")
