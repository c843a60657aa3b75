"""A request's search controls as the search stage applies them around every source: which
sources a request's domains leave worth asking, results from refused domains dropped (a
provider may ignore its filter), the date a recency limit starts from, and what the answer
must say when a source could not apply a control."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.models import ContentType, Recency, SearchControls, Source
from core.sources.protocol import Capabilities, SourceKind
from core.sources.trust import on_domain


def admits(domain: str, controls: SearchControls) -> bool:
    """A result from `domain` may be kept: not excluded, and included when a list is given."""
    if on_domain(domain, controls.exclude_domains):
        return False
    return not controls.include_domains or on_domain(domain, controls.include_domains)


def worth_asking(capabilities: Capabilities, controls: SearchControls) -> bool:
    """A source whose every result comes from one site is not asked when that site is
    refused: everything it found would be dropped."""
    return capabilities.site is None or admits(capabilities.site, controls)


def kept(found: list[Source], controls: SearchControls) -> list[Source]:
    """The results the domain controls admit; a result without a domain (the knowledge
    base's own documents) is always kept."""
    if not controls.include_domains and not controls.exclude_domains:
        return found
    return [s for s in found if not s.metadata.domain or admits(s.metadata.domain, controls)]


def left_out(controls: SearchControls) -> str:
    """What the answer says when the domain controls dropped results: the answer may be
    thinner for it."""
    if controls.include_domains:
        return (f"Only results from {', '.join(controls.include_domains)} were kept, as "
                "asked; results from other sites were left out.")
    return f"Results from {', '.join(controls.exclude_domains)} were left out, as asked."


def since(recency: Recency, now: datetime | None = None) -> datetime:
    """Where a recency limit starts."""
    return (now or datetime.now(UTC)) - timedelta(days=recency.days or 0)


def unapplied(label: str, capabilities: Capabilities, controls: SearchControls) -> list[str]:
    """What the answer must say of a source that found results its request's controls could
    not limit: only the controls the request asked for are named."""
    notes = []
    asked = controls.recency
    if asked is not None and asked is not Recency.ANY and not capabilities.dates:
        notes.append(f"{_capital(label)} cannot filter by date; its results were not limited "
                     f"to {asked.phrase}.")
    kind = controls.content_type
    if kind is not ContentType.GENERAL and kind not in capabilities.content \
            and capabilities.kind is not SourceKind.LOCAL:  # the user's own documents
        notes.append(f"{_capital(label)} cannot limit its results to {kind.value} content; "
                     f"they were searched as general.")
    return notes


def _capital(label: str) -> str:
    return label[:1].upper() + label[1:]
