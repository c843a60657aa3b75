"""Entry points and wiring."""
