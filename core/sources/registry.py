"""Every remote search source, in the order `researchbot check` lists them: the composition
root opens the ones the settings switch on, and check probes each, from this one list."""

from __future__ import annotations

from core.sources import arxiv, exa, pubmed, searxng, tavily, wikipedia
from core.sources.protocol import SourceSpec

SOURCES: tuple[SourceSpec, ...] = (wikipedia.SOURCE, arxiv.SOURCE, pubmed.SOURCE,
                                   searxng.SOURCE, tavily.SOURCE, exa.SOURCE)
