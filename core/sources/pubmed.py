"""PubMed through NCBI E-utilities: esearch for ids, esummary for titles, dates and DOIs,
efetch for the abstracts. No key needed; an API key raises NCBI's rate limit."""

from __future__ import annotations

import re
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any

import aiohttp

from core.config import SourcesSettings
from core.errors import SourceError
from core.models import ContentType, Recency, Source
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

DEFAULT_API = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"


class PubMedSource:
    name = "pubmed"
    label = "PubMed"
    capabilities = Capabilities(SourceKind.SPECIALIST, topics=frozenset({"biomedical"}),
                                dates=True, content=frozenset({ContentType.ACADEMIC}),
                                site="pubmed.ncbi.nlm.nih.gov")

    def __init__(self, session: aiohttp.ClientSession, policy: SourcePolicy,
                 api_url: str = DEFAULT_API, api_key: str | None = None) -> None:
        self._session = session
        self._policy = policy
        self._api_url = api_url.rstrip("/")
        self._key = _key_params(api_key)

    async def search(self, query: SearchQuery) -> list[Source]:
        limit = min(query.limit, 20)

        async def fetch() -> list[dict[str, Any]]:
            url, params = _esearch(self._api_url, self._key, query.text, limit,
                                   query.recency)
            found = await self._policy.get_json(self._session, url, params)
            ids = _ids(found)[:limit]
            if not ids:
                return []
            await self._policy.pace()  # NCBI counts every request, not every search
            summary = await self._policy.get_json(
                self._session, f"{self._api_url}/esummary.fcgi",
                {"db": "pubmed", "id": ",".join(ids), "retmode": "json", **self._key})
            await self._policy.pace()
            abstracts = parse_abstracts(await self._policy.get_text(
                self._session, f"{self._api_url}/efetch.fcgi",
                {"db": "pubmed", "id": ",".join(ids), "retmode": "xml",
                 "rettype": "abstract", **self._key}))
            result = summary.get("result") if isinstance(summary, dict) else None
            if not isinstance(result, dict):
                raise SourceError(self.name, "esummary: unexpected response shape")
            return [{**result.get(pmid, {}), "pmid": pmid, "abstract": abstracts.get(pmid, "")}
                    for pmid in ids if isinstance(result.get(pmid), dict)]

        records = await self._policy.call(f"{query.text}|{limit}|{query.recency}", fetch)
        sources = []
        for record in records:
            text = record["abstract"] or ""
            if not text:
                continue  # no abstract: nothing to cite
            doi = next((a.get("value") for a in record.get("articleids", [])
                        if isinstance(a, dict) and a.get("idtype") == "doi"), None)
            authors = [a.get("name", "") for a in record.get("authors", []) if isinstance(a, dict)]
            journal = record.get("fulljournalname") or record.get("source") or ""
            sources.append(web_source(
                self.name, f"https://pubmed.ncbi.nlm.nih.gov/{record['pmid']}/",
                str(record.get("title", "")), text,
                published=parse_date(record.get("sortpubdate", "")[:10].replace("/", "-")
                                     or record.get("pubdate")),
                author=", ".join(a for a in authors if a)[:300] or None,
                identifiers={"PMID": record["pmid"], "DOI": doi or "", "in": journal}))
        return sources


def _esearch(api_url: str, key: dict[str, str], term: str, limit: int,
             recency: Recency | None = None) -> tuple[str, dict[str, str]]:
    """The URL and parameters of the search for PMIDs, the first request of a search; a
    recency limit is a publication-date range (E-utilities' datetype pdat)."""
    params = {"db": "pubmed", "term": term, "retmode": "json", "retmax": str(limit),
              "sort": "relevance", **key}
    if recency is not None:
        params.update(datetype="pdat", mindate=f"{since(recency):%Y/%m/%d}",
                      maxdate=f"{datetime.now(UTC):%Y/%m/%d}")
    return f"{api_url}/esearch.fcgi", params


def _key_params(api_key: str | None) -> dict[str, str]:
    return {"api_key": api_key} if api_key else {}


def _key(config: SourcesSettings) -> str | None:
    return config.pubmed_api_key.get_secret_value() if config.pubmed_api_key else None


def _open(config: SourcesSettings, session: aiohttp.ClientSession,
          policy: PolicyFactory) -> AbstractAsyncContextManager[SearchSource]:
    key = _key(config)
    # NCBI allows 10 requests a second with a key, 3 without.
    return nullcontext(PubMedSource(session, policy("pubmed", 10.0 if key else None),
                                    config.pubmed_api, key))


def _probe(config: SourcesSettings) -> SourceProbe:
    return SourceProbe(*_esearch(config.pubmed_api.rstrip("/"), _key_params(_key(config)),
                                 PROBE_QUERY, 1))


SOURCE = SourceSpec(
    name=PubMedSource.name, label=PubMedSource.label, setting="endpoints.pubmed_api",
    enabled=lambda config: config.pubmed, off_reason="sources.pubmed = false",
    endpoint=lambda config: config.pubmed_api, open=_open, probe=_probe)


def _ids(found: Any) -> list[str]:
    ids = found.get("esearchresult", {}).get("idlist") if isinstance(found, dict) else None
    if not isinstance(ids, list):
        raise SourceError("pubmed", "esearch: unexpected response shape")
    return [str(i) for i in ids if str(i).isdigit()]


def parse_abstracts(xml: str) -> dict[str, str]:
    """PMID -> abstract text, from efetch's PubmedArticleSet XML."""
    root = parse_xml("pubmed", xml)
    found = {}
    for article in root.iter("PubmedArticle"):
        pmid = article.findtext(".//MedlineCitation/PMID") or ""
        parts = []
        for piece in article.iter("AbstractText"):
            text = "".join(piece.itertext()).strip()
            label = piece.get("Label")
            parts.append(f"{label}: {text}" if label and text else text)
        if pmid and parts:
            found[pmid] = re.sub(r"\s+", " ", " ".join(p for p in parts if p)).strip()
    return found
