"""Text with nothing private in it, as agents write it: what masking must leave alone.

Plan steps, code, stack traces, paths, ids, versions, hashes, timestamps, links without
credentials and numbers with units. Masking any of it destroys training data.
"""

from __future__ import annotations

import uuid

from benchmarks.recall.source import Source

__all__ = ["SHAPES", "clean_sentence"]

_SERVICES = ("orders-api", "billing-worker", "auth-gateway", "search-indexer", "payments",
             "notifier", "inventory", "checkout-web", "ledger", "feature-flags")  # fmt: skip
_MODULES = ("session_handler", "retry_policy", "order_mapper", "cache", "rate_limiter", "schema")
_CLASSES = ("OrderServiceClient", "KafkaConsumerGroup", "RetryBudget", "InvoiceRenderer",
            "SessionStore", "FeatureFlagCache", "LedgerEntry", "PaymentIntentMapper")  # fmt: skip
_ERRORS = ("KeyError", "TimeoutError", "ValueError", "ConnectionResetError", "AttributeError")
_TOOLS = ("Grafana", "Kubernetes", "PostgreSQL", "Redis", "Terraform", "Prometheus", "Sentry")
_UNITS = ("ms", "s", "MiB", "GiB", "req/s", "%", "rows", "retries", "pods")
_DOCS = ("docs.python.org/3/library/asyncio-task.html", "kubernetes.io/docs/concepts/workloads",
         "wiki.corp.internal/runbooks/{svc}", "grafana.ops.acme.local/d/{h7}/{svc}",
         "github.com/acme/{svc}/pull/{n}", "example.com/status")  # fmt: skip


def _fill(src: Source, template: str) -> str:
    """Fill a clean template's fields with fresh random values."""
    rng = src.rng
    sha = src.chars("0123456789abcdef", 40)
    return template.format(
        svc=rng.choice(_SERVICES),
        mod=rng.choice(_MODULES),
        cls=rng.choice(_CLASSES),
        err=rng.choice(_ERRORS),
        tool=rng.choice(_TOOLS),
        unit=rng.choice(_UNITS),
        n=rng.randint(2, 999),
        p99=rng.randint(20, 900),
        line=rng.randint(10, 480),
        code=rng.choice((400, 404, 409, 429, 500, 502, 503)),
        ver=f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}",
        sha=sha,
        h7=sha[:7],
        digest=src.chars("0123456789abcdef", 64),
        uuid=uuid.UUID(int=rng.getrandbits(128), version=4),
        ts=f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z",
        doc=rng.choice(_DOCS).format(svc=rng.choice(_SERVICES), h7=sha[:7], n=rng.randint(1, 4000)),
    )


#: Shape -> (sample field, template).
SHAPES: dict[str, tuple[str, str]] = {
    "plan step": ("step", "Measure latency of {svc} for {n} minutes before and after the change"),
    "plan step, tool": ("step", "Add a {tool} alert when {svc} exceeds p99 {p99} ms"),
    "objective": ("objective", "Add a Redis cache in front of {svc} to cut p99 from {p99} ms"),
    "rejection": ("reason", "Missing a rollback step for {svc} {ver}"),
    "correction": ("correction", "Use the staging cluster, not production, and retry {n} times"),
    "code": ("prompt", "Why does `for item in batch[:{n}]: {mod}.flush(item)` block the loop?"),
    "sql": ("step", "SELECT id, status FROM orders WHERE created_at > now() - interval '{n} days'"),
    "shell": ("step", "kubectl scale deployment/{svc} --replicas={n} -n prod && kubectl get pods"),
    "stack trace": ("correction", 'Traceback (most recent call last):\n  File "/srv/app/{mod}.py", '
                    "line {line}, in handle\n    return self.{mod}[key]\n{err}: 'tenant'"),
    "java trace": ("reason", "at com.acme.{cls}.process({cls}.java:{line}) after {err}"),
    "path": ("step", "Edit src/{svc}/{mod}.py:{line} and tests/unit/test_{mod}.py"),
    "uuid": ("correction", "Plan {uuid} replaces the one from yesterday"),
    "word id": ("reason", "Duplicate of INC-{n} and plan-{n}; see decision-0{n}"),
    "version": ("objective", "Upgrade {svc} from v{ver} to v{ver}-rc.{n}"),
    "git hash": ("step", "Deploy commit {sha} ({h7}) to canary"),
    "timestamp": ("reason", "The job started at {ts} and timed out after {n} s"),
    "url": ("prompt", "Summarise https://{doc} for the team"),
    "numbers": ("objective", "Keep {svc} under {p99} {unit} at {n} req/s, HTTP {code} below 0.1 %"),
    "class names": ("prompt", "Should {cls} own the retry budget or the {svc} client?"),
    "container digest": ("step", "Pin {svc} to image@sha256:{digest}"),
}  # fmt: skip


def clean_sentence(src: Source, shape: str) -> tuple[str, str]:
    """Return (field, sentence) of a clean shape, with fresh values."""
    field, template = SHAPES[shape]
    return field, _fill(src, template)
