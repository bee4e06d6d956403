"""Settings: one frozen object, read from ``LEARNSTREAM_*`` environment variables.

Nested sections use a double underscore: ``LEARNSTREAM_JOIN__GRACE=120``,
``LEARNSTREAM_PRIVACY__OPERATOR=hash``. ``learnstream config`` prints the result.

Seeds are cited by section: docs/seeds.md.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from learnstream.streams.samples.collection import POINTS
from learnstream.streams.samples.sample import FAMILIES

__all__ = [
    "A2ESettings",
    "DEFAULT_PHONE_REGIONS",
    "DEFAULT_PII_ENTITIES",
    "FETCH_MAX_WAIT_MS",
    "FETCH_MIN_BYTES",
    "PREFETCH_BACKOFF_MS",
    "GraphSettings",
    "ImpactSettings",
    "BrokerSettings",
    "CollectSettings",
    "Duration",
    "JoinSettings",
    "PiiOperator",
    "LearningSettings",
    "OutcomeSettings",
    "PairsSettings",
    "PrivacySettings",
    "RocksDbSettings",
    "RunSettings",
    "SessionSettings",
    "SaslMechanism",
    "SecurityProtocol",
    "Settings",
    "TopicSettings",
    "WebSettings",
    "WindowSettings",
    "format_duration",
]

# Validation errors never echo a value: it may be a salt or a password (str(exc), logs).
_FROZEN = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)
#: How a value that must not be shown is shown (pydantic's own for a SecretStr).
_MASKED = "**********"
#: PII found by default by offline pattern recognizers (PRIVACY.md); NER adds PERSON and
#: LOCATION (``privacy.ner``, on by default), learnstream.streams.privacy offers URL besides.
#: National ids: those of the default phone regions (US, GB, DE, FR, IN), and the ids of
#: other regions that carry a check digit and a shape of their own (ES, IT, BR, CA), since a
#: runtime's users are not all where its operators are, and the check keeps a random
#: number from matching.
DEFAULT_PII_ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IP_ADDRESS",
    "MAC_ADDRESS",
    "IBAN_CODE",
    "US_SSN",
    "UK_NINO",
    "UK_NHS",
    "DE_TAX_ID",
    "FR_NIR",
    "IN_AADHAAR",
    "IN_PAN",
    "ES_NIF",
    "IT_FISCAL_CODE",
    "BR_CPF",
    "CA_SIN",
    "PASSPORT",
    "DATE_OF_BIRTH",
    "STREET_ADDRESS",
    "USERNAME",
)
#: Regions whose national phone formats are recognized (international "+CC ..." numbers are
#: found whatever the list). US covers every +1 country (CA too); each region is one more
#: phonenumbers pass over every string that may hold a phone. ISO 3166 codes: GB, not UK.
DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "IN")
PiiOperator = Literal["replace", "mask", "hash", "redact"]
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(value: Any) -> Any:
    """Accept ``300``, ``"300"``, ``"5m"``, ``"1h"``, ``"250ms"`` besides ISO-8601 ``PT5M``."""
    if isinstance(value, int | float):
        return timedelta(seconds=value)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*", str(value))
    if match:
        return timedelta(seconds=float(match[1]) * _UNITS[match[2] or "s"])
    return value


def format_duration(value: timedelta) -> str:
    """Write a duration the way a user types it: ``5m``, ``24h``, ``90s``, ``250ms``."""
    millis = round(value.total_seconds() * 1000)
    for unit in ("h", "m", "s", "ms"):  # hours, not days: the defaults read "24h"
        size = round(_UNITS[unit] * 1000)
        if millis and millis % size == 0:
            return f"{millis // size}{unit}"
    return "0s"


# JSON (``learnstream config``) shows a duration as typed ("5m"), never as ISO-8601 "PT5M".
Duration = Annotated[
    timedelta,
    BeforeValidator(_duration),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]
_BROKER_URL = re.compile(
    r"kafka://(?:\[[0-9a-fA-F:.]+\]|[\w.-]+)(?::\d+)?"
    r"(?:[,;](?:kafka://)?(?:\[[0-9a-fA-F:.]+\]|[\w.-]+)(?::\d+)?)*/?"
)


def _broker_url(value: str | None) -> str | None:
    """Refuse a broker URL that Faust would misread (a bare ``host:9092`` has no scheme)."""
    if value is not None and "@" in value:  # user:password@host would end up in logs
        raise ValueError(
            "must not hold credentials (user:password@): set LEARNSTREAM_BROKER__SASL_USERNAME "
            "and LEARNSTREAM_BROKER__SASL_PASSWORD instead"
        )
    if value is not None and not _BROKER_URL.fullmatch(value):
        raise ValueError("must look like kafka://host:9092 (several: kafka://h1:9092,h2:9092)")
    return value


BrokerUrl = Annotated[str | None, AfterValidator(_broker_url)]


def _phone_regions(value: tuple[str, ...]) -> tuple[str, ...]:
    """Refuse a region phonenumbers does not know: it would silently match nothing."""
    from phonenumbers import SUPPORTED_REGIONS  # 25 ms of import, only when the env sets it

    codes = [code.strip().upper() for code in value]
    if not codes:  # no region would find no phone at all, not even +CC numbers
        raise ValueError("must name a region (to find no phone, drop PHONE_NUMBER from entities)")
    unknown = [str(i + 1) for i, code in enumerate(codes) if code not in SUPPORTED_REGIONS]
    if unknown:
        raise ValueError(
            f"holds unknown region codes (item {', '.join(unknown)}): use ISO 3166 two-letter "
            'codes phonenumbers knows, e.g. ["US", "GB", "DE"] (GB, not UK)'
        )
    return tuple(dict.fromkeys(codes))


PhoneRegions = Annotated[tuple[str, ...], AfterValidator(_phone_regions)]


def _bad_pattern(item: str) -> bool:
    """Tell whether an ``re:`` item holds no valid regular expression."""
    if not item.startswith("re:"):
        return False
    try:
        re.compile(item[3:])
    except re.error:
        return True
    return False


def _word_list(value: tuple[str, ...]) -> tuple[str, ...]:
    """Drop blank and repeated items; refuse a ``re:`` item that is no regular expression."""
    bad = [str(i + 1) for i, item in enumerate(value) if _bad_pattern(item.strip())]
    if bad:
        raise ValueError(f"holds invalid regular expressions after re: (item {', '.join(bad)})")
    return tuple(dict.fromkeys(item.strip() for item in value if item.strip()))


#: Words (matched whole, any case) or ``re:PATTERN`` items, as a JSON list.
WordList = Annotated[tuple[str, ...], AfterValidator(_word_list)]


SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
_SASL_FIELDS = ("sasl_mechanism", "sasl_username", "sasl_password")
_SSL_FIELDS = ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_key_password")
_VAR = "LEARNSTREAM_BROKER__"
#: The worker's fetches: the broker answers once it holds a mebibyte for them or after
#: FETCH_MAX_WAIT_MS, whichever comes first. Under light load a fetch then carries the
#: records of those milliseconds together, not one request per record, and a record of a
#: partition left out of the fetch in flight waits at most that long; a backlog fills the
#: bytes at once; idle, the worker asks 1000 / FETCH_MAX_WAIT_MS times a second
#: (benchmarks/RESULTS.md, findings behind the design).
FETCH_MAX_WAIT_MS = 25
FETCH_MIN_BYTES = 1024 * 1024
#: How long the worker's consumer keeps a broker's next fetch back for records it fetched
#: and has not handed over yet (aiokafka's ``prefetch_backoff``: 100 ms). Faust never hands
#: over the records of a partition it paused (a table's changelog once restored, an input
#: the lead order holds), yet aiokafka still fetches them: each first batch of such a
#: partition held every fetch of its broker back 100 ms; at 100 events/s those stalls were
#: the p99 of event latency (benchmarks/RESULTS.md, findings behind the design).
PREFETCH_BACKOFF_MS = 5


def _none_if_empty(secret: SecretStr | None) -> SecretStr | None:
    """Return None for a secret that is empty or only blanks."""
    return secret if secret is not None and secret.get_secret_value().strip() else None


def _pem_file(value: str | None) -> str | None:
    """Refuse a path that names no readable file (found now, not at the first TLS handshake)."""
    if value is None:
        return None
    path = Path(value).expanduser()
    if not path.is_file() or not os.access(path, os.R_OK):
        raise ValueError("names no readable file: give the path of a PEM file")
    return str(path)


def _blank_is_unset(value: Any) -> Any:
    """Read ``VAR=`` (compose's ``${VAR:-}``) as unset."""
    return None if isinstance(value, str) and not value.strip() else value


OptionalSecret = Annotated[SecretStr | None, AfterValidator(_none_if_empty)]
OptionalName = Annotated[str | None, BeforeValidator(_blank_is_unset)]
PemFile = Annotated[str | None, BeforeValidator(_blank_is_unset), AfterValidator(_pem_file)]


def _vars(names: list[str]) -> str:
    return ", ".join(_VAR + name.upper() for name in names)


def _apply(names: list[str]) -> str:
    return f"{_vars(names)} {'applies' if len(names) == 1 else 'apply'} only"


def _security_problem(broker: BrokerSettings) -> str | None:
    """Say what is inconsistent in the broker's security settings (values never named)."""
    protocol = broker.security_protocol
    sasl_set = [name for name in _SASL_FIELDS if getattr(broker, name) is not None]
    ssl_set = [name for name in _SSL_FIELDS if getattr(broker, name) is not None]
    if protocol.startswith("SASL_"):
        missing = [name for name in _SASL_FIELDS if name not in sasl_set]
        if missing:
            return f"{_VAR}SECURITY_PROTOCOL={protocol} needs {_vars(missing)}"
    elif sasl_set:
        return (
            f"{_apply(sasl_set)} with {_VAR}SECURITY_PROTOCOL=SASL_SSL or "
            f"SASL_PLAINTEXT (it is {protocol})"
        )
    if ssl_set and not protocol.endswith("SSL"):
        return f"{_apply(ssl_set)} with {_VAR}SECURITY_PROTOCOL=SSL or SASL_SSL (it is {protocol})"
    return _client_cert_problem(broker)


def _client_cert_problem(broker: BrokerSettings) -> str | None:
    if (broker.ssl_certfile is None) != (broker.ssl_keyfile is None):
        return f"{_VAR}SSL_CERTFILE and {_VAR}SSL_KEYFILE go together: set both or neither"
    if broker.ssl_key_password is not None and broker.ssl_keyfile is None:
        return f"{_VAR}SSL_KEY_PASSWORD needs {_VAR}SSL_KEYFILE (the key it decrypts)"
    return None


class BrokerSettings(BaseModel):
    """Where Kafka is and how we talk to it."""

    model_config = _FROZEN
    url: BrokerUrl = Field(None, description="kafka://host:9092; unset = start the embedded broker")
    embedded_port: int = Field(0, description="port of the embedded broker (0 = pick a free one)")
    one_record_per_batch: bool | None = Field(
        None, description="force max_batch_size=1 (default: on for the embedded broker only)"
    )
    session_timeout: float = 10.0
    rebalance_timeout: float = 5.0
    heartbeat_interval: float = 1.0
    linger_ms: int = Field(0, ge=0, description="producer batching delay; 0 = send at once")
    fetch_max_wait_ms: int = Field(
        FETCH_MAX_WAIT_MS,
        ge=1,
        le=60_000,
        description="longest the broker holds a fetch of the worker's consumer (Faust writes "
        "in 1500): also the longest a record of a partition left out of the fetch in flight "
        "waits for the next one",
    )
    fetch_min_bytes: int = Field(
        FETCH_MIN_BYTES,
        ge=1,
        description="bytes the broker gathers for a fetch of the worker's consumer before it "
        "answers, within fetch_max_wait_ms: under light load one fetch carries every record "
        "of that wait instead of one request per record; a backlog fills it at once",
    )
    prefetch_backoff_ms: int = Field(
        PREFETCH_BACKOFF_MS,
        ge=0,
        le=1000,
        description="longest the worker's consumer keeps its next fetch from a broker back "
        "while records it fetched wait to be handed over (aiokafka's default: 100): records "
        "of a partition Faust paused are never handed over and held every fetch that long",
    )
    max_batch_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        description="producer batch size per partition (aiokafka blocks the agent on a full one)",
    )
    max_poll_records: int = Field(
        1000,
        ge=1,
        description="records one poll of the worker's consumer hands over at most: bounds the "
        "memory of a restore or a catch-up (the fetch size must hold the largest record)",
    )
    security_protocol: SecurityProtocol = Field(
        "PLAINTEXT", description="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (external broker only)"
    )
    sasl_mechanism: Annotated[SaslMechanism | None, BeforeValidator(_blank_is_unset)] = Field(
        None, description="PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (with SASL_*)"
    )
    sasl_username: OptionalName = None
    sasl_password: OptionalSecret = None
    ssl_cafile: PemFile = Field(None, description="CA certificate(s) the broker's must chain to")
    ssl_certfile: PemFile = Field(None, description="client certificate (mutual TLS)")
    ssl_keyfile: PemFile = Field(None, description="private key of ssl_certfile")
    ssl_key_password: OptionalSecret = None

    @model_validator(mode="after")
    def _consistent_security(self) -> BrokerSettings:
        problem = _security_problem(self)
        if problem:
            raise PydanticCustomError("settings_conflict", problem)
        return self

    def secured(self) -> bool:
        """Tell whether any security setting differs from its default (plaintext, no auth)."""
        return self.security_protocol != "PLAINTEXT" or any(
            getattr(self, name) is not None for name in (*_SASL_FIELDS, *_SSL_FIELDS)
        )


