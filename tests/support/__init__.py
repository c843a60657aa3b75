"""What tests and benchmarks share: local fakes of the services the bot talks to, harnesses
that run its front ends and processes, the test corpus, and the test servers' addresses.
Importing it installs nothing: the network guard is tests/conftest.py's, for tests only."""

from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
