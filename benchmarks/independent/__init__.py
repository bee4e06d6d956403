"""Privacy measured on text this project did not write (issue 42, step 1).

Precision on real technical text (Debian package descriptions, PyPI project summaries,
docstrings of installed libraries), shipped as frozen data files in
``benchmarks/data/independent/``; recall on presidio-evaluator's sentence templates filled
by its own generator, plus names in four non-Latin scripts and the case, @handle and
username forms. ``python -m benchmarks.independent --help`` runs it; ``build`` regenerates
the data files from the machine's sources.

Round 2 (``benchmarks/data/independent2/``, ``--round 2``), built by ``build2`` once round
1's test split was spent: the same kind of corpus from sources round 1 never read, the API
docs language toolchains ship (``toolchains.py``).
"""