class TopicSettings(BaseModel):
    """Topic names (docs/architecture.md §3) and their partitioning."""

    model_config = _FROZEN
    prefix: str = Field(
        "", description="prepended to every topic name (test isolation, multi-tenant)"
    )
    partitions: int = Field(4, ge=1, description="partitions of every co-partitioned input topic")
    replication_factor: int | None = Field(
        None,
        ge=1,
        description="replicas of every topic learnstream creates, its tables' changelogs "
        "included; default min(3, brokers in the cluster)",
    )
    min_insync_replicas: int | None = Field(
        None,
        ge=1,
        description="min.insync.replicas of every topic learnstream creates; default the "
        "replication factor - 1 (at least 1): with acks=all, a write the broker acknowledged "
        "survives the loss of any one broker",
    )
    plans: str = "mplp.plans"
    plan_approved: str = "mplp.plan_approved"
    plan_rejected: str = "mplp.plan_rejected"
    delta_intents: str = "mplp.delta_intents"
    pipeline_stage: str = "mplp.pipeline_stage"
    map_events: str = Field(
        "mplp.map_events", description="MAP session events, keyed by session_id"
    )
    sa_events: str = Field(
        "mplp.sa_events", description="single-agent (SA) events, keyed by plan_id, else sa_id"
    )
    runtime_executions: str = Field(
        "mplp.runtime_executions", description="runtime execution events, keyed by execution_id"
    )
    graph_updates: str = Field(
        "mplp.graph_updates", description="PSG graph update events, keyed by graph_id"
    )
    core_events: str = Field(
        "mplp.core_events",
        description="generic MPLP core events (intent, impact_analysis, cost_budget families), "
        "keyed by plan_id like the delta intents",
    )
    consent: str = "mplp.learning_consent"
    samples: str = "mplp.learning_samples"
    samples_retention_ms: int = Field(
        -1,
        ge=-1,
        description="retention.ms of the samples topic: -1 keeps every sample (compacted by "
        "sample_id); N > 0 also deletes samples older than N ms (cleanup.policy compact,delete)",
    )
    events: str = "mplp.learning_events"
    emit_captured: bool = Field(
        True,
        description="also send each sample's learning_sample_captured event to the events "
        "topic (seed 000 §6); false sends one record less per sample",
    )
    dlq: str = "mplp.learning_dlq"
    learn_requests: str = "a2e.learn.requests"
    learn_responses: str = "a2e.learn.responses"
    preference_pairs: str = "mplp.preference_pairs"
    reward_samples: str = "a2e.learn.reward_samples"
    experiences: str = "a2e.learn.experiences"

    def name(self, field: str) -> str:
        """Return the full topic name of a field, prefix included."""
        return f"{self.prefix}{getattr(self, field)}"


