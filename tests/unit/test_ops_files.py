"""Checks of the operations files: Docker, docker compose, Prometheus, Grafana.

Nothing here needs a Docker engine or a running Prometheus. ``promtool`` is required:
``ops/prometheus/ensure-promtool.sh`` (run by ``make test``) unpacks Debian's copy into the
virtualenv without installing anything; without it the promtool tests FAIL.

The metric contract below is the list of series the worker exposes on
``GET /metrics``; the dashboard and the alerts may use nothing else (plus
``up`` and the few Faust sensor series agents/seams/sensor.py exposes, prefixed ``faust_``).
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from learnstream.agents.seams.sensor import FAUST_SERIES
from learnstream.streams.observe.metrics import Metrics
from learnstream.streams.samples.pairs import NO_PAIR_REASONS, PAIR_KINDS
from learnstream.streams.samples.sample import FAMILIES, QUALITIES
from tests.support.prometheus_bin import HOW, prometheus_tool

ROOT = Path(__file__).resolve().parents[2]
OPS = ROOT / "ops"
PROM_DIR = OPS / "prometheus"
PROM_CONFIG = PROM_DIR / "prometheus.yml"
ALERTS = PROM_DIR / "alerts.yml"
ALERTS_TEST = PROM_DIR / "alerts_test.yml"
GRAFANA = OPS / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "learnstream.json"
DATASOURCE = GRAFANA / "provisioning" / "datasources" / "prometheus.yml"
DASHBOARD_PROVIDER = GRAFANA / "provisioning" / "dashboards" / "learnstream.yml"
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"

WEB_PORT = 6066

# --------------------------------------------------------------------------
# The metric contract: name -> (type, label names, exposed by the worker).
# --------------------------------------------------------------------------
CONTRACT: dict[str, tuple[str, tuple[str, ...]]] = {
    "learnstream_events_total": ("counter", ("source",)),
    "learnstream_samples_total": ("counter", ("family", "quality")),
    "learnstream_dlq_total": ("counter", ("reason",)),
    "learnstream_pii_entities_total": ("counter", ("entity",)),
    "learnstream_join_misses_total": ("counter", ()),
    "learnstream_pending_joins": ("gauge", ()),
    "learnstream_opted_out_total": ("counter", ("reason",)),
    "learnstream_samples_skipped_total": ("counter", ("family", "reason")),
    "learnstream_preference_pairs_total": ("counter", ("kind",)),
    "learnstream_no_pair_total": ("counter", ("reason",)),
    "learnstream_event_to_sample_seconds": ("histogram", ("family",)),
    "learnstream_event_processing_seconds": ("histogram", ("source",)),
    "learnstream_window_samples": ("gauge", ("family", "quality", "window")),
    "learnstream_late_events_total": ("counter", ("window",)),
    "learnstream_consumer_lag": ("gauge", ("topic", "partition")),
    "learnstream_rebalances_total": ("counter", ()),
    "learnstream_redelivered_total": ("counter", ()),
    "learnstream_non_uuid_ids_total": ("counter", ("field",)),
    "learnstream_naive_timestamps_total": ("counter", ("field",)),
    "learnstream_filled_fields_total": ("counter", ("field",)),
    "learnstream_consent_fence_seconds": ("histogram", ()),
    "learnstream_consent_lag_records": ("gauge", ()),
    "learnstream_consent_fence_waiting": ("gauge", ()),
    "learnstream_event_loop_lag_seconds": ("histogram", ()),
    "learnstream_event_loop_lag_max_seconds": ("gauge", ()),
    "learnstream_expiry_index_built": ("gauge", ()),
    "learnstream_join_waiting_corrections": ("gauge", ()),
    "learnstream_held_writes": ("gauge", ("table",)),
}
# Known label values (a matcher with another value is a typo).
LABEL_VALUES: dict[str, tuple[str, ...]] = {
    "source": ("plans", "decisions", "deltas", "stages", "consent"),
    # Every family the worker emits (streams/samples/sample.py), so a panel by family is
    # evaluated on all of them.
    "family": FAMILIES,
    "quality": QUALITIES,
    "kind": PAIR_KINDS,
    "window": ("5m", "1h"),
    "table": ("plan_state", "quality_5m", "quality_1h"),
}
# Values used only to synthesize test series (open-ended label sets).
SYNTHETIC_VALUES: dict[str, tuple[str, ...]] = {
    **LABEL_VALUES,
    "reason@learnstream_dlq_total": (
        "undecodable",
        "invalid_json",
        "schema_violation",
        "unknown_event_type",
        "plan_state_missing",
        "builder_error",
        "wrong_topic",
    ),
    "reason@learnstream_opted_out_total": ("global", "project", "project_unknown"),
    "reason@learnstream_samples_skipped_total": ("point_off", "rate"),
    "reason@learnstream_no_pair_total": NO_PAIR_REASONS,
    "entity": ("EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IP_ADDRESS"),
    "field": ("plan_id", "event_id", "timestamp"),
    "topic": ("mplp.plans", "mplp.plan_approved"),
    "partition": ("0", "1"),
}
TARGET_LABELS = ("instance", "job")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
JOB = "learnstream"


#: The ``faust_*`` series the worker's sensor exposes (agents/seams/sensor.py), by exposed name.
FAUST_METRICS = FAUST_SERIES


def metric_kind(name: str) -> str | None:
    """Return counter/gauge for an exposed series name, None if not in the contract."""
    if name in CONTRACT:
        kind = CONTRACT[name][0]
        return None if kind == "histogram" else kind
    for suffix in HISTOGRAM_SUFFIXES:
        base = name.removesuffix(suffix)
        if base != name and CONTRACT.get(base, ("",))[0] == "histogram":
            return "counter"
    if name == "up":
        return "gauge"
    if name.startswith("faust_"):
        return FAUST_METRICS.get(name)
    return None


def contract_labels(name: str) -> set[str]:
    for suffix in ("", *HISTOGRAM_SUFFIXES):
        base = name.removesuffix(suffix) if suffix else name
        if base in CONTRACT and (not suffix or CONTRACT[base][0] == "histogram"):
            labels = set(CONTRACT[base][1]) | set(TARGET_LABELS)
            return labels | ({"le"} if suffix == "_bucket" else set())
    return set(TARGET_LABELS) | {"le", "topic", "partition", "operation", "stream", "table"}


# --------------------------------------------------------------------------
# A small PromQL reader: enough to find metric names, matchers and calls.
# --------------------------------------------------------------------------
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)")
_SELECTOR = re.compile(r"(?<![\w.:])([a-zA-Z_:][\w:]*)?\s*\{([^{}]*)\}")
_MATCHER = re.compile(r'\s*([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*,?')
_IDENT = re.compile(r"(?<![\w.:])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()")
_CALL = re.compile(r"(?<![\w.:])([a-zA-Z_][\w]*)\s*\(")
_KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
    "group_right", "bool", "offset", "inf", "nan",
}  # fmt: skip
_AGGREGATORS = {"sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk",
                "quantile", "count_values", "group"}  # fmt: skip


def _strip(expr: str) -> str:
    """Remove strings, matchers, ranges and grouping clauses."""
    s = _STRING.sub('""', expr)
    s = re.sub(r"\{[^{}]*\}", " ", s)
    s = re.sub(r"\[[^\[\]]*\]", " ", s)
    return _GROUPING.sub(" ", s)


def metric_names(expr: str) -> set[str]:
    names = {m.group(1) for m in _IDENT.finditer(_strip(expr))}
    return {n for n in names if n.lower() not in _KEYWORDS}


def selectors(expr: str) -> list[tuple[str, dict[str, tuple[str, str]]]]:
    """(metric, {label: (op, value)}) for every selector with matchers."""
    found = []
    for m in _SELECTOR.finditer(expr):
        body, matchers, pos = m.group(2), {}, 0
        while pos < len(body.strip()):
            mm = _MATCHER.match(body, pos)
            assert mm, f"cannot read matchers {{{body}}} in {expr!r}"
            matchers[mm.group(1)] = (mm.group(2), json.loads(mm.group(3)))
            pos = mm.end()
        found.append((m.group(1) or "", matchers))
    return found


def grouping_labels(expr: str) -> set[str]:
    labels: set[str] = set()
    for m in _GROUPING.finditer(_STRING.sub('""', expr)):
        labels |= {x.strip() for x in m.group(2).split(",") if x.strip()}
    return labels


def enclosing_calls(expr: str, pos: int) -> list[str]:
    """Names of the functions/aggregations whose parentheses enclose ``pos``."""
    s = _GROUPING.sub(
        lambda m: " " * len(m.group(0)), _STRING.sub(lambda m: "_" * len(m.group(0)), expr)
    )
    names, depth = [], 0
    for i in range(pos - 1, -1, -1):
        if s[i] == ")":
            depth += 1
        elif s[i] == "(":
            if depth:
                depth -= 1
                continue
            m = re.search(r"([a-zA-Z_]\w*)\s*$", s[:i])
            names.append(m.group(1) if m else "")
    return names


def range_function_args(expr: str, functions: tuple[str, ...]) -> list[tuple[str, int]]:
    """(first metric name, position) of every call to one of ``functions``."""
    out = []
    for m in _CALL.finditer(_STRING.sub(lambda x: "_" * len(x.group(0)), expr)):
        if m.group(1) in functions:
            arg = re.match(r"\s*([a-zA-Z_:][\w:]*)", expr[m.end() :])
            out.append((arg.group(1) if arg else "", m.start()))
    return out


def check_promql(expr: str, where: str) -> None:
    """Contract checks shared by the dashboard and the alert rules."""
    assert "$" not in expr, f"{where}: Grafana variables/macros are not PromQL: {expr}"
    names = metric_names(expr)
    assert names, f"{where}: no metric in {expr!r}"
    for name in names:
        assert metric_kind(name), f"{where}: {name!r} is not in the metric contract ({expr})"
    for name, matchers in selectors(expr):
        allowed = contract_labels(name)
        for label, (op, value) in matchers.items():
            assert label in allowed, f"{where}: {name} has no label {label!r} ({expr})"
            if op in ("=", "!=") and label in LABEL_VALUES and name != "up":
                assert value in LABEL_VALUES[label], f"{where}: {label}={value!r}? ({expr})"
    known = set().union(*(contract_labels(n) for n in names))
    for label in grouping_labels(expr):
        assert label in known, f"{where}: grouping by unknown label {label!r} ({expr})"
    # Counters only through rate()/increase(), and those always summed
    # across workers before anything else (never a mean of per-worker ratios).
    for name, pos in range_function_args(expr, ("rate", "increase", "irate")):
        assert metric_kind(name) == "counter", f"{where}: rate/increase of non-counter {name}"
        assert "sum" in enclosing_calls(expr, pos), (
            f"{where}: rate of {name} is not summed ({expr})"
        )
    calls = {m.group(1) for m in _CALL.finditer(_strip(expr))}
    assert "avg" not in calls, f"{where}: use sum(...)/sum(...), not avg ({expr})"


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------
def load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def all_panels(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for p in panels:
        out.append(p)
        out.extend(all_panels(p.get("panels", [])))
    return out


def dashboard_targets() -> list[tuple[str, dict[str, Any]]]:
    return [
        (p.get("title", "?"), t)
        for p in all_panels(dashboard()["panels"])
        for t in p.get("targets", [])
    ]


def alert_rules() -> list[dict[str, Any]]:
    groups = load_yaml(ALERTS)["groups"]
    return [r for g in groups for r in g["rules"] if "alert" in r]


def compose() -> dict[str, Any]:
    return load_yaml(COMPOSE)


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def promtool() -> str:
    path = prometheus_tool("promtool")
    if path is None:
        pytest.fail(f"promtool not found: {HOW}")
    return path


def run_promtool(*args: str, cwd: Path = ROOT) -> None:
    proc = subprocess.run(
        [promtool(), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, f"promtool {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"


# --------------------------------------------------------------------------
# YAML / JSON syntax
# --------------------------------------------------------------------------
YAML_FILES = [
    COMPOSE,
    PROM_CONFIG,
    ALERTS,
    ALERTS_TEST,
    DATASOURCE,
    DASHBOARD_PROVIDER,
]


@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_yaml_parses(path: Path) -> None:
    assert path.is_file(), f"{path} is missing"
    assert isinstance(load_yaml(path), dict)


def test_every_yaml_under_ops_parses() -> None:
    files = sorted(OPS.rglob("*.yml")) + sorted(OPS.rglob("*.yaml"))
    assert files
    for path in files:
        assert isinstance(load_yaml(path), dict), path


def test_dashboard_json_parses() -> None:
    d = dashboard()
    assert d["uid"] == "learnstream"
    assert d["schemaVersion"] >= 36
    assert d["panels"]
    assert not d.get("templating", {}).get("list"), (
        "no template variables: exprs must be plain PromQL"
    )


# --------------------------------------------------------------------------
# Dockerfile / .dockerignore
# --------------------------------------------------------------------------
def test_dockerfile_entrypoint_and_user() -> None:
    ins = dockerfile_instructions()
    first_from = next(rest for word, rest in ins if word == "FROM")
    assert first_from.startswith("python:3.11-slim")
    entrypoint = [rest for word, rest in ins if word == "ENTRYPOINT"][-1]
    assert json.loads(entrypoint) == ["learnstream"]
    cmd = [rest for word, rest in ins if word == "CMD"][-1]
    assert json.loads(cmd) == ["worker"]
    users = [rest for word, rest in ins if word == "USER"]
    assert users, "the image must switch to a non-root USER"
    assert users[-1] not in ("root", "0"), "the image must run as a non-root user"
    exposed = " ".join(rest for word, rest in ins if word == "EXPOSE").split()
    assert str(WEB_PORT) in exposed
    assert any(w == "RUN" and "pip install" in r and re.search(r"\s\.(\s|$)", r) for w, r in ins)


def test_dockerignore_keeps_what_the_build_needs() -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ".git" in patterns
    needed = ["pyproject.toml", "README.md", "learnstream", "learnstream/__init__.py", "streams"]
    needed += ["agents", "agents/cli/main.py", "schemas"]
    for path in needed:
        hits = [
            p for p in patterns if not p.startswith("!") and fnmatch.fnmatch(path, p.lstrip("/"))
        ]
        assert not hits, f".dockerignore excludes {path} (pattern {hits})"
    copied = [rest for word, rest in dockerfile_instructions() if word == "COPY"]
    for rest in copied:
        for src in rest.split()[:-1]:
            if not src.startswith("--") and src != ".":
                assert (ROOT / src).exists() or src == "README.md", f"COPY {src}: missing"


# --------------------------------------------------------------------------
# docker compose
# --------------------------------------------------------------------------
def _bind_sources(service: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for v in service.get("volumes", []):
        if isinstance(v, str):
            parts = v.split(":")
            if parts[0].startswith((".", "/", "~")):
                out.append((parts[0], parts[1]))
        elif v.get("type") == "bind":
            out.append((v["source"], v["target"]))
    return out


def test_compose_services() -> None:
    services = compose()["services"]
    assert {"kafka", "topics", "worker", "prometheus", "grafana"} <= set(services)


def test_compose_mounted_paths_exist() -> None:
    for name, service in compose()["services"].items():
        for source, _target in _bind_sources(service):
            assert (ROOT / source).exists(), f"{name} mounts {source}, which is not in the repo"


def test_compose_builds_use_the_dockerfile() -> None:
    builds = {n: s for n, s in compose()["services"].items() if "build" in s}
    assert {"topics", "worker"} <= set(builds)
    for name, service in builds.items():
        build = service["build"]
        context = ROOT / (build if isinstance(build, str) else build.get("context", "."))
        dockerfile = (
            "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
        )
        assert (context / dockerfile).resolve() == DOCKERFILE.resolve(), name
        command = service.get("command", [])
        command = command.split() if isinstance(command, str) else command
        assert command, f"{name}: no command"
        assert command[0] != "learnstream", (
            f"{name}: ENTRYPOINT is already `learnstream`, command must be its arguments"
        )
    assert builds["topics"]["command"] == ["topics", "create"]
    assert builds["worker"]["command"] == ["worker"]


def _merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Merge a compose override the way docker compose does for maps (recursively)."""
    out = dict(base)
    for key, value in override.items():
        both = isinstance(value, dict) and isinstance(base.get(key), dict)
        out[key] = _merged(base[key], value) if both else value
    return out


