"""Simulated traffic for the demo, the tests and the benchmarks; the worker never imports it.

``simulate`` makes realistic MPLP events, ``workload`` a known workload and its verifier,
``demo_runtime`` / ``demo`` the ``learnstream demo`` command, and ``worker_process`` runs a
worker as a child process (the demo starts one the way a user would, never in-process).
"""