class LearningSettings(BaseModel):
    """The Learning & Feedback switches of the MPLP spec (§8.2)."""

    model_config = _FROZEN
    enabled: bool = True
    anonymize_pii: bool = True
    opt_out_patterns: tuple[str, ...] = ("*.secret", "*.env")


class PrivacySettings(BaseModel):
    """How PII is found and replaced (architecture §6)."""

    model_config = _FROZEN
    entities: tuple[str, ...] = DEFAULT_PII_ENTITIES
    operator: PiiOperator = "replace"
    hash_salt: SecretStr = SecretStr("")
    ner: bool = Field(
        True,
        description="find names and places (PERSON, LOCATION): spaCy's small model, and names "
        "by how text uses them ('ask Dana Whitfield'); false leaves names in place",
    )
    detect_secrets: bool = Field(
        True, description="replace cloud keys, tokens, private keys and passwords (detect-secrets)"
    )
    phone_regions: PhoneRegions = Field(
        DEFAULT_PHONE_REGIONS,
        description="regions whose national phone formats are found (+CC numbers always are)",
    )
    allow: WordList = Field(
        (),
        description='words never masked, whatever found them (JSON list; "re:PATTERN" for a '
        "regular expression)",
    )
    deny: WordList = Field(
        (), description="words or re:PATTERNs always masked, as DENY_LIST (JSON list)"
    )

    @field_serializer("deny")
    def _deny_masked(self, deny: tuple[str, ...]) -> list[str]:
        # Each item names something private (a project, a client): `learnstream config`
        # shows how many there are, as it shows a secret, never what they are.
        return [_MASKED] * len(deny)


