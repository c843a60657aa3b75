"""A SearXNG instance (the user's own metasearch engine) through its JSON API. No key."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

import aiohttp

from core.config import SourcesSettings
from core.errors import SourceError
from core.models import QueryIntent, Source
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


class SearxngSource:
    name = "searxng"
    label = "the web (SearXNG)"
    capabilities = Capabilities(SourceKind.WEB, snippets=True, preference=1)

    def __init__(self, session: aiohttp.ClientSession, policy: SourcePolicy,
                 base_url: str) -> None:
        self._session = session
        self._policy = policy
        self._url = _search_url(base_url)

    async def search(self, query: SearchQuery) -> list[Source]:
        params = _search_params(query.text, query.intent)

        async def fetch() -> Any:
            return await self._policy.get_json(self._session, self._url, params)

        data = await self._policy.call(repr(sorted(params.items())), fetch)
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SourceError(self.name, "the response had no result list (is the JSON "
                              "format enabled in the instance's settings.yml?)")
        found = []
        for item in results[: query.limit]:
            if isinstance(item, dict) and item.get("url"):
                found.append(web_source(self.name, str(item["url"]), str(item.get("title", "")),
                                        str(item.get("content", "")),
                                        published=parse_date(item.get("publishedDate"))))
        return found


def _search_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/search"


def _search_params(text: str, intent: QueryIntent) -> dict[str, str]:
    params = {"q": text, "format": "json", "language": intent.language, "safesearch": "1"}
    if intent.time_constraint is not None and intent.time_constraint.recent:
        params["time_range"] = "month"
    return params


def _open(config: SourcesSettings, session: aiohttp.ClientSession,
          policy: PolicyFactory) -> AbstractAsyncContextManager[SearchSource]:
    return nullcontext(SearxngSource(session, policy("searxng"), config.searxng_url or ""))


def _probe(config: SourcesSettings) -> SourceProbe:
    return SourceProbe(_search_url(config.searxng_url or ""),
                       _search_params(PROBE_QUERY, QueryIntent()))


SOURCE = SourceSpec(
    name=SearxngSource.name, label=SearxngSource.label, setting="sources.searxng_url",
    enabled=lambda config: bool(config.searxng_url), off_reason="not configured",
    endpoint=lambda config: config.searxng_url, open=_open, probe=_probe)
