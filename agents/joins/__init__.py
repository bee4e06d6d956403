"""The join's Kafka side: the agents that read the MPLP inputs, the tables behind the join,
the sweep, and the pairs miner. What they decide lives in streams/join/."""
