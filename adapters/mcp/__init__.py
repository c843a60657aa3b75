"""researchbot as an MCP server (server.py)."""