def test_compose_cluster_override_runs_three_brokers_in_one_quorum() -> None:
    merged = _merged(compose(), load_yaml(ROOT / "docker-compose.cluster.yml"))
    services = merged["services"]
    nodes = {name: services[name]["environment"] for name in ("kafka", "kafka-2", "kafka-3")}
    assert sorted(env["KAFKA_NODE_ID"] for env in nodes.values()) == [1, 2, 3]
    voters = {env["KAFKA_CONTROLLER_QUORUM_VOTERS"] for env in nodes.values()}
    assert voters == {"1@kafka:9093,2@kafka-2:9093,3@kafka-3:9093"}
    assert {env["CLUSTER_ID"] for env in nodes.values()} == {nodes["kafka"]["CLUSTER_ID"]}
    for name, env in nodes.items():
        assert env["KAFKA_ADVERTISED_LISTENERS"] == f"PLAINTEXT://{name}:9092"
        assert env["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"] == 2
    for name in ("topics", "worker"):
        env = services[name]["environment"]
        urls = env["LEARNSTREAM_BROKER_URL"].split(";")
        assert urls == [f"kafka://{node}:9092" for node in nodes], name
        # replication is learnstream's default for three brokers, not pinned to one
        assert "LEARNSTREAM_TOPICS__REPLICATION_FACTOR" not in env
        assert set(nodes) <= set(services[name]["depends_on"])
    assert services["worker"]["environment"]["LEARNSTREAM_WEB_HOST"] == "0.0.0.0"  # noqa: S104


