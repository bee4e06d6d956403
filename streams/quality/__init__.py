"""Windowed quality metrics: window math, table keys, in-memory window counts."""
