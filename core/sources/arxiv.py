"""arXiv through its Atom API. No key."""

from __future__ import annotations

import re
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import UTC, datetime, timedelta

import aiohttp

from core.config import SourcesSettings
from core.models import ContentType, Source
from core.sources.api_requests import parse_xml
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

DEFAULT_API = "https://export.arxiv.org/api/query"
_ATOM = {"a": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}


class ArxivSource:
    name = "arxiv"
    label = "arXiv"
    capabilities = Capabilities(SourceKind.SPECIALIST, topics=frozenset({"research"}),
                                dates=True, content=frozenset({ContentType.ACADEMIC}),
                                site="arxiv.org")

    def __init__(self, session: aiohttp.ClientSession, policy: SourcePolicy,
                 api_url: str = DEFAULT_API) -> None:
        self._session = session
        self._policy = policy
        self._api_url = api_url

    async def search(self, query: SearchQuery) -> list[Source]:
        expression = _expression(query.text)
        if not expression:
            return []
        if query.recency is not None:
            expression = f"{expression} AND {_submitted(since(query.recency))}"
        limit = min(query.limit, 20)

        async def fetch() -> str:
            return await self._policy.get_text(self._session, self._api_url,
                                               _query_params(expression, limit))

        return parse_feed(await self._policy.call(f"{expression}|{limit}", fetch), limit)


def _expression(text: str) -> str:
    """The search expression: every word (at most 12) in any field."""
    return " AND ".join(f"all:{word}" for word in re.findall(r"[\w-]+", text)[:12])


def _submitted(start: datetime) -> str:
    """arXiv's submission-date range, in its YYYYMMDDHHMM form (GMT), from the day of
    `start` on (whole days: the same search within a day is the same call)."""
    end = datetime.now(UTC) + timedelta(days=1)
    return f"submittedDate:[{start:%Y%m%d}0000 TO {end:%Y%m%d}0000]"


def _query_params(expression: str, limit: int) -> dict[str, str]:
    return {"search_query": expression, "start": "0", "max_results": str(limit),
            "sortBy": "relevance"}


def _open(config: SourcesSettings, session: aiohttp.ClientSession,
          policy: PolicyFactory) -> AbstractAsyncContextManager[SearchSource]:
    # arXiv asks for no more than one request every few seconds.
    rate = min(config.rate_per_second, 1.0)
    return nullcontext(ArxivSource(session, policy("arxiv", rate), config.arxiv_api))


def _probe(config: SourcesSettings) -> SourceProbe:
    return SourceProbe(config.arxiv_api, _query_params(_expression(PROBE_QUERY), 1))


SOURCE = SourceSpec(
    name=ArxivSource.name, label=ArxivSource.label, setting="endpoints.arxiv_api",
    enabled=lambda config: config.arxiv, off_reason="sources.arxiv = false",
    endpoint=lambda config: config.arxiv_api, open=_open, probe=_probe)


def parse_feed(xml: str, limit: int = 20) -> list[Source]:
    """The feed's first `limit` entries as sources (a feed may hold more than asked for)."""
    root = parse_xml("arxiv", xml)
    found = []
    for entry in root.findall("a:entry", _ATOM)[:limit]:
        url = _text(entry, "a:id")
        title = _text(entry, "a:title")
        summary = _text(entry, "a:summary")
        if not url or not summary or "/api/errors" in url:
            continue
        authors = [_text(a, "a:name") for a in entry.findall("a:author", _ATOM)]
        doi = _text(entry, "arxiv:doi")
        found.append(web_source(
            "arxiv", url.replace("http://", "https://", 1), title, summary,
            published=parse_date(_text(entry, "a:published")),
            author=", ".join(a for a in authors if a)[:300] or None,
            identifiers={"arXiv": url.rsplit("/abs/", 1)[-1], "DOI": doi}))
    return found


def _text(element: object, path: str) -> str:
    child = element.find(path, _ATOM)  # type: ignore[attr-defined]
    return re.sub(r"\s+", " ", child.text or "").strip() if child is not None else ""
