"""The bot's command line in a process of its own, as a person runs it: `python -m bot ARGS`.

- `run`: a command that ends (index, ask, show, keys ...), waited for; its exit code, stdout
  and stderr, as `subprocess.run` gives them.
- `run_async`: the same without blocking the test's event loop, which may be serving a fake
  the process calls (the web sources, a model, Slack).
- `start`, `running`: a command that keeps running (serve, slack, discord, worker), its stderr
  (where the bot logs) written to a file; `Process.wait_for_line` waits for a line there,
  `Process.wait_for_http` for a server it runs to answer.
- `command`: the command line itself, for a client that starts the process (MCP's stdio).

The environment is the caller's to say: `env` is the process's whole environment, None this
process's own. The `clean_env` fixture has already put RESEARCHBOT_DATA_DIR (a fresh data dir)
and RESEARCHBOT_PIPELINE__LOCAL_ONLY in os.environ, dropped the shell's other RESEARCHBOT_*
settings and made the test's tmp_path the working directory, so under it most calls pass no
env, and `env={**os.environ, "RESEARCHBOT_...": ...}` adds settings."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "bot", *args]


def run(*args: str, env: Mapping[str, str] | None = None, timeout: float | None = 120,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command run to its end; killed, and subprocess.TimeoutExpired raised, after
    `timeout` seconds (None: no limit)."""
    return subprocess.run(command(*args), capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


async def run_async(*args: str, env: Mapping[str, str] | None = None,
                    timeout: float | None = 120,  # noqa: ASYNC109 (a cancel loses the output)
                    cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`run` for a coroutine. After `timeout` seconds the process is stopped (`stop`) and
    subprocess.TimeoutExpired raised with what it wrote until then."""
    handle = await asyncio.create_subprocess_exec(
        *command(*args), env=env, cwd=cwd, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    # shielded: a timeout must not cancel the reads and lose what was already read
    reading = asyncio.ensure_future(handle.communicate())
    try:
        out, err = await asyncio.wait_for(asyncio.shield(reading), timeout)
    except TimeoutError:
        assert timeout is not None  # without one, nothing times out
        await stop(handle)
        out, err = await reading
        raise subprocess.TimeoutExpired(command(*args), timeout, out.decode(errors="replace"),
                                        err.decode(errors="replace")) from None
    except asyncio.CancelledError:  # the test stopped waiting: so does the process
        with contextlib.suppress(ProcessLookupError):
            handle.kill()
        raise
    assert handle.returncode is not None
    return subprocess.CompletedProcess(command(*args), handle.returncode, out.decode(),
                                       err.decode())


async def stop(handle: asyncio.subprocess.Process, grace_s: float = 60.0) -> int:
    """SIGTERM (the bot's orderly shutdown), SIGKILL if it has not exited `grace_s` later;
    the exit code."""
    if handle.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            handle.terminate()
        try:
            return await asyncio.wait_for(handle.wait(), grace_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                handle.kill()
    return await handle.wait()


@dataclass
class Process:
    """A command started by `start`; what it logs (its stderr) is in `log`."""

    handle: asyncio.subprocess.Process
    log: Path

    @property
    def name(self) -> str:
        return self.log.stem

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    async def wait_for_line(self, marker: str, within_s: float = 120.0) -> None:
        """Until `marker` is in the log (the process says it is ready); fails at once if the
        process exits first, with the end of its log."""
        async def logged() -> bool:
            return marker in self.text()

        await self._until(logged, within_s)

    async def wait_for_http(self, url: str, within_s: float = 120.0) -> None:
        """Until GET `url` answers 200 (the server it runs is up); fails at once if the
        process exits first, with the end of its log."""
        async with httpx.AsyncClient(timeout=2) as client:
            async def answers() -> bool:
                with contextlib.suppress(httpx.TransportError):
                    return (await client.get(url)).status_code == 200
                return False

            await self._until(answers, within_s)

    async def _until(self, ready: Callable[[], Awaitable[bool]], within_s: float) -> None:
        async with asyncio.timeout(within_s):
            while not await ready():
                if self.handle.returncode is not None:
                    raise AssertionError(f"{self.name} exited: {self.text()[-3000:]}")
                await asyncio.sleep(0.1)  # another process gets ready: no event reaches us

    async def stop(self, grace_s: float = 60.0) -> int:
        return await stop(self.handle, grace_s)


async def start(*args: str, log: Path, env: Mapping[str, str] | None = None,
                cwd: Path | None = None) -> Process:
    """The command started, its stderr written to `log` (replacing a file there) and its
    stdout dropped; the caller stops it (`Process.stop`), or use `running`."""
    with log.open("wb") as stderr:  # the child has its own descriptor
        handle = await asyncio.create_subprocess_exec(
            *command(*args), env=env, cwd=cwd, stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr)
    return Process(handle, log)


@contextlib.asynccontextmanager
async def running(*args: str, log: Path, env: Mapping[str, str] | None = None,
                  cwd: Path | None = None) -> AsyncIterator[Process]:
    """`start`, and `Process.stop` on the way out."""
    process = await start(*args, log=log, env=env, cwd=cwd)
    try:
        yield process
    finally:
        await process.stop()
