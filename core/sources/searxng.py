"""A SearXNG instance (the user's own metasearch engine) through its JSON API. No key."""

from __future__ import annotations

from typing import Any

import aiohttp

from core.errors import SourceError
from core.models import Source
from core.sources.policy import SourcePolicy
from core.sources.protocol import Capabilities, SearchQuery, SourceKind
from core.sources.search_hits import parse_date, web_source


class SearxngSource:
    name = "searxng"
    label = "the web (SearXNG)"
    capabilities = Capabilities(SourceKind.WEB, snippets=True, preference=1)

    def __init__(self, session: aiohttp.ClientSession, policy: SourcePolicy,
                 base_url: str) -> None:
        self._session = session
        self._policy = policy
        self._url = base_url.rstrip("/") + "/search"

    async def search(self, query: SearchQuery) -> list[Source]:
        params = {"q": query.text, "format": "json", "language": query.intent.language,
                  "safesearch": "1"}
        if query.intent.time_constraint is not None and query.intent.time_constraint.recent:
            params["time_range"] = "month"

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
