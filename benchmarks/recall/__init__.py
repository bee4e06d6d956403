"""The privacy recall benchmark's parts: planted values, sentence templates, the scorer.

``benchmarks/privacy_recall.py`` runs them; nothing here reads a clock or the network.
"""
