"""GETs and JSON POSTs to a source's configured API and reading their answers: through
core.web.net's guarded path (the endpoint is trusted, a redirect elsewhere must lead to a
public address), read as they stream up to a byte cap, every failure a SourceError naming
the source."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import aiohttp

from core.errors import (
    BlockedAddressError,
    RedirectError,
    ResponseTooLargeError,
    SourceError,
    SourceHttpError,
    SourceResponseTooLargeError,
)
from core.web.net import REDIRECT_STATUSES, AddressGuard, guarded_get, read_capped


async def get_bytes(session: aiohttp.ClientSession, source: str, url: str,
                    params: dict[str, Any] | None, headers: dict[str, str] | None,
                    max_bytes: int) -> tuple[bytes, str | None]:
    """The body and charset of a GET to `url`, the source's configured API: that endpoint is
    trusted (it may be on the user's LAN), a redirect elsewhere must lead to a public address."""
    query = {k: str(v) for k, v in params.items()} if params else None
    return await _read(source, max_bytes, guarded_get(
        session, url, AddressGuard.trusting(url), params=query, headers=headers))


async def post_bytes(session: aiohttp.ClientSession, source: str, url: str,
                     body: dict[str, Any], headers: dict[str, str] | None,
                     max_bytes: int) -> tuple[bytes, str | None]:
    """The body and charset of a JSON POST to `url`, the source's configured API. A POST is
    not redirected: a redirect is reported, never followed with the body and its key."""
    return await _read(source, max_bytes, _posted(session, url, body, headers))


@asynccontextmanager
async def _posted(session: aiohttp.ClientSession, url: str, body: dict[str, Any],
                  headers: dict[str, str] | None) -> AsyncIterator[aiohttp.ClientResponse]:
    target = AddressGuard.trusting(url).check(url)
    async with session.post(target, json=body, headers=headers,
                            allow_redirects=False) as response:
        if response.status in REDIRECT_STATUSES:
            raise RedirectError(f"{url}: answered a search with a redirect (HTTP "
                                f"{response.status}); not followed")
        yield response


async def _read(source: str, max_bytes: int,
                request: AbstractAsyncContextManager[aiohttp.ClientResponse]
                ) -> tuple[bytes, str | None]:
    """The answer to `request`, read up to `max_bytes`; every failure a SourceError."""
    try:
        async with request as response:
            if response.status >= 400:
                raise SourceHttpError(source, response.status,
                                      retry_after(response.headers.get("Retry-After")))
            return await read_capped(response, max_bytes), response.charset
    except ResponseTooLargeError as error:
        raise SourceResponseTooLargeError(
            source, f"the answer was larger than {max_bytes / 2**20:g} MB (read "
            f"{error.read:,} bytes)") from None
    except BlockedAddressError as error:
        raise SourceError(source, f"refused to follow a redirect: {error}") from None
    except RedirectError as error:
        raise SourceError(source, str(error)) from None


def retry_after(value: str | None) -> float | None:
    """A Retry-After header in seconds (an HTTP date is not honoured: None)."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def parse_json(source: str, body: bytes) -> Any:
    """The JSON document; its parse is bounded by the byte cap it was read under (and nesting
    by the interpreter's recursion limit, reported as malformed)."""
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise SourceError(source, "the response was not valid JSON") from None
    except RecursionError:
        raise SourceError(source, "the response was not valid JSON (nested too "
                                  "deeply)") from None


def parse_xml(source: str, text: str) -> Any:
    """The XML document's root, parsed with defusedxml (no entity expansion, no external
    references); SourceError when it is malformed or hostile."""
    from defusedxml import ElementTree

    try:
        return ElementTree.fromstring(text)  # no larger than the byte cap it was read under
    except ElementTree.ParseError as error:
        raise SourceError(source, f"the response is not valid XML: {error}") from None
    except Exception as error:  # defusedxml refuses entity tricks with its own types
        raise SourceError(source, f"the response was refused: {type(error).__name__}") from None
