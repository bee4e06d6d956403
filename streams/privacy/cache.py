"""A bounded cache of anonymized strings, keyed by a keyed hash of the raw text.

The same strings recur across a plan's samples (its objective and steps are in the
intent_resolution, confirm_decision and pipeline_outcome samples), so each distinct string
is anonymized once. Keys are BLAKE2b digests keyed by the privacy configuration: the cache
never holds a raw text, and two configurations never share an entry.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["DigestCache"]

V = TypeVar("V")


class DigestCache(Generic[V]):
    """Keep the last ``size`` results, looked up by a digest of their text."""

    def __init__(self, size: int, config_key: bytes) -> None:
        """Start empty; ``config_key`` separates configurations (at most 64 bytes)."""
        self._size = size
        self._key = config_key
        self._items: OrderedDict[bytes, V] = OrderedDict()
        self.hits = 0  # lookups answered from the cache, for benchmarks and tests
        self.misses = 0

    def digest(self, text: str) -> bytes:
        """Return the cache key of a text."""
        data = text.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, digest_size=16, key=self._key).digest()

    def get(self, key: bytes) -> V | None:
        """Return the cached result for key, marking it recently used, or None."""
        value = self._items.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
            self._items.move_to_end(key)
        return value

    def __contains__(self, key: object) -> bool:
        """Tell whether a result is held, without counting a lookup or marking it used."""
        return key in self._items

    def put(self, key: bytes, value: V) -> None:
        """Store a result, dropping the least recently used one beyond the size."""
        self._items[key] = value
        if len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        """Return how many results are held."""
        return len(self._items)
