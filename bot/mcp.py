"""`researchbot mcp`: the MCP server (adapters.mcp) over stdio, for an agent that starts it
as a subprocess. Its tenant is --tenant or the settings'; jobs run here (or, with redis.url,
on the workers). Standard output carries the protocol alone: logs go to stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.config import Settings
from bot.wiring import FrontEndServices, answer_pages, open_front_end, searcher

if TYPE_CHECKING:
    from adapters.mcp.server import CallerOf, McpServices


def mcp_services(settings: Settings, front: FrontEndServices, caller: CallerOf
                 ) -> McpServices:
    """The MCP server's services over a front end's: its job service, its search, and
    answer-page links under web.public_url."""
    from adapters.mcp.server import McpServices

    pages = answer_pages(settings, front.links)
    return McpServices(front.jobs, searcher(front), pages or (lambda _job_id: None), caller)


async def run_mcp_stdio(settings: Settings, tenant: str) -> None:
    from adapters.mcp.server import build_mcp, stdio_caller
    from bot.logs import configure_logging

    configure_logging(settings.log)
    async with open_front_end(settings) as front:
        server = build_mcp(mcp_services(settings, front, stdio_caller(tenant)))
        await server.run_stdio_async()