class JoinSettings(BaseModel):
    """The decision/delta/outcome ⋈ plan_state join (architecture §5)."""

    model_config = _FROZEN
    grace: Duration = Field(
        timedelta(minutes=5), description="how long an event waits for its plan"
    )
    sweep_interval: float = Field(5.0, gt=0, description="seconds between grace sweeps")
    plan_ttl: Duration = Field(
        timedelta(hours=24), description="terminal plans expire after this (up to a minute later)"
    )
    corrections_lateness: Duration = Field(
        timedelta(0),
        description="how long after a decision or execution is read a correction reaching "
        "the broker still counts for it; each waits this long (Kafka Streams' max.task.idle.ms)",
    )
    hold_in_memory: Duration = Field(
        timedelta(seconds=10),
        description="at_least_once: how long a parked event, or a changed plan state, waits "
        "in memory only, the records it carries kept from commits (a crash reads them again), "
        "before it is written to the pending or plan_state table; 0s writes at once; "
        "exactly_once always writes at once",
    )
    lead_backlog: int = Field(
        100,
        ge=0,
        description="while a partition of the plans or corrections topic has more unread "
        "records than this, the other inputs' partitions of its number wait (a backlog parks "
        "nothing then); 0 reads every input at once",
    )
    lead_wait: Duration = Field(
        timedelta(seconds=60),
        description="how long an input partition waits for its leads at most",
    )

    @model_validator(mode="after")
    def _lateness_within_grace(self) -> JoinSettings:
        # Negative, it would count ends asked before the event was read; past the grace,
        # every decision and execution would wait longer than any plan may.
        if not timedelta(0) <= self.corrections_lateness <= self.grace:
            raise PydanticCustomError(
                "settings_conflict",
                "LEARNSTREAM_JOIN__CORRECTIONS_LATENESS must be at least 0 and at most "
                f"LEARNSTREAM_JOIN__GRACE ({format_duration(self.grace)})",
            )
        return self


