"""The web: one guarded path for every outbound request (net: private addresses refused,
redirects checked hop by hop, size caps) and fetching pages politely within it (fetch).
Imports nothing above core.store: reading pages into passages is core.sources.pages."""
