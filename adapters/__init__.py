"""Chat front ends."""
