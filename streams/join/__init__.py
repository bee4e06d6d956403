"""The join of decisions, corrections and outcomes with plan state (docs/architecture.md §5)."""
