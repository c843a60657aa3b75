"""Helpers shared by the web and academic sources: canonical URLs, ids issued by code,
metadata from result fields."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from core.models import Source, SourceMetadata

_TRACKING = re.compile(r"^(utm_\w+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|igshid|yclid|"
                       r"_hsenc|_hsmi|ref_src|spm)$", re.I)


def canonical_url(url: str) -> str:
    """The URL without its fragment, tracking parameters, default port or a trailing slash
    on the path, with the host lower-cased: the same page found twice dedupes."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    if parts.port and not ((parts.scheme == "http" and parts.port == 80)
                           or (parts.scheme == "https" and parts.port == 443)):
        host = f"{host}:{parts.port}"
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if not _TRACKING.match(k)))
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((parts.scheme.lower(), host, path, query, ""))


def domain_of(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def web_source(provider: str, url: str, title: str, text: str, *,
               published: datetime | None = None, author: str | None = None,
               identifiers: dict[str, str] | None = None) -> Source:
    """A search hit as a Source. Its id derives from the canonical URL alone, so the same page
    found by two providers is one source. `identifiers` (PMID, DOI, arXiv id) become its
    location."""
    canonical = canonical_url(url)
    text = re.sub(r"\s+", " ", text).strip()
    metadata = SourceMetadata(domain=domain_of(canonical), published_at=published,
                              author=author, word_count=len(text.split()), provider=provider)
    location = "; ".join(f"{k} {v}" for k, v in (identifiers or {}).items() if v) or None
    return Source(
        id="web-" + hashlib.sha256(canonical.encode()).hexdigest()[:16],
        title=re.sub(r"\s+", " ", title).strip()[:300] or domain_of(canonical),
        url=canonical, location=location, snippet=text[:500], content=text,
        document_id=canonical, metadata=metadata)


def parse_date(value: str | None) -> datetime | None:
    """ISO dates and the usual API date strings ('2024 Mar 5', '2024-03-05T10:00:00Z')."""
    if not value:
        return None
    text = value.strip()
    for pattern in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d", "%Y/%m/%d",
                    "%Y %b %d", "%Y %b", "%Y", "%a, %d %b %Y %H:%M:%S %Z"):
        try:
            found = datetime.strptime(text, pattern)
        except ValueError:
            continue
        return found if found.tzinfo else found.replace(tzinfo=UTC)
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)
