"""Tavily web search through tavily-python's async client (opened by `SOURCE.open`, on an
httpx client whose answers are capped: core.web.net.CappedTransport)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from core.config import SourcesSettings
from core.errors import (
    ResponseTooLargeError,
    SourceError,
    SourceHttpError,
    SourceResponseTooLargeError,
)
from core.models import ContentType, Source
from core.sources.policy import SourcePolicy
from core.sources.protocol import (
    PROBE_QUERY,
    Capabilities,
    PolicyFactory,
    SearchQuery,
    SearchSource,
    SourceKind,
    SourceProbe,
    SourceSpec,
)
from core.sources.search_hits import parse_date, web_source
from core.web.net import capped_http_client


class TavilySource:
    name = "tavily"
    label = "the web (Tavily)"
    capabilities = Capabilities(SourceKind.WEB, snippets=True, key_setting="sources.tavily_api_key",
                                dates=True, content=frozenset({ContentType.NEWS}))

    def __init__(self, client: Any, policy: SourcePolicy, *, search_depth: str = "basic",
                 topic: str = "general", include_domains: list[str] | None = None,
                 exclude_domains: list[str] | None = None) -> None:
        self._client = client
        self._policy = policy
        self._options = {"search_depth": search_depth, "topic": topic,
                         "include_domains": include_domains or None,
                         "exclude_domains": exclude_domains or None}

    async def search(self, query: SearchQuery) -> list[Source]:
        options = _with_controls(self._options, query)
        limit = min(query.limit, 20)

        async def fetch() -> Any:
            try:
                return await self._client.search(query.text, max_results=limit, timeout=30,
                                                  **options)
            except Exception as error:  # tavily raises its own types and httpx's
                raise _as_source_error(error) from error

        data = await self._policy.call(f"{query.text}|{limit}|{sorted(options.items())}", fetch)
        # The client fills in an empty result list when the body has none; a real answer
        # always echoes the query, so a body without it is malformed, not "nothing found".
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list) or "query" not in data:
            raise SourceError(self.name, "the response was not a search result")
        found = []
        for item in results[:limit]:  # no more than asked for, whatever the answer holds
            if isinstance(item, dict) and item.get("url"):
                found.append(web_source(
                    self.name, str(item["url"]), str(item.get("title") or ""),
                    str(item.get("raw_content") or item.get("content") or ""),
                    published=parse_date(item.get("published_date"))))
        return found


def _with_controls(configured: dict[str, Any], query: SearchQuery) -> dict[str, Any]:
    """The configured options with the request's: its date range, its domains (added to the
    configured lists), the news topic for news (and a recent current-events question)."""
    options = dict(configured)
    if query.recency is not None:
        options["time_range"] = query.recency.value
    controls = query.controls
    if controls.include_domains:
        options["include_domains"] = [*(configured["include_domains"] or []),
                                      *controls.include_domains]
    if controls.exclude_domains:
        options["exclude_domains"] = [*(configured["exclude_domains"] or []),
                                      *controls.exclude_domains]
    recent_event = query.recency is not None and controls.recency is None \
        and query.intent.question_type.value == "current_event"
    if query.content_type is ContentType.NEWS or recent_event:
        options["topic"] = "news"
    return options


def _as_source_error(error: Exception) -> Exception:
    """Tavily's and httpx's errors as the policy understands them: HTTP statuses, timeouts,
    connection failures (retried) and the rest (not)."""
    if isinstance(error, SourceError):
        return error
    if isinstance(error, ResponseTooLargeError):
        return SourceResponseTooLargeError(
            "tavily", f"the answer was larger than {error.limit / 2**20:g} MB")
    name = type(error).__name__
    if name == "UsageLimitExceededError":
        return SourceHttpError("tavily", 429)
    if name in ("InvalidAPIKeyError", "ForbiddenError", "MissingAPIKeyError"):
        return SourceError("tavily", f"the API key was refused ({name})", 401)
    status = getattr(getattr(error, "response", None), "status_code", None)
    if isinstance(status, int):
        return SourceHttpError("tavily", status)
    if "Timeout" in name:
        return TimeoutError()
    if name in ("ConnectError", "ReadError", "RemoteProtocolError", "WriteError"):
        return ConnectionError(f"{name}: {error}")
    return SourceError("tavily", f"{name}: {error}"[:300])


def _key(config: SourcesSettings) -> str:
    return config.tavily_api_key.get_secret_value() if config.tavily_api_key else ""


@asynccontextmanager
async def _open(config: SourcesSettings, session: aiohttp.ClientSession,
                policy: PolicyFactory) -> AsyncIterator[SearchSource]:
    """Tavily talks through its own client (not `session`), on an httpx client capped at
    the policy's response size; both are closed with the source."""
    from tavily import AsyncTavilyClient

    tavily_policy = policy("tavily")
    http = capped_http_client(tavily_policy.max_response_bytes)
    try:
        client = AsyncTavilyClient(api_key=_key(config), api_base_url=config.tavily_api,
                                   client=http)
        try:
            yield TavilySource(client, tavily_policy, search_depth=config.tavily_search_depth,
                               include_domains=config.tavily_include_domains,
                               exclude_domains=config.tavily_exclude_domains)
        finally:
            await client.close()
    finally:
        await http.aclose()


def _probe(config: SourcesSettings) -> SourceProbe:
    """The search request tavily-python's client sends, for one result."""
    return SourceProbe(config.tavily_api.rstrip("/") + "/search",
                       body={"query": PROBE_QUERY, "max_results": 1},
                       headers={"Authorization": f"Bearer {_key(config)}"})


SOURCE = SourceSpec(
    name=TavilySource.name, label=TavilySource.label, setting="sources.tavily_api_key",
    enabled=lambda config: bool(_key(config)), off_reason="not configured",
    endpoint=lambda config: None,  # reached through Tavily's own client, not the API session
    open=_open, probe=_probe)
