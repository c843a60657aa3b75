"""Search sources: each implements `SearchSource` and receives its clients from outside."""

from core.sources.protocol import SearchQuery, SearchSource

__all__ = ["SearchQuery", "SearchSource"]
