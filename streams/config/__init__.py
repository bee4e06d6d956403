"""Settings from LEARNSTREAM_* variables, what `learnstream config` prints, user errors."""