def test_compose_worker_is_scalable() -> None:
    services = compose()["services"]
    worker = services["worker"]
    assert "container_name" not in worker
    assert "ports" not in worker, "a fixed host port breaks --scale worker=N"
    assert str(WEB_PORT) in [str(p) for p in worker.get("expose", [])]
    env = worker["environment"]
    assert env["LEARNSTREAM_BROKER_URL"] == "kafka://kafka:9092"
    assert env["LEARNSTREAM_WEB_HOST"] == "0.0.0.0"  # noqa: S104
    assert worker["depends_on"]["topics"]["condition"] == "service_completed_successfully"
    topics = services["topics"]
    assert topics["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert str(topics.get("restart")) == "no"


def test_compose_kafka_is_single_node_kraft() -> None:
    kafka = compose()["services"]["kafka"]
    assert kafka["image"].startswith("apache/kafka:4.")
    env = {k: str(v) for k, v in kafka["environment"].items()}
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"{env['KAFKA_NODE_ID']}@kafka:9093"
    assert env["KAFKA_ADVERTISED_LISTENERS"] == "PLAINTEXT://kafka:9092"
    assert "CONTROLLER://:9093" in env["KAFKA_LISTENERS"]
    for key in (
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR",
    ):
        assert env[key] == "1", key
    assert "kafka-broker-api-versions.sh" in " ".join(kafka["healthcheck"]["test"])


def test_compose_env_vars_are_settings() -> None:
    """Every LEARNSTREAM_* variable set by compose/Dockerfile is a real setting."""
    from learnstream.streams.config.settings import Settings

    fields = set(Settings.model_fields)
    names = set()
    for service in compose()["services"].values():
        env = service.get("environment", {})
        names |= set(env) if isinstance(env, dict) else {e.split("=")[0] for e in env}
    for word, rest in dockerfile_instructions():
        if word == "ENV":
            names |= set(re.findall(r"(LEARNSTREAM_\w+)=", rest))
    for name in sorted(n for n in names if n.startswith("LEARNSTREAM_")):
        top = name.removeprefix("LEARNSTREAM_").lower().split("__")[0]
        assert top in fields, f"{name}: Settings has no field {top!r}"


def test_compose_monitoring_wiring() -> None:
    services = compose()["services"]
    prom_mounts = dict(_bind_sources(services["prometheus"]))
    assert (ROOT / "ops/prometheus").resolve() in {(ROOT / s).resolve() for s in prom_mounts}
    graf = {(ROOT / s).resolve(): t for s, t in _bind_sources(services["grafana"])}
    assert graf[(GRAFANA / "provisioning").resolve()] == "/etc/grafana/provisioning"
    dash_dir = graf[(GRAFANA / "dashboards").resolve()]
    provider = load_yaml(DASHBOARD_PROVIDER)["providers"][0]
    assert provider["type"] == "file"
    assert provider["options"]["path"] == dash_dir
    env = {k: str(v).lower() for k, v in services["grafana"]["environment"].items()}
    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "true"
    assert env["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "viewer"
    # the datasource points at the compose service
    ds = load_yaml(DATASOURCE)["datasources"][0]
    assert ds["uid"] == "prometheus"
    assert ds["url"] == "http://prometheus:9090"
    assert "9090:9090" in [str(p) for p in services["prometheus"]["ports"]]


# --------------------------------------------------------------------------
# Prometheus
# --------------------------------------------------------------------------
def test_prometheus_config_scrapes_the_workers() -> None:
    cfg = load_yaml(PROM_CONFIG)
    assert cfg["global"]["scrape_interval"] == "15s"
    assert "alerts.yml" in cfg["rule_files"]
    for rule_file in cfg["rule_files"]:
        assert (PROM_DIR / rule_file).is_file(), rule_file
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    job = jobs[JOB]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    worker = compose()["services"]["worker"]
    targets = [t for sc in job.get("static_configs", []) for t in sc["targets"]]
    dns = job.get("dns_sd_configs", [])
    assert targets or dns
    assert all(t.endswith(f":{WEB_PORT}") for t in targets)
    for sd in dns:
        assert sd["type"] == "A"
        assert sd["port"] == WEB_PORT
        assert "worker" in sd["names"], "DNS SD must resolve the compose service name"
    assert str(WEB_PORT) in map(str, worker["expose"])


def test_promtool_check_config() -> None:
    run_promtool("check", "config", str(PROM_CONFIG))


def test_promtool_check_rules() -> None:
    run_promtool("check", "rules", str(ALERTS))


def test_promtool_test_rules() -> None:
    run_promtool("test", "rules", str(ALERTS_TEST.name), cwd=PROM_DIR)


EXPECTED_ALERTS = {
    "LearnstreamRejectionRateHigh",
    "LearnstreamDLQNonZero",
    "LearnstreamJoinMisses",
    "LearnstreamNoSamples",
    "LearnstreamConsumerLagGrowing",
    "LearnstreamWorkerDown",
}


def test_alert_rules_are_complete() -> None:
    groups = load_yaml(ALERTS)["groups"]
    assert [g["name"] for g in groups] == ["learnstream"]
    rules = {r["alert"]: r for r in alert_rules()}
    assert set(rules) >= EXPECTED_ALERTS
    for name, rule in rules.items():
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), name
        for key in ("summary", "description", "runbook"):
            assert rule["annotations"].get(key, "").strip(), f"{name}: no {key}"
    assert rules["LearnstreamRejectionRateHigh"]["for"] == "15m"
    assert "0.5" in rules["LearnstreamRejectionRateHigh"]["expr"]
    assert rules["LearnstreamDLQNonZero"]["for"] == "10m"
    assert rules["LearnstreamConsumerLagGrowing"]["for"] == "10m"
    assert rules["LearnstreamWorkerDown"]["for"] == "2m"
    assert 'up{job="learnstream"} == 0' in rules["LearnstreamWorkerDown"]["expr"]


@pytest.mark.parametrize("rule", alert_rules(), ids=lambda r: r["alert"])
def test_alert_expr_uses_the_contract(rule: dict[str, Any]) -> None:
    check_promql(rule["expr"], rule["alert"])


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    tests = load_yaml(ALERTS_TEST)["tests"]
    firing: set[str] = set()
    silent: set[str] = set()
    for case in tests:
        for t in case.get("alert_rule_test", []):
            (firing if t.get("exp_alerts") else silent).add(t["alertname"])
    names = {r["alert"] for r in alert_rules()}
    assert names - firing == set(), "alerts never tested firing"
    assert names - silent == set(), "alerts never tested not firing"


# --------------------------------------------------------------------------
# Grafana dashboard
# --------------------------------------------------------------------------
def test_dashboard_panels_are_well_formed() -> None:
    panels = all_panels(dashboard()["panels"])
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    for p in panels:
        assert {"h", "w", "x", "y"} <= set(p["gridPos"]), p.get("title")
        if p["type"] == "row":
            continue
        assert p["datasource"]["uid"] == "prometheus", p["title"]
        assert p["targets"], f"panel {p['title']!r} has no query"
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs)), p["title"]
        for t in p["targets"]:
            assert t.get("datasource", {"uid": "prometheus"})["uid"] == "prometheus"


