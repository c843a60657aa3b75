"""The web: one guarded path for every outbound request (net: private addresses refused,
redirects checked hop by hop, size caps) and reading pages into passages (fetch)."""
