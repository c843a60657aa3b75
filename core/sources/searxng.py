"""A SearXNG instance (the user's own metasearch engine) through its JSON API. No key."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

import aiohttp

from core.config import SourcesSettings
from core.errors import SourceError
from core.models import ContentType, QueryIntent, Recency, Source
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
    capabilities = Capabilities(SourceKind.WEB, snippets=True, preference=1, dates=True,
                                content=frozenset({ContentType.NEWS, ContentType.ACADEMIC}))

    def __init__(self, session: aiohttp.ClientSession, policy: SourcePolicy,
                 base_url: str) -> None:
        self._session = session
        self._policy = policy
        self._url = _search_url(base_url)

    async def search(self, query: SearchQuery) -> list[Source]:
        params = _search_params(query.text, query.intent, query.recency, query.content_type)

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


_CATEGORIES = {ContentType.NEWS: "news", ContentType.ACADEMIC: "science"}


def _search_params(text: str, intent: QueryIntent, recency: Recency | None = None,
                   content: ContentType = ContentType.GENERAL) -> dict[str, str]:
    """SearXNG's time_range takes day, week, month and year; its news and science
    categories serve those kinds of content. Domains have no parameter: the search stage
    drops results from refused ones."""
    params = {"q": text, "format": "json", "language": intent.language, "safesearch": "1"}
    if recency is not None:
        params["time_range"] = recency.value
    if content in _CATEGORIES:
        params["categories"] = _CATEGORIES[content]
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