@pytest.mark.parametrize(
    ("title", "target"),
    dashboard_targets(),
    ids=[f"{t}/{x['refId']}" for t, x in dashboard_targets()],
)
def test_dashboard_expr_uses_the_contract(title: str, target: dict[str, Any]) -> None:
    assert target.get("expr", "").strip(), f"{title}: target without expr"
    check_promql(target["expr"], title)


def test_dashboard_has_the_required_panels() -> None:
    exprs = "\n".join(t["expr"] for _, t in dashboard_targets())
    for window in ("5m", "1h"):
        for quality in ("good", "acceptable", "poor"):
            assert f'increase(learnstream_samples_total{{quality="{quality}"}}[{window}])' in exprs
            assert f'learnstream_window_samples{{quality="{quality}",window="{window}"}}' in exprs
    for needle in (
        "rate(learnstream_samples_total",
        "learnstream_dlq_total",
        "learnstream_pii_entities_total",
        "histogram_quantile(0.5, sum by (family, le) "
        "(rate(learnstream_event_to_sample_seconds_bucket",
        "histogram_quantile(0.99, sum by (family, le) "
        "(rate(learnstream_event_to_sample_seconds_bucket",
        "learnstream_pending_joins",
        "learnstream_consumer_lag",
        "learnstream_rebalances_total",
        "rate(learnstream_events_total",
        "sum by (family) (rate(learnstream_samples_skipped_total",
        "sum by (kind) (rate(learnstream_preference_pairs_total",
    ):
        assert needle in exprs, needle


