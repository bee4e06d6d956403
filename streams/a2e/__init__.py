"""A2E *learn* capability, pure core: wire models, samples, strategies, stats, replay, client.

Nothing here imports Faust or a Kafka client; the agents and HTTP views build on it.
"""
