"""Render a benchmark result as the Markdown section appended to RESULTS.md."""

from __future__ import annotations

from statistics import median
from typing import Any

__all__ = ["render"]

_NA = "–"


def _num(value: float | None, digits: int = 0) -> str:
    return _NA if value is None else f"{value:,.{digits}f}"


def _target(value: float | None, ok: bool, text: str) -> str:
    if value is None:
        return f"{text}: not measured"
    return f"{text}: {'met' if ok else '**missed**'}"


def _header(res: dict[str, Any]) -> list[str]:
    meta, broker = res["meta"], res["broker"]
    single = " — both sides send one record per batch" if broker["kind"] == "embedded" else ""
    return [
        f"## {meta['date']} — {broker['version']} ({res['mode']})",
        "",
        f"- machine: {meta['cores']} cores, {meta['ram_gib']} GiB RAM, {meta['cpu']}; "
        f"Python {meta['python']}; 1-min load average {meta['load_avg_start']} at start, "
        f"{meta.get('load_avg_end', _NA)} at the end",
        f"- command: `{meta['command']}`; commit `{meta['commit']}` at the start, "
        f"`{meta.get('commit_end', _NA)}` at the end (others commit while it runs)",
        f"- broker: {broker['version']} ({broker['kind']}) on {broker['bootstrap']}, "
        f"4 partitions per topic{single}",
        f"- each figure is the median of {res['sizes']['repeats']} run(s); "
        f"results: `{res.get('json', _NA)}`",
        "",
    ]


#: Issue 15's targets per configuration: (× Faust floor, × peer, CPU ms per event), None = none.
GOALS: dict[str, tuple[float | None, float | None, float | None]] = {
    "pii-on": (0.5, 0.5, 0.6),
    "pii-off": (0.6, None, None),
}


def _throughput(section: dict[str, Any], events: int) -> list[str]:
    base = section["baseline"]["median"].get("events_per_s")
    lines = [
        f"### Throughput — {events:,} input events {_fed(section)}, first→last output timestamp",
        "",
        "| configuration | input events/s | samples/s | × baseline | × Faust floor | × peer "
        "| CPU ms/event | changelog records/event | runs ok | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| baseline: aiokafka consume → json.loads → produce, 1 process | {_num(base)} | "
        f"{_NA} | 1.00 | {_NA} | {_NA} | {_cpu(section['baseline'])} | {_NA} | "
        f"{section['baseline']['complete']} | |",
    ]
    floor = section.get("faust-floor")
    if floor is not None:  # absent from results recorded before it existed
        lines.append(
            "| Faust floor: one Faust agent, consume → json.loads → send, 1 process | "
            f"{_num(floor['median'].get('events_per_s'))} | {_NA} | "
            f"{_num(floor.get('ratio'), 2)} | 1.00 | {_NA} | {_cpu(floor)} | {_NA} | "
            f"{floor['complete']} | |"
        )
    for key, row in section.items():
        if key in ("baseline", "faust-floor"):
            continue
        if "median" not in row:
            lines.append(f"| {row['label']} | {row['status']}: `{row['install']}` ||||||||| ")
            continue
        lines.append(_config_line(key, row))
    return [*lines, "", *_paired(section), *_changelogs(section)]


def _fed(section: dict[str, Any]) -> str:
    """Say how the workers were fed: pre-loaded, or published at a rate to a running one."""
    paced = section.get("baseline", {}).get("paced")
    return "pre-loaded" if paced is None else f"published at {paced:g}/s to a ready worker"


def _paired(section: dict[str, Any]) -> list[str]:
    """Return what the worker did against the Faust peer round by round, and how busy the
    machine was as each round began (empty for results recorded before they were kept)."""
    lines = []
    for row in section.values():
        ratios = row.get("fpeer_rounds") if isinstance(row, dict) else None
        if ratios:
            each = ", ".join(f"{r:.2f}" for r in ratios)
            lines.append(
                f"- {row['label']}, × Faust peer paired round by round: median "
                f"{median(ratios):.2f}, spread {min(ratios):.2f}–{max(ratios):.2f} ({each})."
            )
    rounds = section.get("baseline", {}).get("rounds")
    if rounds:
        loads = ", ".join(f"{r['load']:.2f}" for r in rounds)
        waited = _quiet_wait(rounds, "rounds ")
        lines.append(f"- 1-minute load average as each round began: {loads}{waited}.")
    return [*lines, ""] if lines else []


