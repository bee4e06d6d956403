"""``python -m learnstream``: the ``learnstream`` command."""

from learnstream.agents.cli.main import main

if __name__ == "__main__":
    main()
