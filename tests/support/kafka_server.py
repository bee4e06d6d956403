"""Run a real single-node Apache Kafka 4.x (KRaft, Scala 2.13) on 127.0.0.1 for tests.

The broker's jars come from Maven Central through ``ops/kafka/pom.xml`` and are cached in
``~/.cache/learnstream/kafka/<version>/libs`` (or ``$LEARNSTREAM_KAFKA_HOME/libs``, which may
also be an unpacked Kafka binary distribution), so Maven runs once per version and machine.

Usage::

    with ApacheKafka() as kafka:
        bootstrap = kafka.bootstrap          # "127.0.0.1:<port>"
        kafka.kill()                         # hard crash, data kept
        kafka.restart()                      # same ports, same log dir

    with ApacheKafka(sasl_ssl=SaslSslListener(chain_pem, key_pem, (("alice", "pw"),))) as kafka:
        kafka.sasl_ssl_bootstrap             # a SASL_SSL (SCRAM-SHA-512) listener as well

The controller, the inter-broker traffic and the readiness probes stay on PLAINTEXT. A node
of a cluster (tests/support/kafka_cluster.py) is the same class given its ``node_id`` and the
cluster's :class:`Quorum`.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import concurrent.futures
import contextlib
import fcntl
import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import uuid
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

__all__ = [
    "DEFAULT_VERSION",
    "ApacheKafka",
    "KafkaStartError",
    "Quorum",
    "SaslSslListener",
    "ensure_kafka_jars",
    "free_port",
    "kafka_home",
    "random_cluster_id",
]

#: Latest Kafka 4.x whose artifacts are all in Maven Central (4.4.0 lacks kafka-tools-api).
DEFAULT_VERSION: str = os.environ.get("LEARNSTREAM_KAFKA_VERSION", "4.3.1")

HOST = "127.0.0.1"
STOP_GRACE_SECONDS = 20.0
LOG_TAIL_LINES = 40
READINESS_TOPIC = "learnstream-readiness-probe"

_REPO_ROOT = Path(__file__).resolve().parents[2]
_POM = _REPO_ROOT / "ops" / "kafka" / "pom.xml"
_ERR_TOPIC_ALREADY_EXISTS = 36
_T = TypeVar("_T")

# Broker settings for a 2-core test box; ports and directories are added per instance.
BROKER_SETTINGS: dict[str, str] = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "num.partitions": "4",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "share.coordinator.state.topic.num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
    # A hard-killed node must wait out its old registration's session before it can re-register:
    # keep restart() fast (default 9 s) without fencing a busy 2-core box on a short stall.
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "4000",
    "auto.create.topics.enable": "true",
    "delete.topic.enable": "true",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "num.recovery.threads.per.data.dir": "1",
    "log.cleaner.dedupe.buffer.size": "16777216",
}

JVM_OPTIONS: tuple[str, ...] = (
    "-Xms256m",
    "-Xmx512m",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.awt.headless=true",
)

LOG4J2_PROPERTIES = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = ${sys:learnstream.kafka.loglevel:-INFO}
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.netclient.name = org.apache.kafka.clients.NetworkClient
logger.netclient.level = WARN
"""


class KafkaStartError(RuntimeError):
    """Raised when the broker cannot be fetched, formatted or brought to readiness."""


@dataclass(frozen=True)
class SaslSslListener:
    """A SASL_SSL listener: the broker's certificate and key (PEM) and its SCRAM users."""

    certificate_chain: str  # the broker's certificate first, then any intermediates
    private_key: str  # PKCS#8 PEM, unencrypted
    users: tuple[tuple[str, str], ...]  # (name, password), SCRAM-SHA-512, made by format

    def properties(self) -> dict[str, str]:
        """Return the broker settings this listener adds (PEM served inline, no keytool)."""
        prefix = "listener.name.sasl_ssl."
        return {
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            f"{prefix}scram-sha-512.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            f"{prefix}ssl.keystore.type": "PEM",
            f"{prefix}ssl.keystore.certificate.chain": self.certificate_chain,
            f"{prefix}ssl.keystore.key": self.private_key,
        }

    def scram_arguments(self) -> list[str]:
        """Return ``--add-scram`` arguments of ``StorageTool format`` for every user."""
        return [
            arg
            for name, password in self.users
            for arg in ("--add-scram", f"SCRAM-SHA-512=[name={name},password={password}]")
        ]