class WindowSettings(BaseModel):
    """Windowed quality-metric tables (architecture §7): tumbling by default, on event time."""

    model_config = _FROZEN
    sizes: tuple[Duration, ...] = (timedelta(minutes=5), timedelta(hours=1))
    expires: Duration = Field(
        timedelta(hours=2),
        description="windows older than this are dropped; events older than it count as late",
    )
    hopping: bool = Field(False, description="hopping windows that advance by `step`")
    step: Duration = Field(
        timedelta(minutes=1), description="advance of hopping windows (ignored when tumbling)"
    )
    refresh_interval: float = Field(
        2.0, gt=0, description="seconds between window-gauge and consumer-lag refreshes"
    )
    flush_interval: float = Field(
        10.0,
        ge=0,
        description="seconds a partition's window counts stay in memory before they are "
        "written (each window key once); its offsets are committed only after, so a crash "
        "replays up to this much (the gauges and /quality include what is in memory)",
    )


#: How long the pairs miner's re-key topic keeps its records (its ``retention.ms``,
#: streams/io/topics.py). The miner's intents have no changelog: a worker assigned a
#: partition rebuilds them from the last ``pairs.ttl`` of that topic, so the TTL must fit.
PAIR_INTENTS_RETENTION = timedelta(days=7)


class PairsSettings(BaseModel):
    """Preference pairs mined from the samples topic (streams/samples/pairs.py, replans.py),
    and plan_optimization samples (streams/samples/optimizations.py)."""

    model_config = _FROZEN
    enabled: bool = Field(
        True, description="mine preference pairs (false: the worker does not read its samples)"
    )
    ttl: Duration = Field(
        timedelta(hours=24),
        description="an intent's plans are dropped this long after its last plan came "
        "(a rejection never followed by an approval then yields no pair)",
    )
    sweep_interval: float = Field(60.0, gt=0, description="seconds between expiry sweeps")

    optimization_margin: float = Field(
        0.2,
        gt=0,
        lt=1,
        description="share of duration (or of tokens) a later execution of an intent's plan "
        "must save over an earlier one to make a plan_optimization sample and pair "
        "(0.2: 20% faster)",
    )

    @field_validator("ttl")
    @classmethod
    def _fits_the_rekey_topic(cls, ttl: timedelta) -> timedelta:
        """Refuse a TTL the re-key topic does not keep records for (intents restore from it)."""
        if ttl > PAIR_INTENTS_RETENTION - timedelta(hours=1):
            raise ValueError(
                f"must be at most {PAIR_INTENTS_RETENTION.days} days less an hour: the pairs "
                "miner restores its intents from the re-key topic, which keeps "
                f"{PAIR_INTENTS_RETENTION.days} days of records"
            )
        return ttl


