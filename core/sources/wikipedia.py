"""Wikipedia through the MediaWiki API: full-text search, then plain-text extracts. No key;
the wiki's language follows the question's."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

import aiohttp

from core.config import SourcesSettings
from core.errors import SourceError
from core.models import Source
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

DEFAULT_API = "https://{language}.wikipedia.org/w/api.php"


class WikipediaSource:
    name = "wikipedia"
    label = "Wikipedia"
    capabilities = Capabilities(SourceKind.REFERENCE, site="wikipedia.org")  # no date filter

    def __init__(self, session: aiohttp.ClientSession, policy: SourcePolicy,
                 api_url: str = DEFAULT_API) -> None:
        self._session = session
        self._policy = policy
        self._api_url = api_url

    async def search(self, query: SearchQuery) -> list[Source]:
        language = query.intent.language if query.intent.language.isalpha() else "en"
        api = self._api_url.format(language=language[:3].lower())
        limit = min(query.limit, 10)

        async def fetch() -> list[dict[str, Any]]:
            found = await self._policy.get_json(self._session, api,
                                                _search_params(query.text, limit))
            hits = _records(_path(found, "query", "search"))[:limit]
            if not hits:
                return []
            ids = [str(hit["pageid"]) for hit in hits if "pageid" in hit]
            await self._policy.pace()
            pages = await self._policy.get_json(self._session, api, {
                "action": "query", "prop": "extracts|info", "pageids": "|".join(ids),
                "explaintext": "1", "exintro": "0", "exchars": "4000", "inprop": "url",
                "format": "json", "formatversion": "2"})
            by_id = {str(p.get("pageid")): p for p in _records(_path(pages, "query", "pages"))}
            return [{**hit, **by_id.get(str(hit.get("pageid")), {})} for hit in hits]

        results = await self._policy.call(f"{language}|{query.text}|{limit}", fetch)
        sources = []
        for page in results:
            url = page.get("fullurl") or page.get("canonicalurl")
            text = page.get("extract") or ""
            if url and text:
                sources.append(web_source(self.name, url, str(page.get("title", "")), text,
                                          published=parse_date(page.get("timestamp")
                                                               or page.get("touched"))))
        return sources


def _search_params(text: str, limit: int) -> dict[str, str]:
    return {"action": "query", "list": "search", "srsearch": text, "srlimit": str(limit),
            "format": "json", "formatversion": "2", "srprop": "snippet|timestamp"}


def _open(config: SourcesSettings, session: aiohttp.ClientSession,
          policy: PolicyFactory) -> AbstractAsyncContextManager[SearchSource]:
    return nullcontext(WikipediaSource(session, policy("wikipedia"), config.wikipedia_api))


def _probe(config: SourcesSettings) -> SourceProbe:
    return SourceProbe(config.wikipedia_api.format(language="en"),
                       _search_params(PROBE_QUERY, 1))


SOURCE = SourceSpec(
    name=WikipediaSource.name, label=WikipediaSource.label, setting="endpoints.wikipedia_api",
    enabled=lambda config: config.wikipedia, off_reason="sources.wikipedia = false",
    endpoint=lambda config: config.wikipedia_api, open=_open, probe=_probe)


def _records(items: list[Any] | None) -> list[dict[str, Any]]:
    """The objects of a result list (anything else in it is not a page)."""
    return [item for item in items or [] if isinstance(item, dict)]


def _path(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            raise SourceError("wikipedia", "unexpected response shape")
        if "error" in data:
            raise SourceError("wikipedia", str(data["error"].get("info", "API error"))[:200])
        data = data.get(key)
    if data is not None and not isinstance(data, list):
        raise SourceError("wikipedia", "unexpected response shape")
    return data
