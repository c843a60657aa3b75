"""Entry points (the `researchbot` command, the Slack and Discord bots, the API server, the
worker), the settings tree, and the one composition root (wiring)."""
