"""The join of decisions, corrections and outcomes with plan state (DESIGN §5)."""