class OutcomeSettings(BaseModel):
    """Which pipeline stages make pipeline_outcome samples when they complete or fail."""

    model_config = _FROZEN
    stages: tuple[str, ...] = Field(
        (),
        description="stage ids whose completion or failure is a pipeline_outcome (JSON list, "
        'e.g. ["execute"]); empty: every stage',
    )

    @property
    def collected(self) -> frozenset[str] | None:
        """Return the stage ids collected (None: every stage)."""
        return frozenset(self.stages) or None


class CollectSettings(BaseModel):
    """Which MPLP collection points make samples, and at what rate per family."""

    model_config = _FROZEN
    off: tuple[str, ...] = Field(
        (),
        description="collection points switched off (JSON list of: intent_resolution, "
        "plan_revision, impact_analysis_completion, execution_completion, pipeline_failure, "
        "user_feedback, map_session_completion, graph_update, a2e_feedback, plan_optimization); "
        "every one is on by default",
    )
    rates: dict[str, float] = Field(
        default_factory=dict,
        description="share of each family's samples kept, 0 to 1 (JSON, e.g. "
        '{"pipeline_outcome": 0.1}), decided from the sample id; a family not named: 1',
    )

    @field_validator("off")
    @classmethod
    def _known_points(cls, off: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(off) - set(POINTS))
        if unknown:
            raise ValueError(f"not collection points: {', '.join(unknown)}")
        return off

    @field_validator("rates")
    @classmethod
    def _known_rates(cls, rates: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(rates) - set(FAMILIES))
        if unknown:
            raise ValueError(f"not sample families: {', '.join(unknown)}")
        if any(not 0.0 <= rate <= 1.0 for rate in rates.values()):
            raise ValueError("a rate is a share: 0 to 1")
        return rates


