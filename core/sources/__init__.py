"""Search sources: each implements `SearchSource` and receives its clients from outside.

    protocol        SearchSource, Capabilities, SearchQuery; SourceSpec, what a source declares
    registry        SOURCES: every remote source's SourceSpec, for the wiring and `check`
    local           the tenant's knowledge base as a source
    wikipedia, arxiv, pubmed, searxng, tavily, exa   one remote source each, with its SOURCE spec
    controls        a request's search controls around every source (domains, dates, notes)
    search_hits     a hit as a Source: canonical URLs, ids issued by code, dates
    trust           how much a hit is trusted before reading it (domain, date)
    policy          SourcePolicy: what every remote call goes through (limits, retries, cache)
    breaker         this process's circuit breaker
    guards          the rate limit and breaker a policy consults (SourceGuard, LocalGuard)
    breaker_file    the breakers shared by the processes of one data dir (a SQLite file)
    shared_limits   the same, shared by every process through Redis
    single_flight   identical calls under way at once, made once
    api_requests    the capped, redirect-checked GET to a source's API; JSON and XML parsing
    failure_kinds   the one classifier of SourceErrors (outage notes, metrics, paused sources)
    pages           reading fetched pages into text and the passage that answers
"""

from core.sources.protocol import SearchQuery, SearchSource

__all__ = ["SearchQuery", "SearchSource"]
