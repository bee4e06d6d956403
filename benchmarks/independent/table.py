"""Render an independent-corpus run as Markdown: precision, recall per kind, what went wrong."""

from __future__ import annotations

from typing import Any

from benchmarks.independent.score import SENTENCES, TOKENS

__all__ = ["render"]


def _pct(part: float, whole: float, digits: int = 1) -> str:
    return f"{part:,.0f}/{whole:,.0f} ({100 * part / whole:.{digits}f} %)" if whole else "–"


def _mark(met: bool | None) -> str:
    return "" if met is None else (" PASS" if met else " **FAIL**")


def _header(res: dict[str, Any]) -> list[str]:
    corpus = res["recall_corpus"]
    built = (
        f"{corpus['values']:,} values in {corpus['sentences']:,} sentences ({corpus['source']})"
        if corpus.get("values")
        else corpus["source"]
    )
    lines = [
        f"### Privacy on independent text, round {res.get('round', 1)} — {res['split']} split "
        f"({res['rows']:,} sentences)",
        "",
        f"- run {res['date']}, commit `{res['commit']}`; in process, no broker",
        f"- recall corpus: {built}",
    ]
    for det in res["detectors"]:
        shown = det.get("error") or "; ".join(f"{k}={v}" for k, v in det["settings"].items())
        lines.append(f"- {det['name']}: {shown}")
    return [*lines, ""]


def _precision(ok: list[dict[str, Any]]) -> list[str]:
    names = " | ".join(d["name"] for d in ok)
    pr = [d["precision"] for d in ok]
    lines = [f"| precision | target | {names} |", "|---|---|" + "---:|" * len(ok)]
    cells = " | ".join(_pct(p["unchanged"], p["clean"]) + _mark(p["sentences_met"]) for p in pr)
    lines.append(f"| clean sentences unchanged | ≥ {100 * SENTENCES:g} % | {cells} |")
    cells = " | ".join(
        _pct(p["tokens_masked"], p["tokens"], 2) + _mark(p["tokens_met"]) for p in pr
    )
    lines.append(f"| clean tokens masked | ≤ {100 * TOKENS:g} % | {cells} |")
    for source in pr[0]["by_source"]:
        cells = " | ".join(_pct(**_ut(p["by_source"][source])) for p in pr)
        lines.append(f"| unchanged: {source} | | {cells} |")
    cells = " | ".join(", ".join(f"{e} {n}" for e, n in p["entities"].items()) for p in pr)
    lines.append(f"| tags put in clean sentences | | {cells} |")
    cells = " | ".join(str(p["personal_left_out"]) for p in pr)
    lines.append(f"| left out: marked personal | | {cells} |")
    cells = " | ".join(" / ".join(f"{v:,.0f}" for v in d["cpu_us"].values()) for d in ok)
    return [*lines, f"| CPU µs per distinct sentence (precision / recall) | | {cells} |", ""]


def _ut(counts: dict[str, int]) -> dict[str, int]:
    return {"part": counts["unchanged"], "whole": counts["total"]}


def _recall(ok: list[dict[str, Any]]) -> list[str]:
    ok = [d for d in ok if "recall" in d]
    if not ok:
        return []
    lines = [
        f"| recall: kind | target | {' | '.join(d['name'] for d in ok)} |",
        "|---|---|" + "---:|" * len(ok),
    ]
    kinds = sorted(ok[0]["recall"], key=lambda k: (ok[0]["recall"][k]["target"] is None, k))
    for kind in kinds:
        rows = [d["recall"].get(kind) for d in ok]
        target = rows[0]["target"]
        cells = " | ".join(
            _pct(r["found"], r["total"]) + _mark(r["met"]) if r else "–" for r in rows
        )
        shown = "–" if target is None else f"≥ {100 * target:g} %"
        lines.append(f"| {kind} | {shown} | {cells} |")
    return [*lines, ""]


def _examples(det: dict[str, Any]) -> list[str]:
    lines = [f"Clean sentences {det['name']} changed (first {len(det['precision']['changed'])}):"]
    for c in det["precision"]["changed"]:
        masked = ", ".join(c["masked"])
        lines.append(f"- {c['source']} `{c['ref']}`: `{c['output']}` (masked: {masked})")
    if "recall" not in det:
        return [*lines, ""]
    lines += ["", f"Values {det['name']} leaked (a few per kind, the value shown as `{{kind}}`):"]
    for kind, row in sorted(det["recall"].items()):
        lines += [f"- {kind}: `{text}`".replace("\n", "⏎") for text in row["leaked"][:3]]
    return [*lines, ""]


def render(res: dict[str, Any]) -> str:
    """Return the Markdown of one run."""
    ok = [d for d in res["detectors"] if "error" not in d]
    lines = _header(res)
    if ok:
        lines += _precision(ok) + _recall(ok)
    for det in ok:
        lines += _examples(det)
    return "\n".join(lines) + "\n"
