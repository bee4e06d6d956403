"""learnstream: MPLP agent feedback on Kafka, turned into anonymized LearningSamples.

Everything learnstream installs imports under this one name: ``learnstream.streams`` (the
broker-free core), ``learnstream.agents`` (the Faust worker and the CLI) and the schema files
in ``learnstream/schemas``. In the repository those three live at the top as ``streams/``,
``agents/`` and ``schemas/``; ``learnstream/`` holds links to them, so a checkout, an editable
install and the wheel all import the same names (docs/architecture.md, "One namespace").
"""

from typing import Any


def __getattr__(name: str) -> Any:
    # ``learnstream.__version__`` reads the installed metadata on first use only, so that
    # importing a submodule (every CLI start) does not pay for importlib.metadata.
    if name != "__version__":
        raise AttributeError(f"module 'learnstream' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("learnstream")
    except PackageNotFoundError:  # a checkout that was never installed
        return "0+unknown"