class GraphSettings(BaseModel):
    """PSG graph updates (streams/join/graphs.py): a graph_evolution per significant change."""

    model_config = _FROZEN
    threshold: float = Field(
        0.2,
        gt=0,
        le=1,
        description="topology change score at which a graph's changes are a sample: elements "
        "added or removed over the graph's elements when its window opened",
    )
    window: Duration = Field(
        timedelta(minutes=10),
        description="a graph's changes are summed over at most this long (event time): an "
        "update this long after its window opened starts a new one; a window that never "
        "reached the threshold makes no sample",
    )
    ttl: Duration = Field(
        timedelta(days=7),
        description="a graph with no update for this long (the worker's clock, up to a minute "
        "later) is forgotten, its size and open window with it: the worker holds the graphs "
        "seen lately, not every graph ever seen; an update after that finds the graph new",
    )

    @model_validator(mode="after")
    def _ttl_covers_window(self) -> GraphSettings:
        # Shorter, a graph would be forgotten while its window may still be open.
        if self.ttl < self.window:
            raise PydanticCustomError(
                "settings_conflict",
                "LEARNSTREAM_GRAPHS__TTL must be at least LEARNSTREAM_GRAPHS__WINDOW "
                f"({format_duration(self.window)})",
            )
        return self


class ImpactSettings(BaseModel):
    """Impact analyses (streams/join/impacts.py): one completes the delta_impact of its delta."""

    model_config = _FROZEN
    window: Duration = Field(
        timedelta(minutes=10),
        description="how long a delta waits for its impact analysis, or an analysis for its "
        "delta, with no event of the other (up to a minute later); then it is forgotten",
    )


class RunSettings(BaseModel):
    """SA steps and runtime executions (streams/join/runs.py): a pipeline_outcome per end."""

    model_config = _FROZEN
    timeout: Duration = Field(
        timedelta(hours=1),
        description="a run (SA step, runtime execution) with no event for this long is "
        "forgotten (up to a minute later); its end, if it comes later, has no duration",
    )


class SessionSettings(BaseModel):
    """MAP collaboration sessions (streams/join/sessions.py): one sample per session."""

    model_config = _FROZEN
    timeout: Duration = Field(
        timedelta(minutes=30),
        description="a session with no event for this long ends as timed out (up to a minute "
        "later); a session that ended keeps its state as long again, to count late events",
    )


class A2ESettings(BaseModel):
    """The A2E learn capability: request time-out, adaptation parameters, skill labels."""

    model_config = _FROZEN
    response_timeout: Duration = Field(
        timedelta(seconds=10), description="how long a learn request waits for its response"
    )
    ucb1_c: float = Field(0.4, ge=0, description="UCB1 exploration constant c")
    epsilon_c: float = Field(
        6.0, ge=0, description="epsilon-greedy's rate max(floor, min(1, c*K/N)): its c"
    )
    epsilon: float | None = Field(
        None, ge=0, le=1, description="a fixed epsilon-greedy rate (unset: the decaying one)"
    )
    softmax_c: float = Field(
        0.1, ge=0, description="softmax's per-arm temperature c/sqrt(n_i) (Boltzmann-Gumbel)"
    )
    temperature: float | None = Field(
        None, ge=1e-6, description="a fixed softmax temperature tau (unset: the per-arm one)"
    )
    half_life_s: float = Field(
        900.0,
        gt=0,
        allow_inf_nan=False,
        description="half-life of the rolling skill stats' recent memory (s; the long one's "
        "is 512 times it)",
    )
    seed: int = Field(
        0, description="base of the seed derived for an adapt request that names none"
    )
    skills: tuple[str, ...] = Field(
        (), description="skill/tool names shown as metric labels (empty: the first max_skills)"
    )
    max_skills: int = Field(
        20, ge=0, description="skill/tool labels when skills is empty; the rest show as other"
    )


