"""Answer synthesis: an interface and its implementations."""

from core.synthesis.base import Draft, Synthesizer

__all__ = ["Draft", "Synthesizer"]
