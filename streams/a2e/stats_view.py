"""Every partition's skill stats, as one worker sees them: merged, and ranked for ``adapt``.

The skill-stats table keys an entry ``kind|name|source partition`` (:func:`stats_key`), so
each entry has one writer. A :class:`StatsView` holds the entries read from the table's
changelog (every partition, on every worker: agents/learning/view.py) and, at read time, the
entries of the worker's own table, which are ahead of the changelog for the partitions it
processes. Of two copies of an entry the one with more updates wins (counts only grow), so
a worker answers its own writes at once and everyone else's once its reader has them.

:func:`adapt_seed` gives a ranking's seed: the request's, else one derived from the
request's correlation id, the query and the configured base. The id makes the seed the same
on every worker asked that request (two workers rank it alike) and different from request to
request, so successive requests explore: a seed fixed per query would replay one coin flip
(epsilon-greedy), one Gumbel bias per skill (softmax) or one posterior quantile (Thompson)
on every call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from learnstream.streams.a2e.memory import bounds_for
from learnstream.streams.a2e.models import SkillPerformanceRecord
from learnstream.streams.a2e.payloads import AdaptQuery
from learnstream.streams.a2e.stats import DEFAULT_HALF_LIFE_S, SkillStats
from learnstream.streams.a2e.strategies import rank

__all__ = [
    "StatsView",
    "adapt_seed",
    "aligned",
    "decode_entry",
    "parse_key",
    "rank_skills",
    "stats_key",
]

Entries = Iterable[tuple[str, dict[str, Any] | None]]


def stats_key(kind: str, name: str, partition: int) -> str:
    """Return the table key of ``name``'s stats counted from source ``partition``."""
    return f"{kind}|{name}|{partition}"


def parse_key(key: str) -> tuple[str, str]:
    """Return (kind, name) of a table key (a name may itself hold ``|``)."""
    kind, rest = key.split("|", 1)
    return kind, rest.rsplit("|", 1)[0]


def decode_entry(key: bytes | None, value: bytes | None) -> tuple[str, dict[str, Any] | None]:
    """Return (table key, stats JSON or None for a tombstone) of a changelog record.

    Raise ValueError for a record that is no stats entry (its content is not quoted).
    """
    if not key:
        raise ValueError("a skill-stats changelog record without a key")
    text = key.decode("utf-8", "replace")
    if text.startswith('"'):
        text = str(orjson.loads(key))
    if "|" not in text:
        raise ValueError("a skill-stats changelog key without a kind")
    if value is None:
        return text, None
    data = orjson.loads(value)
    if not isinstance(data, dict):
        raise ValueError("a skill-stats changelog value that is not an object")
    return text, data


def aligned(stats: SkillStats, half_life_s: float) -> SkillStats:
    """Return ``stats`` under ``half_life_s``: stats written before the setting changed keep
    their exact counts and decayed counters, which decay at the new rate from then on."""
    if stats.half_life_s == half_life_s:
        return stats
    return SkillStats.from_dict(stats.to_dict() | {"half_life_s": half_life_s})


def _updates(stats: SkillStats) -> int:
    return stats.calls_total + stats.score_count


class StatsView:
    """The changelog's stats entries, merged with a worker's own on read."""

    def __init__(self, half_life_s: float = DEFAULT_HALF_LIFE_S) -> None:
        self.half_life_s = half_life_s
        self._entries: dict[str, SkillStats] = {}

    def apply(self, key: str, data: dict[str, Any] | None) -> None:
        """Hold the entry ``key`` (None deletes it); raise ValueError if malformed."""
        if data is None:
            self._entries.pop(key, None)
        else:
            self._entries[key] = aligned(SkillStats.from_dict(data), self.half_life_s)

    def stats(
        self, kind: str, name: str | None = None, local: Entries = ()
    ) -> dict[str, SkillStats]:
        """Return every ``kind`` name's (or ``name``'s) merged stats; ``local`` entries win
        over the changelog's when they hold more updates."""
        chosen = dict(self._entries)
        for key, raw in local:
            if raw:
                mine = aligned(SkillStats.from_dict(raw), self.half_life_s)
                if key not in chosen or _updates(mine) >= _updates(chosen[key]):
                    chosen[key] = mine
        parts: dict[str, list[SkillStats]] = {}
        for key, stats in chosen.items():
            found_kind, found_name = parse_key(key)
            if found_kind == kind and name in (None, found_name):
                parts.setdefault(found_name, []).append(stats)
        return {n: SkillStats.merged(parts[n]) for n in sorted(parts)}


def adapt_seed(query: AdaptQuery, base: int, correlation_id: str) -> int:
    """Return the query's seed, else one derived from ``base``, the request's
    ``correlation_id`` and what the query asks."""
    if query.seed is not None:
        return query.seed
    asked = [base, correlation_id, query.strategy, query.custom, query.skill_name]
    asked.append(sorted(query.params.items()))
    digest = hashlib.blake2b(orjson.dumps(asked), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def rank_skills(
    stats: Mapping[str, SkillStats],
    query: AdaptQuery,
    params: Mapping[str, float],
    seed: int,
    now: float,
) -> list[SkillPerformanceRecord]:
    """Rank the skills (plus the one asked for, as an untried arm, if unseen) as of ``now``:
    exact counts in the records, each skill's long or recent memory in the strategy's arms."""
    records = [s.record(name) for name, s in stats.items()]
    if query.skill_name and query.skill_name not in stats:
        records.append(SkillPerformanceRecord(name=query.skill_name))
    bounds = bounds_for(query.strategy)
    arms = {name: s.arm(name, now=now, bounds=bounds) for name, s in stats.items()}
    return rank(records, query.strategy, params, seed, custom=query.custom, arms=arms)
