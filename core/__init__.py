"""Core research pipeline."""
