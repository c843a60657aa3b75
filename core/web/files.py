"""Downloading a file a person shared in a chat (a Slack file, a Discord attachment) to add it
to the knowledge base: only from the platform's own file hosts, named by the caller (a link
in a message cannot send the bot elsewhere, not even by a redirect, and the bot token sent to
Slack's host never travels further), through the address guard, within a size cap and a time
limit."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Mapping
from typing import Any

import aiohttp
from yarl import URL

from core.errors import (
    BlockedAddressError,
    FetchError,
    RedirectError,
    ResponseTooLargeError,
)
from core.web.net import AddressGuard, endpoint, guarded_get, guarded_session, read_capped


async def fetch_platform_file(url: str, *, hosts: Collection[str], max_bytes: int,
                              guard: AddressGuard | None = None,
                              headers: Mapping[str, str] | None = None,
                              timeout_s: float = 60.0,
                              user_agent: str = "researchbot") -> bytes:
    """The file at `url`, whose host (and every redirect's) must be one of `hosts` ("host"
    or "host:port"); FetchError saying why not (too large, refused, not found, an HTML page
    where a file was expected: the token lacks the scope to read files)."""
    allowed = {host.lower() for host in hosts}

    async def admit(hop: URL) -> Any:
        host, port = endpoint(hop)
        if host not in allowed and f"{host}:{port}" not in allowed:
            raise BlockedAddressError(f"{hop.host} is not the platform's file host")
        return contextlib.nullcontext()

    guard = guard or AddressGuard()
    try:
        async with asyncio.timeout(timeout_s), guarded_session(user_agent, guard=guard) as \
                session, guarded_get(session, url, guard, admit=admit,
                                     headers=dict(headers or {})) as response:
            if response.status >= 400:
                raise FetchError(f"the file could not be downloaded (HTTP {response.status})",
                                 "http_error")
            if response.content_type == "text/html" and not url.lower().split("?")[0] \
                    .endswith((".html", ".htm")):
                raise FetchError("the platform answered with a web page instead of the file "
                                 "(the app may lack the permission to read files)",
                                 "not_a_page")
            return await read_capped(response, max_bytes)
    except TimeoutError:
        raise FetchError(f"the download took longer than {timeout_s:g} s", "timeout") from None
    except ResponseTooLargeError:
        raise FetchError(f"the file is larger than {max_bytes / 2**20:g} MB",
                         "too_large") from None
    except (BlockedAddressError, RedirectError) as error:
        raise FetchError(f"the download was refused: {error}", "blocked") from None
    except (aiohttp.ClientError, OSError) as error:
        raise FetchError(f"the download failed: {type(error).__name__}", "error") from None