@dataclass(frozen=True)
class Quorum:
    """The KRaft controller quorum a node belongs to: the cluster id and every voter's
    controller port, by node id. Every node is a voter (``process.roles=broker,controller``)."""

    cluster_id: str
    controller_ports: dict[int, int]

    @property
    def voters(self) -> str:
        """Return ``controller.quorum.voters``: ``<id>@127.0.0.1:<port>`` of every voter."""
        ports = sorted(self.controller_ports.items())
        return ",".join(f"{node}@{HOST}:{port}" for node, port in ports)


# --------------------------------------------------------------------------- jars


def kafka_home(version: str = DEFAULT_VERSION) -> Path:
    """Return the directory whose ``libs/`` holds the broker jars for ``version``."""
    override = os.environ.get("LEARNSTREAM_KAFKA_HOME")
    if override:
        return Path(override).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "learnstream" / "kafka" / version


def _has_broker_jars(libs: Path) -> bool:
    """Tell whether ``libs`` already contains a Kafka 2.13 broker jar."""
    return libs.is_dir() and any(libs.glob("kafka_2.13-*.jar"))


def ensure_kafka_jars(version: str = DEFAULT_VERSION) -> Path:
    """Return the cached libs dir for ``version``, fetching the jars with Maven if missing."""
    home = kafka_home(version)
    libs = home / "libs"
    if _has_broker_jars(libs):
        return libs
    home.mkdir(parents=True, exist_ok=True)
    with (home / ".fetch.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _has_broker_jars(libs):
            _fetch_with_maven(version, libs)
    return libs


def _fetch_with_maven(version: str, libs: Path) -> None:
    """Copy the broker's runtime jars into ``libs`` atomically via a staging dir."""
    mvn = os.environ.get("MVN") or shutil.which("mvn")
    if not mvn:
        raise KafkaStartError("Maven (mvn) is needed to fetch the Kafka jars; install maven")
    staging = Path(tempfile.mkdtemp(prefix="libs.partial-", dir=libs.parent))
    cmd = [
        mvn, "-q", "-B", "-Dstyle.color=never", "-f", str(_POM), "dependency:copy-dependencies",
        f"-DoutputDirectory={staging}", "-DincludeScope=runtime", f"-Dkafka.version={version}",
    ]  # fmt: skip
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0 or not _has_broker_jars(staging):
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-LOG_TAIL_LINES:])
            raise KafkaStartError(f"fetching Kafka {version} failed: {shlex.join(cmd)}\n{tail}")
        if libs.exists():
            shutil.rmtree(libs)
        staging.rename(libs)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# --------------------------------------------------------------------------- helpers


def _java() -> str:
    """Return the java executable: ``$JAVA``, ``$JAVA_HOME/bin/java`` or ``java`` on PATH."""
    if os.environ.get("JAVA"):
        return os.environ["JAVA"]
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise KafkaStartError("java (17+) is needed to run Apache Kafka 4.x")
    return found


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def random_cluster_id() -> str:
    """Return a fresh KRaft cluster id (base64url UUID, as ``kafka-storage random-uuid``).

    Like Kafka's ``Uuid.randomUuid`` it never starts with ``-``, which the CLI would take
    for an option (1 in 64 random ids would otherwise make ``format`` fail).
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """Return the last ``lines`` lines of ``path`` (empty if it does not exist)."""
    try:
        with path.open(errors="replace") as fh:
            return "".join(deque(fh, maxlen=lines))
    except FileNotFoundError:
        return ""


def _api_versions_ok(port: int, timeout: float = 2.0) -> bool:
    """Send a raw ApiVersions v0 request and tell whether the broker answered without error."""
    client_id = b"learnstream-probe"
    body = struct.pack(">hhih", 18, 0, 1, len(client_id)) + client_id
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            header = _recv_exact(sock, 10)  # size, correlation id, error code
    except OSError:
        return False
    _size, correlation_id, error_code = struct.unpack(">iih", header)
    return bool(correlation_id == 1 and error_code == 0)


def _recv_exact(sock: socket.socket, count: int) -> bytes:
    """Read exactly ``count`` bytes from ``sock`` or raise ``ConnectionError``."""
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("connection closed by broker")
        data += chunk
    return data


def _run_blocking(factory: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run a coroutine to completion, in a helper thread if this thread has a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


async def _admin_probe(bootstrap: str) -> None:
    """Fetch cluster metadata, then create and delete a probe topic; raise if either fails."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await admin.start()
    try:
        cluster = await admin.describe_cluster()
        if not cluster.get("brokers"):
            raise KafkaStartError("metadata lists no brokers yet")
        response = await admin.create_topics([NewTopic(READINESS_TOPIC, 1, 1)])
        for _topic, code, *_rest in response.topic_errors:
            if code not in (0, _ERR_TOPIC_ALREADY_EXISTS):
                raise KafkaStartError(f"create_topics returned error code {code}")
        await admin.delete_topics([READINESS_TOPIC])
    finally:
        await admin.close()