class WebSettings(BaseModel):
    """Who may use the worker's web server (``LEARNSTREAM_WEB__*``; host/port stay top-level)."""

    model_config = _FROZEN
    #: An empty token would let ``Authorization: Bearer `` through: it counts as no token.
    token: OptionalSecret = Field(
        None, description="bearer token every write (and, with protect_reads, read) must send"
    )
    protect_reads: bool = Field(False, description="also require the token on GET pages")
    max_body_bytes: int = Field(1024 * 1024, ge=1, description="largest request body accepted")


class RocksDbSettings(BaseModel):
    """Memory bounds of each RocksDB database (one per table partition) with ``rocksdb://``.

    Faust's own defaults (64 MiB x 3 write buffers and a 2 GiB block cache per database)
    let a worker with 4 partitions of 4 tables grow into gigabytes; these keep the data on
    disk and the worker small (benchmarks/RESULTS.md, memory).
    """

    model_config = _FROZEN
    write_buffer_mib: int = Field(8, ge=1, description="memtable size per database")
    max_write_buffers: int = Field(2, ge=1, description="memtables per database")
    block_cache_mib: int = Field(16, ge=1, description="read cache per database")

    def options(self) -> dict[str, int]:
        """Return the options of Faust's RocksDB store (``app.Table(options=...)``)."""
        mib = 1024 * 1024
        return {
            "write_buffer_size": self.write_buffer_mib * mib,
            "max_write_buffer_number": self.max_write_buffers,
            "block_cache_size": self.block_cache_mib * mib,
            "block_cache_compressed_size": self.block_cache_mib * mib,
        }


class Settings(BaseSettings):
    """Everything learnstream can be told, with production-safe defaults."""

    model_config = SettingsConfigDict(
        env_prefix="LEARNSTREAM_",
        env_nested_delimiter="__",
        frozen=True,
        extra="ignore",
        hide_input_in_errors=True,
    )
    app_id: str = "learnstream"
    broker: BrokerSettings = BrokerSettings()
    topics: TopicSettings = TopicSettings()
    learning: LearningSettings = LearningSettings()
    privacy: PrivacySettings = PrivacySettings()
    join: JoinSettings = JoinSettings()
    windows: WindowSettings = WindowSettings()
    pairs: PairsSettings = PairsSettings()
    sessions: SessionSettings = SessionSettings()
    runs: RunSettings = RunSettings()
    graphs: GraphSettings = GraphSettings()
    impacts: ImpactSettings = ImpactSettings()
    collect: CollectSettings = CollectSettings()
    outcomes: OutcomeSettings = OutcomeSettings()
    a2e: A2ESettings = A2ESettings()
    sample_format: Literal["avro", "json"] = "avro"
    processing_guarantee: Literal["at_least_once", "exactly_once"] = "at_least_once"
    store: str = Field("memory://", description="table store: memory:// or rocksdb://")
    rocksdb: RocksDbSettings = RocksDbSettings()
    data_dir: str = Field(".learnstream", description="Faust data directory (RocksDB, offsets)")
    web_host: str = "127.0.0.1"
    web_port: int = 6066
    web: WebSettings = WebSettings()
    log_level: str = "info"

    # Flat aliases that operators expect to find at the top level.
    broker_url: BrokerUrl = Field(None, description="alias of broker.url (LEARNSTREAM_BROKER_URL)")

    @model_validator(mode="after")
    def _security_needs_a_url(self) -> Settings:
        # The embedded broker listens in plaintext only: security settings there are a mistake.
        if self.broker.secured() and not self.kafka_url:
            raise PydanticCustomError(
                "settings_conflict",
                f"{_VAR}SECURITY_PROTOCOL and the other TLS/SASL settings apply only to an "
                "external broker: set LEARNSTREAM_BROKER_URL too (the embedded broker has none)",
            )
        return self

    def table_options(self) -> dict[str, int] | None:
        """Return the store options every table gets (RocksDB memory bounds, or None)."""
        return self.rocksdb.options() if self.store.startswith("rocksdb") else None

    @property
    def kafka_url(self) -> str | None:
        """Return the configured broker URL, whichever variable set it."""
        return self.broker_url or self.broker.url