def _quiet_wait(starts: list[dict[str, Any]], noun: str = "") -> str:
    """Say how long each round waited for a quiet machine and how many began quiet, from
    the round starts ``round_start`` recorded (the same for throughput and latency)."""
    limit = starts[0].get("limit") if starts else None
    if limit is None:
        return " (no quiet wait asked: `--quiet-load`)"
    quiet = sum(1 for start in starts if start["quiet"])
    return f"; waited for at most {limit} before each: {quiet} of {len(starts)} {noun}began quiet"


#: What the changelog figures count (issue 31), printed under their table.
CHANGELOG_NOTE = (
    "Changelog records per input event: the records of every changelog topic of the run's "
    "app id (`<app id>-<table>-changelog`), read back from the broker once the process has "
    "stopped, tombstones included and transaction markers not; the median of the complete "
    "runs. A worker writes what it holds in memory (at_least_once, "
    "`learnstream_held_writes`) in its last commit when it is stopped, so those records are "
    'counted with the others; "held at stop" counts values the benchmark added itself for '
    "runs before 29 Nov evening, when a stop dropped them. End offsets (the "
    "breakdown's last column) count record batches on the embedded broker, and transaction "
    "markers too under exactly_once. Distinct keys: the keys those records hold, per input "
    "event: what a worker writing each key once in the whole run would write, the floor of "
    "a write-behind buffer (– for results recorded before they were counted). "
    "A peer shows 0.00 when its process writes no changelog (it has no tables)."
)


def _changelogs(section: dict[str, Any]) -> list[str]:
    """Return the changelog records per input event by table, workers first, for each row
    whose process has tables, and what is counted (nothing for results recorded before)."""
    counted = {key: row for key, row in section.items() if row.get("changelog")}
    if not counted:
        return []
    keys = sorted(
        (key for key, row in counted.items() if row["changelog"]["tables"]),
        key=lambda key: key.startswith(("peer:", "fpeer:")),  # stable: workers first
    )
    if not keys:
        return [CHANGELOG_NOTE, ""]
    tables = sorted({table for key in keys for table in counted[key]["changelog"]["tables"]})
    lines = [
        "| configuration | " + " | ".join(f"`{t}`" for t in tables) + " | total "
        "| of which held at stop | of which tombstones | end offsets | distinct keys |",
        "|---|" + "---:|" * (len(tables) + 5),
    ]
    for key in keys:
        row, counts = counted[key], counted[key]["changelog"]
        cells = [_num(counts["tables"].get(t, 0.0), 3) for t in tables]  # 3: rare writes too
        lines.append(
            f"| {row['label']} | "
            + " | ".join([*cells, f"**{_num(counts['total'], 3)}**"])
            + f" | {_num(counts.get('held', 0.0), 3)} | {_num(counts['tombstones'], 3)} "
            f"| {_num(counts['offsets'], 3)} | {_num(counts.get('keys'), 3)} |"
        )
    return [*lines, "", CHANGELOG_NOTE, ""]


def _config_line(key: str, row: dict[str, Any]) -> str:
    """Return the table line of a learnstream configuration or of the DIY peer."""
    med, peer = row["median"], key.startswith("peer:")
    label = row["label"] + (f" ({row['status']})" if row.get("status", "ok") != "ok" else "")
    return (
        f"| {label} | {_num(med.get('events_per_s'))} | {_num(med.get('outputs_per_s'))} | "
        f"{_num(row.get('ratio'), 2)} | {_num(row.get('floor_ratio'), 2)} | "
        f"{'1.00' if peer else _num(row.get('peer_ratio'), 2)} | {_cpu(row)} | "
        f"{_changelog_total(row)} | {row['complete']} | {'' if peer else _targets(key, row)} |"
    )