def test_the_contract_is_what_the_worker_defines() -> None:
    """Each contract series is a metric of streams/observe/metrics.py, of that type and
    with those labels (a renamed metric or label breaks the dashboard silently otherwise)."""
    defined = {}
    for metric in vars(Metrics()).values():
        if hasattr(metric, "_labelnames"):
            suffix = "_total" if metric._type == "counter" else ""
            defined[metric._name + suffix] = (metric._type, tuple(metric._labelnames))
    for name, (kind, labels) in CONTRACT.items():
        assert name in defined, f"{name} is in the contract, not in streams/observe/metrics.py"
        assert defined[name] == (kind, labels), name


# Panels that show one line per family: each must show every family the worker emits.
FAMILY_PANELS = {
    "Samples out /s by family",
    "Samples skipped /s by family",
    "Event → sample latency",
    *(
        f"{kind} rate · {w}"
        for kind in ("Approval", "Correction", "Rejection")
        for w in ("5m", "1h")
    ),
}


def family_targets() -> list[tuple[str, dict[str, Any]]]:
    return [(title, t) for title, t in dashboard_targets() if "{{family}}" in t["legendFormat"]]


def test_every_family_is_on_the_dashboard(tmp_path: Path) -> None:
    """Every family of streams/samples/sample.py comes out of every per-family query (no
    query filters the families down to a list that a new family would be missing from)."""
    targets = family_targets()
    assert {title for title, _ in targets} >= FAMILY_PANELS
    expected = [{"labels": f'{{family="{f}"}}', "value": 1} for f in FAMILIES]
    tests = [
        {
            "expr": f"count by (family) (({t['expr']}) >= -Inf) > bool 0",
            "eval_time": f"{EVAL_MINUTES}m",
            "exp_samples": expected,
        }
        for _, t in targets
    ]
    names = set().union(*(metric_names(t["expr"]) for _, t in targets))
    spec = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "name": "every family",
                "interval": "1m",
                "input_series": synthetic_series(names),
                "promql_expr_test": tests,
            }
        ],
    }
    path = tmp_path / "families_test.yml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    run_promtool("test", "rules", path.name, cwd=tmp_path)


