"""Render the privacy recall results as Markdown: the table, then what leaked."""

from __future__ import annotations

from typing import Any

from benchmarks.recall.kinds import KINDS

__all__ = ["render"]


def _pct(part: float, whole: float) -> str:
    return f"{part:,.0f}/{whole:,.0f} ({100 * part / whole:.1f} %)" if whole else "–"


def _mark(met: bool | None) -> str:
    return "" if met is None else (" PASS" if met else " **FAIL**")


def _target(target: float | None) -> str:
    return "–" if target is None else f"≥ {100 * target:g} %"


def _header(res: dict[str, Any]) -> list[str]:
    lines = [
        f"### Privacy recall — {res['planted']:,} planted values ({res['per_kind']} per kind), "
        f"{res['clean']:,} clean sentences, seed {res['seed']}",
        "",
        f"- run {res['date']}, commit `{res['commit']}`; in process, no broker: the worker's "
        "anonymizer (`build_anonymizer(privacy_config(Settings()))` through `apply_privacy`), "
        "warmed first; CPU = this process's CPU time",
    ]
    for config in res["configs"]:
        lines.append(f"- {config['name']}: {_settings(config)}")
    return [*lines, ""]


def _settings(config: dict[str, Any]) -> str:
    """Return a configuration's privacy settings as ``key=value``, or why it did not run."""
    if "error" in config:
        return f"not measured: {config['error']}"
    shown = {
        k: ",".join(v) if isinstance(v, list | tuple) else v for k, v in config["settings"].items()
    }
    return "; ".join(f"{k}={v}" for k, v in shown.items())


def _table(res: dict[str, Any]) -> list[str]:
    ok = [c for c in res["configs"] if "error" not in c]
    names = " | ".join(c["name"] for c in ok)
    lines = [f"| kind | target | {names} |", "|---|---|" + "---:|" * len(ok)]
    for kind in KINDS:
        if kind in ok[0]["kinds"]:
            rows = [c["kinds"][kind] for c in ok]
            cells = " | ".join(_pct(r["found"], r["total"]) + _mark(r["met"]) for r in rows)
            lines.append(f"| {rows[0]['label']} | {_target(rows[0]['target'])} | {cells} |")
    precision = [c["precision"] for c in ok]
    cells = " | ".join(_pct(p["unchanged"], p["total"]) + _mark(p["met"]) for p in precision)
    lines.append(f"| **precision**: clean sentences unchanged | ≥ 98 % | {cells} |")
    cells = " | ".join(_pct(p["chars_masked"], p["chars"]) for p in precision)
    lines.append(f"| clean characters masked | | {cells} |")
    cells = " | ".join(
        f"{c['cpu_us']['all']:,.0f} ({c['cpu_us']['planted']:,.0f} / {c['cpu_us']['clean']:,.0f})"
        for c in ok
    )
    lines.append(f"| CPU µs per sentence (planted / clean) | | {cells} |")
    met = " | ".join(_met_count(c) for c in ok)
    return [*lines, f"| targets met | | {met} |", ""]


def _met_count(config: dict[str, Any]) -> str:
    marks = [r["met"] for r in config["kinds"].values() if r["met"] is not None]
    marks.append(config["precision"]["met"])
    return f"{sum(marks)} of {len(marks)}"


def _leaks(config: dict[str, Any]) -> list[str]:
    lines = [f"Leaked with {config['name']} (the planted value shown as its `{{kind}}`):", ""]
    for kind, row in sorted(config["kinds"].items(), key=lambda item: item[1]["recall"]):
        if not row["leaked"]:
            continue
        worst = [f"{v} {t - f}/{t}" for v, (f, t) in row["variants"].items() if f < t]
        lines.append(f"- **{kind}**, {row['total'] - row['found']} leaked ({', '.join(worst)})")
        for leak in row["leaked"]:
            text = leak["output"].replace("\n", "⏎")
            lines.append(f"  - {leak['field']}, {leak['variant']}: `{text}`")
    changed = config["precision"]["changed"]
    if changed:
        shapes = ", ".join(f"{s} {n}" for s, n in config["precision"]["changed_shapes"].items())
        lines.append(f"- **clean sentences changed** ({shapes})")
        lines += [f"  - {c['shape']}: `{c['output']}`".replace("\n", "⏎") for c in changed]
    return [*lines, ""]


def render(res: dict[str, Any]) -> str:
    """Return the Markdown of one privacy recall run."""
    lines = _header(res)
    if any("error" not in c for c in res["configs"]):
        lines += _table(res)
    for config in res["configs"]:
        if "error" not in config:
            lines += _leaks(config)
    return "\n".join(lines) + "\n"
