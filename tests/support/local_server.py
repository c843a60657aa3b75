"""An aiohttp application served on 127.0.0.1 at a free port, for the fake remote services."""

from __future__ import annotations

from aiohttp import web


class LocalServer:
    def __init__(self, app: web.Application | None = None) -> None:
        self.app = app or web.Application()
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