# --- evaluate every dashboard query with promtool on synthetic data ---------
# Per worker and minute: good 6, acceptable 3, poor 1 sample of every family,
# so every approval / correction / rejection rate must come out 0.6 / 0.3 / 0.1;
# the tumbling-window gauges hold 60 / 30 / 10 for the same ratios.
QUALITY_PER_MINUTE = {"good": 6, "acceptable": 3, "poor": 1}
RATE_PANELS = {"Approval": 0.6, "Correction": 0.3, "Rejection": 0.1}
EVAL_MINUTES = 120
SERIES_MINUTES = 150


def _label_values(metric: str, label: str) -> tuple[str, ...]:
    return SYNTHETIC_VALUES.get(f"{label}@{metric}") or SYNTHETIC_VALUES[label]


def _series_string(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{inner}}}"


def synthetic_series(names: set[str]) -> list[dict[str, str]]:
    series = []
    instances = ("10.0.0.2:6066", "10.0.0.3:6066")
    n = SERIES_MINUTES
    for inst in instances:
        series.append(
            {"series": _series_string("up", {"job": JOB, "instance": inst}), "values": f"1x{n}"}
        )
    for metric, (kind, label_names) in CONTRACT.items():
        combos = itertools.product(instances, *(_label_values(metric, ln) for ln in label_names))
        for inst, *values in combos:
            labels = {"job": JOB, "instance": inst, **dict(zip(label_names, values, strict=True))}
            if kind == "histogram":
                bounds = ("0.1", "1", "10", "60", "+Inf")
                for i, le in enumerate(bounds):
                    s = _series_string(f"{metric}_bucket", {**labels, "le": le})
                    series.append({"series": s, "values": f"0+{2 * (i + 1)}x{n}"})
                series.append(
                    {"series": _series_string(f"{metric}_count", labels), "values": f"0+10x{n}"}
                )
                series.append(
                    {"series": _series_string(f"{metric}_sum", labels), "values": f"0+50x{n}"}
                )
            elif metric == "learnstream_samples_total":
                step = QUALITY_PER_MINUTE[labels["quality"]]
                series.append({"series": _series_string(metric, labels), "values": f"0+{step}x{n}"})
            elif metric == "learnstream_window_samples":
                value = 10 * QUALITY_PER_MINUTE[labels["quality"]]
                series.append({"series": _series_string(metric, labels), "values": f"{value}x{n}"})
            elif kind == "counter":
                series.append({"series": _series_string(metric, labels), "values": f"0+2x{n}"})
            else:
                series.append({"series": _series_string(metric, labels), "values": f"0+5x{n}"})
    for name in sorted(n for n in names if n.startswith("faust_")):
        labels = {"job": JOB, "instance": instances[0]}
        if name.endswith("_bucket"):
            for i, le in enumerate(("5", "50", "500", "+Inf")):
                s = _series_string(name, {**labels, "le": le})
                series.append({"series": s, "values": f"0+{i + 1}x{n}"})
        elif FAUST_METRICS.get(name) == "counter":
            series.append({"series": _series_string(name, labels), "values": f"0+3x{n}"})
        else:
            series.append({"series": _series_string(name, labels), "values": f"1x{n}"})
    return series


