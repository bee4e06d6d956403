"""Shared fixtures: one broker per session (embedded by default, Apache Kafka on request)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from learnstream.streams.io.embedded import EmbeddedBroker
from learnstream.streams.io.worker_process import WorkerProcess


@dataclass(frozen=True)
class Broker:
    """The broker the integration tests talk to."""

    bootstrap: str
    kind: str  # "embedded" | "kafka"
    server: object | None = None  # ApacheKafka when we started it (restartable)

    @property
    def url(self) -> str:
        """Return the kafka:// URL."""
        return f"kafka://{self.bootstrap}"

    @property
    def embedded(self) -> bool:
        """Return True on the embedded broker."""
        return self.kind == "embedded"


def _wants_kafka() -> bool:
    return os.environ.get("LEARNSTREAM_TEST_BROKER") == "kafka" or bool(
        os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    )


#: A unit or integration test that runs longer than this has hung: fail it and move on.
FAST_TIER_TIMEOUT = 240


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give unit and integration tests a 4-minute timeout, and in ``make test-kafka`` leave
    out the integration tests that never use the session's broker."""
    fast = (REPO_ROOT / "tests" / "unit", REPO_ROOT / "tests" / "integration")
    for item in items:
        in_fast = any(item.path.is_relative_to(tier) for tier in fast)
        if in_fast and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(FAST_TIER_TIMEOUT))
    if os.environ.get("LEARNSTREAM_TEST_BROKER") == "kafka":
        _deselect_broker_free(config, items)


def _deselect_broker_free(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the integration tests that never use the session's broker.

    They start their own embedded broker or need none (the CLI's errors, the demo, a fresh
    clone, the package build, the publisher's flush without a broker), so a run on Kafka
    would repeat the run of ``make test`` exactly; CI runs both. pytest reports them as
    deselected. Only ``LEARNSTREAM_TEST_BROKER=kafka`` does this: with
    ``KAFKA_BOOTSTRAP_SERVERS`` exported for a whole shell, every test runs.
    """
    integration = REPO_ROOT / "tests" / "integration"
    repeated = [
        item
        for item in items
        if item.path.is_relative_to(integration)
        and "broker" not in getattr(item, "fixturenames", ())
    ]
    if repeated:
        config.hook.pytest_deselected(items=repeated)
        items[:] = [item for item in items if item not in repeated]


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """Start the session's broker (or use ``KAFKA_BOOTSTRAP_SERVERS``) and stop it at the end."""
    if os.environ.get("KAFKA_BOOTSTRAP_SERVERS"):
        yield Broker(os.environ["KAFKA_BOOTSTRAP_SERVERS"], "kafka")
    elif _wants_kafka():
        from tests.support.kafka_server import ApacheKafka

        with ApacheKafka() as kafka:
            yield Broker(kafka.bootstrap, "kafka", kafka)
    else:
        log = tmp_path_factory.mktemp("broker") / "tansu.log"
        with EmbeddedBroker(log_path=log) as embedded:
            yield Broker(embedded.bootstrap, "embedded")


REPO_ROOT = Path(__file__).resolve().parent.parent


#: Unchanged copies of the official MPLP v1.0 schemas the project ships (NOTICE, SHA256SUMS).
SHIPPED_MPLP = REPO_ROOT / "schemas" / "json" / "mplp" / "official"


def official_mplp_override() -> Path | None:
    """Return the directory ``LEARNSTREAM_MPLP_SCHEMAS`` names (relative to the repo), if set.

    Set but not a directory fails the test: a typo must not fall back to the shipped copies.
    """
    configured = os.environ.get("LEARNSTREAM_MPLP_SCHEMAS")
    if not configured:
        return None
    path = Path(configured)
    path = path if path.is_absolute() else REPO_ROOT / path
    if not path.is_dir():
        pytest.fail(f"LEARNSTREAM_MPLP_SCHEMAS is set but {path} is not a directory")
    return path


def mplp_schema_dir() -> Path:
    """Return the official MPLP v1.0 schemas: ``LEARNSTREAM_MPLP_SCHEMAS``, else the shipped."""
    return official_mplp_override() or SHIPPED_MPLP


@pytest.fixture(scope="session")
def mplp_schemas() -> Path:
    """Return the directory of the official MPLP v1.0 JSON schemas (see ``mplp_schema_dir``)."""
    return mplp_schema_dir()


@pytest.fixture
def namespace() -> str:
    """Return a unique prefix for this test's topics and consumer group."""
    return f"t{uuid.uuid4().hex[:10]}."


@pytest.fixture
def worker_env(broker: Broker, namespace: str, tmp_path: Path) -> dict[str, str]:
    """Return the environment of a worker isolated to this test."""
    env = {
        "LEARNSTREAM_BROKER_URL": broker.url,
        "LEARNSTREAM_BROKER__ONE_RECORD_PER_BATCH": "true" if broker.embedded else "false",
        "LEARNSTREAM_APP_ID": f"ls-{namespace.rstrip('.')}",
        "LEARNSTREAM_TOPICS__PREFIX": namespace,
        "LEARNSTREAM_DATA_DIR": str(tmp_path / "data"),
        "LEARNSTREAM_JOIN__SWEEP_INTERVAL": "1",
        "LEARNSTREAM_LOG_LEVEL": "info",
    }
    return env


@pytest.fixture
def start_worker(
    worker_env: dict[str, str], tmp_path: Path
) -> Iterator[Callable[..., WorkerProcess]]:
    """Start workers on demand (extra env overrides); every one is stopped at teardown."""
    started: list[WorkerProcess] = []

    def start(**overrides: str) -> WorkerProcess:
        proc = WorkerProcess({**worker_env, **overrides}, tmp_path / f"worker{len(started)}.log")
        started.append(proc)
        return proc.start()

    yield start
    for proc in started:
        proc.stop()
