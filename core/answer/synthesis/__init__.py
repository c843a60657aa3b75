"""Answer synthesis: an interface and its implementations."""

from core.answer.synthesis.base import Draft, Synthesizer

__all__ = ["Draft", "Synthesizer"]