def test_dashboard_queries_evaluate_with_promtool(tmp_path: Path) -> None:
    """Every panel query returns data on contract-shaped series (promtool test rules),
    and the quality-rate panels compute exactly good|acceptable|poor / total."""
    targets = dashboard_targets()
    names = set().union(*(metric_names(t["expr"]) for _, t in targets))
    expr_tests = []
    rate_panels_seen = set()
    for title, target in targets:
        expr = target["expr"]
        expr_tests.append(
            {
                "expr": f"count(({expr}) >= -Inf) > bool 0",
                "eval_time": f"{EVAL_MINUTES}m",
                "exp_samples": [{"labels": "{}", "value": 1}],
            }
        )
        kind = re.match(r"(Approval|Correction|Rejection) rate", title)
        if kind:
            rate_panels_seen.add(kind.group(1))
            expected = RATE_PANELS[kind.group(1)]
            expr_tests.append(
                {
                    "expr": f"count(abs(({expr}) - {expected}) > 0.0001) or vector(0)",
                    "eval_time": f"{EVAL_MINUTES}m",
                    "exp_samples": [{"labels": "{}", "value": 0}],
                }
            )
    assert rate_panels_seen == set(RATE_PANELS)
    spec = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "name": "dashboard queries",
                "interval": "1m",
                "input_series": synthetic_series(names),
                "promql_expr_test": expr_tests,
            }
        ],
    }
    path = tmp_path / "dashboard_test.yml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    run_promtool("test", "rules", path.name, cwd=tmp_path)


