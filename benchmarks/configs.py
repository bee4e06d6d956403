"""The worker configurations compared, and how big each benchmark is."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CONFIGS", "FULL", "MEMORY", "QUICK", "SUITES", "Config", "MemoryVariant", "Sizes"]

SUITES = ("throughput", "scaleout", "latency", "memory", "profile")


@dataclass(frozen=True)
class Config:
    """A worker configuration: environment overrides and the texts it is fed."""

    key: str
    label: str
    env: dict[str, str] = field(default_factory=dict)
    unique_texts: bool = True
    ner: bool = False
    #: Also run the DIY peer (benchmarks/peer.py) with this environment, for "× peer".
    peer: bool = False


CONFIGS: dict[str, Config] = {
    c.key: c
    for c in (
        Config("pii-off", "PII off", {"LEARNSTREAM_LEARNING__ANONYMIZE_PII": "false"}, peer=True),
        Config("pii-on", "PII on (default: patterns + spaCy NER)", peer=True),
        Config(
            "pii-on-old",
            "PII on, the earlier defaults (six pattern entities, NER off)",
            {
                "LEARNSTREAM_PRIVACY__NER": "false",
                "LEARNSTREAM_PRIVACY__ENTITIES": '["EMAIL_ADDRESS","PHONE_NUMBER","CREDIT_CARD",'
                '"IP_ADDRESS","IBAN_CODE","US_SSN"]',
            },
        ),
        Config(
            # What the Faust peer sends: samples only. The default worker also sends each
            # sample's captured event and re-keys decided plans for the pairs miner.
            "pii-on-peer-outputs",
            "PII on, the peer's outputs only (no captured events, no pairs)",
            {"LEARNSTREAM_TOPICS__EMIT_CAPTURED": "false", "LEARNSTREAM_PAIRS__ENABLED": "false"},
            peer=True,
        ),
        Config("pii-on-json", "PII on, JSON output", {"LEARNSTREAM_SAMPLE_FORMAT": "json"}),
        Config("pii-on-ner", "PII on + spaCy NER", ner=True),
        Config(
            "pii-on-repeated",
            "PII on, repeated texts (anonymizer cache hits)",
            unique_texts=False,
        ),
    )
}


@dataclass(frozen=True)
class MemoryVariant:
    """A table store (the plan-TTL sweep runs at its default, every 5 s)."""

    key: str
    label: str
    store: str
    share: float = 1.0  # of Sizes.plans
    repeats: int | None = None  # None: Sizes.repeats


MEMORY: dict[str, MemoryVariant] = {
    v.key: v
    for v in (
        MemoryVariant("memory", "memory://", "memory://"),
        MemoryVariant("rocksdb", "rocksdb://", "rocksdb://"),
    )
}


@dataclass(frozen=True)
class Sizes:
    """How many runs, events and plans each suite uses."""

    repeats: int
    events: int
    ner_events: int
    plans: int
    rates: tuple[float, ...]
    latency_seconds: float
    configs: tuple[str, ...]
    memory: tuple[str, ...]
    suites: tuple[str, ...]
    max_workers: int = 2
    #: Before each throughput round, wait (up to ``quiet_wait`` seconds) for the 1-minute load
    #: average to fall to this (None: do not wait; the load at each round is reported anyway).
    quiet_load: float | None = None
    quiet_wait: float = 180.0
    #: Publish each throughput run's workload at this many events/s to a running worker
    #: (live traffic) instead of pre-loading it; the peers are not run then (None: pre-load).
    paced: float | None = None
    #: One worker's input events/s with PII on, for the latency phase at half of it (None:
    #: the throughput suite's figure of the same run, if it ran and ``half_capacity``).
    capacity: float | None = None
    half_capacity: bool = True
    #: The latency suite's unreported first phase: (events per second, seconds). It warms
    #: the broker as well as the worker (benchmarks/latency.py says what it pays for).
    warm_up: tuple[float, float] = (300.0, 10.0)
    #: How the memory suite loads its plans: "live" through the plans topic, or
    #: "changelog", restored from a plan_state changelog written beforehand
    #: (benchmarks/memory.py, benchmarks/preload.py).
    preload: str = "live"


QUICK = Sizes(
    repeats=1,
    events=600,
    ner_events=200,
    plans=300,
    rates=(100.0,),
    latency_seconds=2.0,
    configs=("pii-on",),
    memory=("memory",),
    suites=("throughput", "latency", "memory"),
    half_capacity=False,  # a smoke run: one latency phase
    warm_up=(50.0, 4.0),
)
FULL = Sizes(
    repeats=3,
    events=20_000,
    ner_events=1_000,
    plans=100_000,
    rates=(100.0, 500.0, 1000.0),
    latency_seconds=10.0,
    configs=tuple(CONFIGS),
    memory=tuple(MEMORY),
    suites=SUITES,
)
