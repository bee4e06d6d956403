"""The ``learnstream`` command line: one module per command group; ``main`` is the entry point."""
