"""Kafka's default partitioner (pure): which partition a keyed record goes to.

Java clients, aiokafka and Faust all place a keyed record on partition
``(murmur2(key) & 0x7fffffff) % partitions``. The sweeper needs that number to know which
changelog partition a plan's state went to; computing it here keeps the core free of any
Kafka client.
"""

from __future__ import annotations

__all__ = ["murmur2", "partition_for"]

_SEED = 0x9747B28C
_M = 0x5BD1E995  # mixing constant of MurmurHash2
_MASK = 0xFFFFFFFF  # Java ints are 32 bits: every product wraps around


def _mix(word: int) -> int:
    word = (word * _M) & _MASK
    word ^= word >> 24
    return (word * _M) & _MASK


def _signed(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


def murmur2(data: bytes) -> int:
    """Return the 32-bit MurmurHash2 of ``data`` as Kafka's Java client computes it (signed)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    body = length - length % 4
    for i in range(0, body, 4):
        h = ((h * _M) & _MASK) ^ _mix(int.from_bytes(data[i : i + 4], "little"))
    tail = data[body:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return _signed(h)


def partition_for(key: bytes, partitions: int) -> int:
    """Return the partition Kafka's default partitioner gives a record keyed ``key``."""
    if partitions < 1:
        raise ValueError("partitions must be 1 or more")
    return (murmur2(key) & 0x7FFFFFFF) % partitions