# --------------------------------------------------------------------------- server


class ApacheKafka:
    """Run a single-node KRaft Apache Kafka on 127.0.0.1 for tests."""

    def __init__(
        self,
        version: str = DEFAULT_VERSION,
        log_dir: Path | None = None,
        *,
        port: int | None = None,
        overrides: dict[str, str] | None = None,
        sasl_ssl: SaslSslListener | None = None,
        node_id: int = 1,
        quorum: Quorum | None = None,
    ) -> None:
        """Describe a broker; nothing runs until :meth:`start`.

        ``log_dir`` is the working dir (config, ``data/``, ``kafka.log``); when omitted a temp dir
        is made and deleted by :meth:`stop`. A caller's ``log_dir`` is kept, and existing data in
        it is reused. ``port`` fixes the PLAINTEXT port; ``overrides`` adds broker settings;
        ``sasl_ssl`` adds a SASL_SSL listener on a port of its own. ``node_id`` and ``quorum``
        make it one node of a cluster (its controller port is the quorum's for ``node_id``).
        """
        self.version = version
        self._owns_dir = log_dir is None
        self._workdir: Path | None = Path(log_dir) if log_dir is not None else None
        self._fixed_port = port
        self._port: int | None = port
        self._controller_port: int | None = None
        self._overrides = dict(overrides or {})
        self._sasl_ssl = sasl_ssl
        self._sasl_port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_handle: IO[bytes] | None = None
        self.node_id = node_id
        self._quorum = quorum

    # ---------------------------------------------------------------- public API

    @property
    def bootstrap(self) -> str:
        """Return ``127.0.0.1:<port>``; raise if the broker was never started."""
        if self._port is None or self._workdir is None:
            raise RuntimeError("ApacheKafka is not started")
        return f"{HOST}:{self._port}"

    @property
    def sasl_ssl_bootstrap(self) -> str:
        """Return ``127.0.0.1:<port>`` of the SASL_SSL listener; raise if there is none."""
        if self._sasl_port is None:
            raise RuntimeError("ApacheKafka has no started SASL_SSL listener")
        return f"{HOST}:{self._sasl_port}"

    @property
    def port(self) -> int:
        """Return the PLAINTEXT port."""
        return int(self.bootstrap.rsplit(":", 1)[1])

    @property
    def log_dir(self) -> Path:
        """Return the working directory (config, ``data/``, ``kafka.log``)."""
        if self._workdir is None:
            raise RuntimeError("ApacheKafka is not started")
        return self._workdir

    @property
    def log_file(self) -> Path:
        """Return the broker's log file."""
        return self.log_dir / "kafka.log"

    @property
    def is_running(self) -> bool:
        """Tell whether the broker process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int:
        """Return the broker's process id; raise if it is not running."""
        if self._proc is None or self._proc.poll() is not None:
            raise RuntimeError("ApacheKafka is not running")
        return self._proc.pid

    def start(self, timeout: float = 120, *, wait: bool = True) -> str:
        """Fetch jars if needed, format storage once, launch the broker and wait until ready.

        ``wait=False`` returns once the process runs: a cluster's node cannot be ready before
        a majority of its quorum runs, so a cluster launches every node, then waits
        (:meth:`wait_ready`).
        """
        if self.is_running:
            return self.bootstrap
        first_start = self._controller_port is None
        try:
            libs = ensure_kafka_jars(self.version)
            self._prepare(libs)
            self._launch(libs)
            if wait:
                self._wait_ready(time.monotonic() + timeout)
        except BaseException:
            self._terminate(STOP_GRACE_SECONDS)
            if first_start:
                self._forget()
            raise
        return self.bootstrap

    def wait_ready(self, timeout: float = 120) -> None:
        """Block until the launched broker answers metadata and topic creation, or raise."""
        try:
            self._wait_ready(time.monotonic() + timeout)
        except BaseException:
            self._terminate(STOP_GRACE_SECONDS)
            raise

    def pause(self) -> None:
        """Freeze the broker process (SIGSTOP): a long GC pause, as the cluster sees it."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused broker run again (SIGCONT)."""
        os.kill(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        """Terminate the broker (SIGTERM, SIGKILL after 20 s) and delete the temp dir."""
        self._terminate(STOP_GRACE_SECONDS)
        self._forget()

    def kill(self, graceful: bool = False) -> None:
        """Stop the broker process but keep ports and data (SIGKILL unless ``graceful``)."""
        self._terminate(STOP_GRACE_SECONDS if graceful else 0.0)

    def restart(self, timeout: float = 120, graceful: bool = True) -> str:
        """Stop the broker if running and start it again on the same ports and log dir."""
        if self._controller_port is None:
            raise RuntimeError("restart() needs a broker that was started before")
        self.kill(graceful=graceful)
        return self.start(timeout)

    def __enter__(self) -> ApacheKafka:
        """Start the broker for a ``with`` block."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the broker when the ``with`` block ends."""
        self.stop()

    # ---------------------------------------------------------------- internals

    def _prepare(self, libs: Path) -> None:
        """Create the work dir, pick ports, write configs and format storage if new."""
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="learnstream-kafka-"))
        self._workdir.mkdir(parents=True, exist_ok=True)
        if self._port is None:
            self._port = free_port()
        if self._controller_port is None and self._quorum is not None:
            self._controller_port = self._quorum.controller_ports[self.node_id]
        if self._controller_port is None:
            self._controller_port = free_port()
            while self._controller_port == self._port:
                self._controller_port = free_port()
        if self._sasl_ssl is not None and self._sasl_port is None:
            self._sasl_port = free_port()
            while self._sasl_port in (self._port, self._controller_port):
                self._sasl_port = free_port()
        self._write_configs()
        if not (self._workdir / "data" / "meta.properties").exists():
            self._format_storage(libs)

    def _server_properties(self) -> dict[str, str]:
        """Return the broker settings for this instance's ports and directories."""
        assert self._workdir is not None
        props = dict(BROKER_SETTINGS)
        voters = self._quorum.voters if self._quorum else f"1@{HOST}:{self._controller_port}"
        props.update(
            {
                "node.id": str(self.node_id),
                "listeners": f"PLAINTEXT://{HOST}:{self._port},"
                f"CONTROLLER://{HOST}:{self._controller_port}",
                "advertised.listeners": f"PLAINTEXT://{HOST}:{self._port}",
                "controller.quorum.voters": voters,
                "log.dirs": str(self._workdir / "data"),
            }
        )
        if self._sasl_ssl is not None:
            sasl = f"SASL_SSL://{HOST}:{self._sasl_port}"
            props["listeners"] += f",{sasl}"
            props["advertised.listeners"] += f",{sasl}"
            props["listener.security.protocol.map"] += ",SASL_SSL:SASL_SSL"
            props.update(self._sasl_ssl.properties())
        props.update(self._overrides)
        return props

    def _write_configs(self) -> None:
        """Write ``server.properties`` and ``log4j2.properties`` into the work dir."""
        assert self._workdir is not None
        # PEM values span lines: a properties file writes a newline as \n.
        props = self._server_properties().items()
        lines = [f"{key}={value}".replace("\n", "\\n") for key, value in props]
        (self._workdir / "server.properties").write_text("\n".join(lines) + "\n")
        (self._workdir / "log4j2.properties").write_text(LOG4J2_PROPERTIES)

    def _java_command(self, libs: Path, *args: str, log_level: str = "INFO") -> list[str]:
        """Build ``java <opts> -cp '<libs>/*' <args>`` for this instance."""
        assert self._workdir is not None
        extra = shlex.split(os.environ.get("LEARNSTREAM_KAFKA_JAVA_OPTS", ""))
        return [
            _java(), *JVM_OPTIONS, *extra,
            f"-Dlog4j2.configurationFile={self._workdir / 'log4j2.properties'}",
            f"-Dlearnstream.kafka.loglevel={log_level}",
            f"-Dkafka.logs.dir={self._workdir}",
            "-cp", f"{libs}/*", *args,
        ]  # fmt: skip

    def _format_storage(self, libs: Path) -> None:
        """Run ``kafka.tools.StorageTool format`` once for a new data dir."""
        assert self._workdir is not None
        cmd = self._java_command(
            libs,
            "kafka.tools.StorageTool", "format",
            "-t", self._quorum.cluster_id if self._quorum else random_cluster_id(),
            "-c", str(self._workdir / "server.properties"),
            *(self._sasl_ssl.scram_arguments() if self._sasl_ssl else ()),
            log_level="WARN",
        )  # fmt: skip
        with self.log_file.open("ab") as log:
            log.write(f"\n=== learnstream: {shlex.join(cmd)}\n".encode())
            log.flush()
            done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise KafkaStartError(
                f"kafka storage format failed (exit {done.returncode}); last lines of "
                f"{self.log_file}:\n{_tail(self.log_file)}"
            )

    def _launch(self, libs: Path) -> None:
        """Start ``kafka.Kafka server.properties`` with output appended to ``kafka.log``."""
        assert self._workdir is not None
        cmd = self._java_command(libs, "kafka.Kafka", str(self._workdir / "server.properties"))
        self._log_handle = self.log_file.open("ab")
        self._log_handle.write(f"\n=== learnstream: {shlex.join(cmd)}\n".encode())
        self._log_handle.flush()
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log_handle,
            stderr=subprocess.STDOUT,
            cwd=self._workdir,
        )
        _LIVE.add(self)

    def _wait_ready(self, deadline: float) -> None:
        """Block until ApiVersions, metadata and topic creation succeed, or raise."""
        last_error = "broker port never answered"
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                code = None if self._proc is None else self._proc.returncode
                raise self._start_error(f"broker exited with code {code}")
            if _api_versions_ok(self.port):
                try:
                    _run_blocking(lambda: _admin_probe(self.bootstrap))
                    return
                except Exception as exc:  # retried until the deadline
                    last_error = f"{type(exc).__name__}: {exc}"
            time.sleep(0.25)
        raise self._start_error(f"broker not ready in time ({last_error})")

    def _start_error(self, reason: str) -> KafkaStartError:
        """Build a start error carrying the last lines of the broker log."""
        return KafkaStartError(
            f"Apache Kafka {self.version} failed to start: {reason}; last "
            f"{LOG_TAIL_LINES} lines of {self.log_file}:\n{_tail(self.log_file)}"
        )

    def _terminate(self, grace: float) -> None:
        """End the broker process: SIGTERM and wait ``grace`` seconds, then SIGKILL."""
        proc, self._proc = self._proc, None
        _LIVE.discard(self)
        if proc is not None and proc.poll() is None:
            if grace > 0:
                proc.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(grace)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None

    def _forget(self) -> None:
        """Delete the work dir if this instance created it, and release picked ports."""
        if self._owns_dir and self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        self._port = self._fixed_port
        self._controller_port = self._sasl_port = None


_LIVE: set[ApacheKafka] = set()


@atexit.register
def _stop_leftovers() -> None:
    """Stop brokers that a crashed or interrupted test run left running."""
    for server in list(_LIVE):
        server.stop()
