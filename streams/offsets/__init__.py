"""Offsets: what was processed per partition, end-offset rounds, the key partitioner."""