def _changelog_total(row: dict[str, Any]) -> str:
    counts = row.get("changelog")
    return _num(counts["total"], 2) if counts else _NA


def _targets(key: str, row: dict[str, Any]) -> str:
    """Return the issue-15 verdicts of a configuration (empty when it has none).

    The Faust peer's row (``fpeer:``) gets its configuration's verdicts as a bound: a target
    it misses is out of reach of any worker made of one Faust agent step per record.
    """
    bound = "bound: " if key.startswith("fpeer:") else ""
    floor_goal, peer_goal, cpu_goal = GOALS.get(key.removeprefix("fpeer:"), (None, None, None))
    verdicts = []
    for goal, value, text in (
        (floor_goal, row.get("floor_ratio"), f"≥ {floor_goal}× floor"),
        (peer_goal, row.get("peer_ratio"), f"≥ {peer_goal}× peer"),
    ):
        if goal is not None:
            verdicts.append(_target(value, (value or 0) >= goal, text))
    cpu = _cpu_ms(row)
    if cpu_goal is not None:
        verdicts.append(_target(cpu, (cpu or 0) <= cpu_goal, f"≤ {cpu_goal} ms CPU/event"))
    return bound + "; ".join(verdicts) if verdicts else ""


def _cpu_ms(row: dict[str, Any], key: str = "cpu_s") -> float | None:
    med = row.get("median", {})
    return 1000 * med[key] / med["events"] if med.get("events") and key in med else None


def _cpu(row: dict[str, Any]) -> str:
    settled = _cpu_ms(row, "cpu_settled_s")
    if settled is None:
        return _num(_cpu_ms(row), 2)
    return f"{_num(_cpu_ms(row), 2)} ({_num(settled, 2)} until idle)"


