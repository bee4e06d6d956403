"""``python -m learnstream``: the ``learnstream`` command."""

from learnstream.agents.cli import main

if __name__ == "__main__":
    main()
