"""Samples and pairs as trainers read them: rows, formatters, files."""
