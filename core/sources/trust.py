"""How much to trust a source before reading it: its domain (official and scholarly up,
content farms down, the user's allow and block lists first) and, for time-bound questions,
its date. A prior in [0.5, 1.25] that multiplies a passage's ranking score."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime

from core.models import QueryIntent, Source

SCHOLARLY = frozenset({
    "arxiv.org", "pubmed.ncbi.nlm.nih.gov", "ncbi.nlm.nih.gov", "nih.gov", "who.int",
    "nature.com", "science.org", "sciencedirect.com", "springer.com", "link.springer.com",
    "wiley.com", "onlinelibrary.wiley.com", "thelancet.com", "nejm.org", "bmj.com",
    "cell.com", "plos.org", "journals.plos.org", "acm.org", "dl.acm.org", "ieee.org",
    "ieeexplore.ieee.org", "jstor.org", "cochranelibrary.com", "europepmc.org",
    "semanticscholar.org", "doi.org", "python.org", "docs.python.org", "w3.org", "ietf.org",
    "rfc-editor.org", "iso.org", "europa.eu", "un.org", "oecd.org", "worldbank.org",
})
REFERENCE = frozenset({"wikipedia.org", "britannica.com", "stanford.edu", "mozilla.org",
                       "developer.mozilla.org"})
CONTENT_FARMS = frozenset({
    "ehow.com", "answers.com", "wikihow.com", "quora.com", "pinterest.com", "reddit.com",
    "facebook.com", "twitter.com", "x.com", "tiktok.com", "instagram.com", "linkedin.com",
    "buzzfeed.com", "medium.com", "ezinearticles.com", "hubpages.com", "answers.yahoo.com",
    "scribd.com", "slideshare.net", "coursehero.com", "chegg.com",
})
_OFFICIAL_SUFFIXES = (".gov", ".edu", ".int", ".mil", ".ac.uk", ".gov.uk", ".europa.eu")


def on_domain(domain: str, names: Collection[str]) -> bool:
    """`domain` is one of `names` or a subdomain of one."""
    return any(domain == name or domain.endswith("." + name) for name in names)


def blocked(source: Source, block: Collection[str]) -> bool:
    domain = source.metadata.domain or ""
    return bool(domain) and on_domain(domain, block)


def domain_quality(domain: str, allow: Collection[str] = ()) -> float:
    """0-1: 1 for the user's allow list, 0.9 official or scholarly, 0.75 reference works,
    0.25 content farms and social media, 0.5 otherwise."""
    if not domain:
        return 0.5
    if on_domain(domain, allow):
        return 1.0
    if on_domain(domain, SCHOLARLY) or domain.endswith(_OFFICIAL_SUFFIXES):
        return 0.9
    if on_domain(domain, REFERENCE):
        return 0.75
    if on_domain(domain, CONTENT_FARMS):
        return 0.25
    return 0.5


def source_prior(source: Source, intent: QueryIntent, allow: Collection[str] = (),
                 now: datetime | None = None) -> float:
    """The multiplier for `source`'s ranking score. Local documents are neutral (1.0)."""
    if not source.url:
        return 1.0
    prior = 0.75 + 0.5 * domain_quality(source.metadata.domain or "", allow)
    constraint = intent.time_constraint
    published = source.metadata.published_at
    if constraint is not None and published is not None:
        year = published.year
        before = constraint.start_year is not None and year < constraint.start_year
        after = constraint.end_year is not None and year > constraint.end_year
        if before or after:
            prior *= 0.8
        elif constraint.recent:
            age = ((now or datetime.now(UTC)) - published).days / 365
            prior *= 1.1 if age <= 1 else 0.85 if age > 3 else 1.0
    return max(0.5, min(1.25, prior))