def _scaleout(section: dict[str, Any]) -> list[str]:
    lines = [
        "### Scale-out — warm workers (one consumer group), workload published as fast as possible",
        "",
        "| workers | input events/s | samples/s | × 1 worker | runs ok | target |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for n, row in section.items():
        med, speedup = row["median"], row.get("speedup")
        target = _target(speedup, (speedup or 0) >= 1.5, "≥ 1.5×") if n == "2" else ""
        lines.append(
            f"| {n} | {_num(med.get('events_per_s'))} | {_num(med.get('outputs_per_s'))} | "
            f"{_num(speedup, 2)} | {row['complete']} | {target} |"
        )
    return [*lines, ""]


def _latency(section: dict[str, Any]) -> list[str]:
    lines = [
        f"### Latency — {section['config']}, one warm worker, plans published first",
        "",
        "| offered events/s | achieved | p50 ms | p95 ms | p99 ms | max ms "
        "| Faust peer p50 / p99 ms (the bound) "
        "| CPU ms per paced event, worker / peer (cores busy) | runs ok | target |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in section["rates"]:
        med, rate, half = row["median"], row["offered_per_s"], row.get("half_capacity")
        p99 = med.get("p99")
        at_target = rate == 500 or half
        target = _target(p99, (p99 or 0) <= 100, "p99 ≤ 100 ms") if at_target else ""
        offered = f"{rate:,.0f} (half of one worker's capacity)" if half else f"{rate:,.0f}"
        peer = (row.get("faust_peer") or {}).get("median") or {}  # not run before 29 Nov
        lines.append(
            f"| {offered} | {_num(med.get('achieved_per_s'))} | {_num(med.get('p50'), 1)} | "
            f"{_num(med.get('p95'), 1)} | {_num(p99, 1)} | {_num(med.get('max'), 1)} | "
            f"{_num(peer.get('p50'), 1)} / {_num(peer.get('p99'), 1)} | {_paced_cpu(med, peer)} | "
            f"{row['complete']} | {target} |"
        )
    return [*lines, "", *_latency_rounds(section)]


def _latency_rounds(section: dict[str, Any]) -> list[str]:
    """Return the half-capacity p99 round by round, worker and peer, and how busy the
    machine was as each side's round began (empty for results recorded before 2 Dec)."""
    lines = []
    for row in section["rates"]:
        peer_runs = (row.get("faust_peer") or {}).get("runs")
        if not (row.get("half_capacity") and row.get("runs") and peer_runs):
            continue
        ours = ", ".join(_num(run.get("p99"), 1) for run in row["runs"])
        theirs = ", ".join(_num(run.get("p99"), 1) for run in peer_runs)
        lines.append(f"- p99 at half capacity, round by round: worker {ours}; Faust peer {theirs}.")
    starts = section.get("rounds")
    if starts:
        pairs = ", ".join(
            f"{w['load']:.2f} / {p['load']:.2f}"
            for w, p in zip(starts["worker"], starts["peer"], strict=True)
        )
        waited = _quiet_wait([*starts["worker"], *starts["peer"]])
        lines.append(
            f"- 1-minute load average as each round began, worker / Faust peer: {pairs}{waited}."
        )
    return [*lines, ""] if lines else []


def _paced_cpu(worker: dict[str, Any], peer: dict[str, Any]) -> str:
    """Render a phase's CPU per paced event and cores busy, worker / peer (not measured
    before 30 Nov)."""
    per_event = (
        f"{_num(worker.get('cpu_ms_per_event'), 2)} / {_num(peer.get('cpu_ms_per_event'), 2)}"
    )
    return f"{per_event} ({_num(worker.get('cores'), 2)} / {_num(peer.get('cores'), 2)})"


def _memory(section: dict[str, Any]) -> list[str]:
    lines = [
        "### Memory — worker VmRSS while plans are loaded into plan_state",
        "",
        "| store | plans | RSS ready MiB | RSS loaded MiB | peak MiB | MiB per 100k plans "
        "(average / last half) | 1M plans MiB (extrapolated) | plans/s loaded | runs ok "
        "| target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    preloaded = False
    for key, row in section.items():
        if "median" not in row:
            lines.append(f"| {row['label']} | {row['status']}: `{row['install']}` |||||||||")
            continue
        med, label = row["median"], row["label"]
        if not med and row["runs"]:  # no run finished: show how far the first one got
            first = row["runs"][0]
            reached = first["curve"][-1][0]
            growth = (first["rss_loaded_mb"] - first["rss_ready_mb"]) * 100_000 / max(reached, 1)
            one_m = first["rss_loaded_mb"] + first["marginal_mb_per_100k"] * (1e6 - reached) / 1e5
            med = {**first, "plans": reached, "mb_per_100k_plans": growth, "rss_1m_plans_mb": one_m}
            label += f" — **stalled**, {med['plans']:,} of {row['runs'][0]['plans']:,} plans"
        one_m = med.get("rss_1m_plans_mb")
        goal = "≤ 500 MB (476.8 MiB) at 1M"
        target = _target(one_m, (one_m or 0) <= 500 / 1.048576, goal) if "rocksdb" in key else ""
        if "rocksdb" in key and (med.get("plans") or 0) >= 10_000_000:
            loaded = med.get("rss_loaded_mb")
            target = _target(loaded, (loaded or 0) <= 1024, "≤ 1 GiB at 10M (issue 31)")
        if row.get("preload") == "changelog":
            label += " — **preloaded through the plan_state changelog** (restored, not processed)"
            preloaded = True
        lines.append(
            f"| {label} | {_num(med.get('plans'))} | {_num(med.get('rss_ready_mb'))} | "
            f"{_num(med.get('rss_loaded_mb'))} | {_num(med.get('rss_peak_mb'))} | "
            f"{_num(med.get('mb_per_100k_plans'), 1)} / "
            f"{_num(med.get('marginal_mb_per_100k'), 1)} | {_num(one_m)} | "
            f"{_num(med.get('plans_per_s'))} | {row['complete']} | {target} |"
        )
    note = (
        "The plan-TTL sweep runs at its default (every 5 s); every other plan loaded is "
        "completed, so the sweeper's expiry index holds half of them."
    )
    if preloaded:
        note += (
            " A preloaded row's plans were written to the worker's plan_state changelog "
            "(the records the worker would have written) and restored by a fresh worker, "
            "which then rebuilt its expiry index from the table: its plans/s is the restore "
            "rate, and the live path's processing of each plan is not in the figure "
            "(benchmarks/memory.py)."
        )
    return [*lines, "", note, ""]


def _profile(section: dict[str, Any], top: int = 12) -> list[str]:
    if "self" not in section:
        return ["### Profile", "", section.get("error", "no profile"), ""]
    run = section["run"]
    lines = [
        f"### Profile — one worker, PII on, {run['events']:,} events "
        f"({run['events_per_s']:,.0f} events/s under cProfile)",
        "",
        f"Main thread profiled for {section['profiled_s']} s, of which "
        f"{section['idle_s']} s idle in epoll. Self time by package:",
        "",
        "| package | self s | self % |",
        "|---|---:|---:|",
        *(f"| {p['package']} | {p['self_s']} | {p['self_pct']} |" for p in section["packages"]),
        "",
        "Top functions by self time:",
        "",
        "| function | calls | self s | self % | cumulative s |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in section["self"][:top]:
        lines.append(
            f"| `{row['function']}` | {row['calls']:,} | {row['self_s']} | {row['self_pct']} | "
            f"{row['cum_s']} |"
        )
    lines += ["", "learnstream's own functions by cumulative time:", ""]
    lines += ["| function | calls | cumulative s | cumulative % |", "|---|---:|---:|---:|"]
    for row in section["ours_cumulative"][:top]:
        lines.append(
            f"| `{row['function']}` | {row['calls']:,} | {row['cum_s']} | {row['cum_pct']} |"
        )
    return [*lines, "", *_above_peer(section)]


def _above_peer(section: dict[str, Any]) -> list[str]:
    """Return the worker's self time per event by package beside the Faust peer's, both under
    cProfile on the same workload: where the worker's CPU goes beyond the bound."""
    peer = section.get("faust_peer") or {}
    if "packages" not in peer:
        return []
    ours_n, theirs_n = section["run"]["events"], peer["run"]["events"]

    def per_event(rows: list[dict[str, Any]], n: int) -> dict[str, float]:
        return {r["package"]: 1000 * r["self_s"] / n for r in rows}

    ours, theirs = per_event(section["packages"], ours_n), per_event(peer["packages"], theirs_n)
    idle = "idle: epoll wait"
    rows = sorted(
        (p for p in {*ours, *theirs} if p != idle),
        key=lambda p: (theirs.get(p, 0.0) - ours.get(p, 0.0), p),  # most above the peer first
    )
    lines = [
        "Self time per input event by package, the worker beside the Faust peer "
        f"(benchmarks/faust_peer.py, {peer['run']['events_per_s']:,.0f} events/s under "
        "cProfile), both profiled on the same workload (the top packages of each; idle "
        "left out):",
        "",
        "| package | worker ms/event | Faust peer ms/event | worker − peer |",
        "|---|---:|---:|---:|",
    ]
    for name in rows:
        a, b = ours.get(name), theirs.get(name)
        diff = (a or 0.0) - (b or 0.0)
        lines.append(
            f"| {name} | {_num(a, 3) if a is not None else _NA} | "
            f"{_num(b, 3) if b is not None else _NA} | {diff:+.3f} |"
        )
    busy_ours = sum(v for k, v in ours.items() if k != idle)
    busy_theirs = sum(v for k, v in theirs.items() if k != idle)
    lines.append(
        f"| **total (these packages)** | {busy_ours:.3f} | {busy_theirs:.3f} | "
        f"{busy_ours - busy_theirs:+.3f} |"
    )
    return [*lines, ""]


def render(res: dict[str, Any]) -> str:
    """Return the Markdown section of one benchmark invocation."""
    sizes, lines = res["sizes"], _header(res)
    if "throughput" in res:
        lines += _throughput(res["throughput"], sizes["events"])
    if "scaleout" in res:
        lines += _scaleout(res["scaleout"])
    if "latency" in res:
        lines += _latency(res["latency"])
    if "memory" in res:
        lines += _memory(res["memory"])
    if "profile" in res:
        lines += _profile(res["profile"])
    return "\n".join(lines) + "\n"
