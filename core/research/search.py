"""Search stage: every planned query to its sources in parallel, each call under a timeout."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from core.errors import CredentialRefusedError, SourceError
from core.metrics import SEARCH_FAILURES
from core.models import QueryIntent, SearchControls, Source, SourceFailure, SourceSearch
from core.research.planning import ResearchPlan, route_sources
from core.sources.controls import kept, left_out, unapplied
from core.sources.failure_kinds import failure_kind
from core.sources.protocol import (
    CALL_DEADLINE,
    Capabilities,
    SearchQuery,
    SearchSource,
    SourceKind,
)
from core.sources.trust import blocked, source_prior

if TYPE_CHECKING:  # web pages are read only when web sources are on; aiohttp with them
    from core.sources.pages import PageReader

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchScope:
    """What one request may search: its sources (the knowledge base alone for a local-only
    tenant), the reader of web pages (none then), and how web sources are trusted."""

    sources: Mapping[str, SearchSource]
    pages: PageReader | None = None
    allow: tuple[str, ...] = ()
    block: tuple[str, ...] = ()
    controls: SearchControls = field(default_factory=SearchControls)

    def capabilities(self) -> dict[str, Capabilities]:
        return {name: source.capabilities for name, source in self.sources.items()}

    def within_controls(self, plan: ResearchPlan, subject: str,
                        intent: QueryIntent) -> ResearchPlan:
        """Each query's sources kept to those the request's controls route to: a model's
        plan may name others."""
        if self.controls.default:
            return plan
        routed = route_sources(subject, self.capabilities(), intent, self.controls)
        return ResearchPlan(queries=[
            q.model_copy(update={"sources": [n for n in q.sources if n in routed] or routed})
            for q in plan.queries])

    @property
    def local_only(self) -> bool:
        """Only the tenant's own documents are searched."""
        return all(source.capabilities.kind == SourceKind.LOCAL
                   for source in self.sources.values())

    def prior(self, intent: QueryIntent) -> Callable[[Source], float]:
        return lambda source: source_prior(source, intent, self.allow)

    def usable(self, results: list[list[Source]]) -> list[list[Source]]:
        """The result lists without sources from blocked domains."""
        return [[s for s in hits if not blocked(s, self.block)] for hits in results]

    async def read_pages(self, question: str, sources: list[Source]
                         ) -> tuple[list[Source], list[str], int]:
        """`sources` with web pages read in place of their snippets, the reasons pages were
        not read, and how many were."""
        if self.pages is None:
            return sources, [], 0
        snippets = {name for name, source in self.sources.items()
                    if source.capabilities.snippets}
        read, unread = await self.pages.read(question, sources, snippets)
        return read, unread, sum(1 for old, new in zip(sources, read, strict=True)
                                 if new is not old)


class SearchOutcome(BaseModel):
    """Ranked result lists (one a query and source) and what failed."""

    results: list[list[Source]] = Field(default_factory=list)
    failures: list[SourceFailure] = Field(default_factory=list)
    queries_per_source: dict[str, int] = Field(default_factory=dict)
    results_per_source: dict[str, int] = Field(default_factory=dict)
    counts_per_query: dict[str, int] = Field(default_factory=dict)  # results, all sources
    searches: list[SourceSearch] = Field(default_factory=list)  # each query to each source
    found_by: dict[str, SourceSearch] = Field(default_factory=dict)  # the first, a passage
    seconds: float = 0.0
    notes: list[str] = Field(default_factory=list)  # controls a source could not apply

    @property
    def documents(self) -> int:
        return len({s.document_id or s.id for hits in self.results for s in hits})

    @property
    def passages(self) -> int:
        return len({s.id for hits in self.results for s in hits})


async def run_search(
    plan: ResearchPlan,
    sources: Mapping[str, SearchSource],
    tenant: str,
    intent: QueryIntent,
    limit: int,
    timeout_s: float,
    controls: SearchControls | None = None,
) -> SearchOutcome:
    """Every planned query to its sources at once. Results from domains the request's
    controls refuse are dropped whatever the provider did with its filter; `notes` say which
    source found results a requested control could not limit."""
    started = time.perf_counter()
    controls = controls or SearchControls()
    calls = [
        (name, planned.text)
        for planned in plan.queries
        for name in planned.sources
        if name in sources
    ]
    outcomes = await asyncio.gather(
        *(
            _search_one(sources[name], SearchQuery(
                text=text, tenant=tenant, limit=limit, intent=intent, controls=controls),
                timeout_s)
            for name, text in calls
        )
    )
    refused = next((o for o in outcomes if isinstance(o, CredentialRefusedError)), None)
    if refused is not None:  # a key that is refused now will be refused for every question
        raise refused
    result = SearchOutcome(queries_per_source=dict(Counter(name for name, _ in calls)))
    counts: Counter[str] = Counter()
    per_query: Counter[str] = Counter({planned.text: 0 for planned in plan.queries})
    for (name, text), outcome in zip(calls, outcomes, strict=True):
        search = SourceSearch(source=name, label=sources[name].label, query=text,
                              results=len(outcome) if isinstance(outcome, list) else 0,
                              failed=not isinstance(outcome, list))
        result.searches.append(search)
        for source in outcome if isinstance(outcome, list) else []:
            result.found_by.setdefault(source.id, search)
        if isinstance(outcome, SourceFailure):
            result.failures.append(outcome.model_copy(update={"query": text}))
            SEARCH_FAILURES.labels(name, outcome.kind).inc()
            # Not the query: it quotes the question, which logs leave out.
            log.warning("source %s failed: %s", name, outcome.kind)
        elif not isinstance(outcome, CredentialRefusedError):
            found = kept(outcome, controls)
            result.results.append(found)
            counts[name] += len(found)
            per_query[text] += len(found)
            notes = _notes(sources[name], controls, len(outcome), len(found))
            result.notes.extend(n for n in notes if n not in result.notes)
    result.counts_per_query = dict(per_query)
    result.results_per_source = dict(counts)
    result.seconds = time.perf_counter() - started
    return result


def _notes(source: SearchSource, controls: SearchControls, returned: int,
           admitted: int) -> list[str]:
    """What the answer says of one call: a control the source could not apply to results
    it found, results the domain controls left out."""
    notes = unapplied(source.label, source.capabilities, controls) if admitted else []
    return [*notes, left_out(controls)] if admitted < returned else notes


async def _search_one(
    source: SearchSource, query: SearchQuery, timeout_s: float
) -> list[Source] | SourceFailure | CredentialRefusedError:
    # This stage owns the call's time: the source's policy fits its retries inside it.
    CALL_DEADLINE.set(asyncio.get_running_loop().time() + timeout_s)
    try:
        async with asyncio.timeout(timeout_s):
            return await source.search(query)
    except TimeoutError:
        return SourceFailure(source=source.name, query=query.text, label=source.label,
                             reason=f"timed out after {timeout_s:g} s", kind="timeout")
    except SourceError as error:
        setting = source.capabilities.key_setting
        if setting is not None and error.status in (401, 403):
            return CredentialRefusedError(
                f"{setting}: {source.label} refused the key (HTTP {error.status}): set a "
                f"valid key in {setting}, or unset it to research without this source")
        return SourceFailure(source=source.name, query=query.text, label=source.label,
                             reason=str(error), kind=failure_kind(error))

