"""Bad input: the one exception type with its reason code, and the dead-letter record."""
