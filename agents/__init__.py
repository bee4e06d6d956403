"""Faust agents: thin loops that decode, look up a table, call a builder, send.

``learnstream.agents.wiring.wire`` composes them into a worker. This file imports nothing, so the
CLI (``learnstream.agents.cli.main``) starts without loading Faust or Presidio.
"""
