"""The MCP server as processes: `researchbot mcp` over stdio through the official SDK's client,
and the MCP inspector (a client nobody here wrote) listing and calling the tools (system tier)."""


from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.adapters.mcp.test_mcp import INSPECTOR, QUESTION, TOOLS, _exercise, _payload
from tests.support import researchbot
from tests.support.api_harness import TENANT, api_settings

pytestmark = pytest.mark.system


def _stdio_env(served_store: Path) -> dict[str, str]:
    settings = api_settings(served_store)
    return {**os.environ, "RESEARCHBOT_DATA_DIR": str(served_store),
            "RESEARCHBOT_STORE__URL": settings.store_url,
            "RESEARCHBOT_PIPELINE__LOCAL_ONLY": "true"}


async def test_over_stdio_every_tool_answers(served_store: Path) -> None:
    program, *args = researchbot.command("mcp", "--tenant", TENANT)
    server = StdioServerParameters(command=program, args=args, env=_stdio_env(served_store),
                                   cwd=str(Path.cwd()))
    async with stdio_client(server) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        answered = await _exercise(session)
        slow = _payload(await session.call_tool("research", {
            "question": "How long do cats sleep each day?", "depth": "deep",
            "wait_seconds": 0}))
        assert slow["status"] in ("pending", "in_progress") and "get_job" in slow["message"]
        refused = await session.call_tool("add_document", {"url": "http://10.0.0.1/x"})
        assert refused.is_error and "refused" in str(refused.content)
    assert answered["job_id"]


def test_a_client_nobody_here_wrote_lists_and_calls_the_tools(
        served_store: Path, tmp_path_factory: Any) -> None:
    """The MCP inspector's command-line mode (from the npm registry), against `researchbot
    mcp` over stdio."""
    import shutil
    import subprocess

    from tests.support.services import skip_or_fail

    if shutil.which("npm") is None or shutil.which("npx") is None:
        skip_or_fail("no npm here to install the MCP inspector")
    folder = tmp_path_factory.mktemp("inspector")
    installed = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                                str(folder), INSPECTOR], capture_output=True, text=True,
                               timeout=600)
    assert installed.returncode == 0, installed.stderr[-2000:]
    command = [str(folder / "node_modules" / ".bin" / "mcp-inspector"), "--cli",
               *researchbot.command("mcp", "--tenant", TENANT)]
    env = _stdio_env(served_store)
    listed = subprocess.run([*command, "--method", "tools/list"], capture_output=True,
                            text=True, env=env, timeout=180)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert {tool["name"] for tool in json.loads(listed.stdout)["tools"]} == TOOLS
    called = subprocess.run([*command, "--method", "tools/call", "--tool-name", "research",
                             "--tool-arg", f"question={QUESTION}"], capture_output=True,
                            text=True, env=env, timeout=180)
    assert called.returncode == 0, called.stderr[-2000:]
    answer = json.loads(called.stdout)["structuredContent"]
    assert answer["status"] == "completed" and "acid" in answer["answer"]["summary"] + \
        answer["answer"]["detail"]