# --------------------------------------------------------------------------
# The PromQL reader itself
# --------------------------------------------------------------------------
def test_promql_reader() -> None:
    expr = (
        "histogram_quantile(0.99, sum by (family, le) "
        '(rate(learnstream_event_to_sample_seconds_bucket{family="delta_impact"}[5m])))'
        ' / on() group_left sum(up{job="learnstream"}) > bool 1e3'
    )
    assert metric_names(expr) == {"learnstream_event_to_sample_seconds_bucket", "up"}
    assert grouping_labels(expr) == {"family", "le"}
    assert selectors(expr)[0] == (
        "learnstream_event_to_sample_seconds_bucket",
        {"family": ("=", "delta_impact")},
    )
    [(name, pos)] = range_function_args(expr, ("rate",))
    assert name == "learnstream_event_to_sample_seconds_bucket"
    assert enclosing_calls(expr, pos) == ["sum", "histogram_quantile"]
    with pytest.raises(AssertionError, match="not summed"):
        check_promql("rate(learnstream_dlq_total[5m])", "t")
    with pytest.raises(AssertionError, match="not in the metric contract"):
        check_promql("sum(rate(learnstream_dlq[5m]))", "t")
    with pytest.raises(AssertionError, match="non-counter"):
        check_promql("sum(rate(learnstream_pending_joins[5m]))", "t")
    with pytest.raises(AssertionError, match="quality='bad'"):
        check_promql('sum(rate(learnstream_samples_total{quality="bad"}[5m]))', "t")
    with pytest.raises(AssertionError, match="not PromQL"):
        check_promql("sum(rate(learnstream_dlq_total[$__rate_interval]))", "t")


def test_getting_promtool_touches_nothing_outside_the_project() -> None:
    """The script `make test` runs downloads a package file; it installs and stops nothing."""
    script = (PROM_DIR / "ensure-promtool.sh").read_text()
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    for forbidden in ("apt-get install", "pkill", "killall", "systemctl", "service ", "kill "):
        assert forbidden not in code, forbidden
    assert "apt-get download" in code
    assert 'dpkg-deb -x "$work"/prometheus_*.deb' in code
    makefile = (ROOT / "Makefile").read_text()
    assert "ops/prometheus/ensure-promtool.sh" in makefile


def test_promtool_found_is_a_working_binary() -> None:
    proc = subprocess.run(
        [promtool(), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0
    assert (proc.stdout + proc.stderr).startswith("promtool, version ")
