"""Exa's meaning-based web search through its HTTP API (POST /search with the x-api-key
header), on the API session and the policy's capped, redirect-refusing path, like every
keyless source: exa-py would bring its own client (requests) past both. Asked explanation
and conceptual questions, and for news and research papers."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

import aiohttp

from core.config import SourcesSettings
from core.errors import SourceError
from core.models import ContentType, Source
from core.sources.controls import since
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

DEFAULT_API = "https://api.exa.ai"
TEXT_CHARACTERS = 4000  # of each page's text: about what Wikipedia's extracts give
_CATEGORIES = {ContentType.NEWS: "news", ContentType.ACADEMIC: "research paper"}


class ExaSource:
    name = "exa"
    label = "the web (Exa)"
    capabilities = Capabilities(SourceKind.WEB, preference=-1, key_setting="sources.exa_api_key",
                                dates=True, semantic=True,
                                content=frozenset({ContentType.NEWS, ContentType.ACADEMIC}))

    def __init__(self, session: aiohttp.ClientSession, policy: SourcePolicy, api_key: str,
                 api_url: str = DEFAULT_API) -> None:
        self._session = session
        self._policy = policy
        self._headers = {"x-api-key": api_key}
        self._url = _search_url(api_url)

    async def search(self, query: SearchQuery) -> list[Source]:
        limit = min(query.limit, 20)
        body = search_body(query, limit)

        async def fetch() -> Any:
            return await self._policy.post_json(self._session, self._url, body, self._headers)

        data = await self._policy.call(repr(sorted(body.items())), fetch)
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SourceError(self.name, "the response was not a search result")
        return [hit for item in results[:limit] if (hit := _hit(item)) is not None]


def search_body(query: SearchQuery, limit: int) -> dict[str, Any]:
    """The search with the request's controls: a publication-date start, its domains, and
    Exa's news or research-paper category."""
    body: dict[str, Any] = {
        "query": query.text, "numResults": limit, "type": "auto",
        "contents": {"text": {"maxCharacters": TEXT_CHARACTERS}, "highlights": True}}
    controls = query.controls
    if query.recency is not None:
        body["startPublishedDate"] = since(query.recency).strftime("%Y-%m-%dT00:00:00.000Z")
    if controls.include_domains:
        body["includeDomains"] = list(controls.include_domains)
    if controls.exclude_domains:
        body["excludeDomains"] = list(controls.exclude_domains)
    if query.content_type in _CATEGORIES:
        body["category"] = _CATEGORIES[query.content_type]
    return body


def _hit(item: Any) -> Source | None:
    """A result as a Source: its text, else its highlights; None without a URL or text."""
    if not isinstance(item, dict) or not item.get("url"):
        return None
    highlights = item.get("highlights")
    text = item.get("text") or (" ".join(h for h in highlights if isinstance(h, str))
                                if isinstance(highlights, list) else "")
    if not isinstance(text, str) or not text.strip():
        return None
    published = item.get("publishedDate")
    author = item.get("author")
    return web_source("exa", str(item["url"]), str(item.get("title") or ""), text,
                      published=parse_date(published if isinstance(published, str) else None),
                      author=author[:300] if isinstance(author, str) and author else None)


def _search_url(api_url: str) -> str:
    return api_url.rstrip("/") + "/search"


def _key(config: SourcesSettings) -> str:
    return config.exa_api_key.get_secret_value() if config.exa_api_key else ""


def _open(config: SourcesSettings, session: aiohttp.ClientSession,
          policy: PolicyFactory) -> AbstractAsyncContextManager[SearchSource]:
    return nullcontext(ExaSource(session, policy("exa"), _key(config), config.exa_api))


def _probe(config: SourcesSettings) -> SourceProbe:
    return SourceProbe(_search_url(config.exa_api),
                       body={"query": PROBE_QUERY, "numResults": 1},
                       headers={"x-api-key": _key(config)})


SOURCE = SourceSpec(
    name=ExaSource.name, label=ExaSource.label, setting="sources.exa_api_key",
    enabled=lambda config: bool(_key(config)), off_reason="not configured",
    endpoint=lambda config: config.exa_api, open=_open, probe=_probe)
