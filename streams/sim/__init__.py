"""Simulated traffic for the demo, the tests and the benchmarks; the worker never imports it.

``simulate`` makes realistic MPLP events and ``workload`` a known workload and its verifier.
The ``learnstream demo`` command that publishes them (``streams/io/demo.py``,
``demo_runtime.py``, ``worker_process.py``) talks to a broker, so it lives in ``io/``.
"""
