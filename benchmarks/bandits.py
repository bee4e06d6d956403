"""Benchmark the adaptation strategies on simulated skills, beside MABWiser on the same arms.

Each pull asks ``streams.a2e.strategies.rank`` (default parameters) for a ranking, takes
the first skill, draws its outcome and updates the stats. Rewards come from one stream of
uniforms (Bernoulli) or normals (scores) per seed, shared by every strategy and by the
MABWiser anchor, so the runs face the same luck. Reported per suite and strategy, mean over
seeds (and min): cumulative pseudo-regret over all pulls, and the best arm's share of the
last 1,000 pulls; for the change suite, the new best arm's share of the 1,000 pulls after
the change, with rolling stats (default half-life, a pull every ``--interval`` seconds)
and with cumulative counts. MABWiser (UCB1 alpha 1, EpsilonGreedy, Softmax,
ThompsonSampling at their defaults) plays each arm once, then predicts and learns one pull
at a time; it runs on the first ``--anchor-seeds`` seeds, and regret is compared with ours
on those same seeds.

    python -m benchmarks.bandits            # the full sweep (a few CPU minutes)
    python -m benchmarks.bandits --quick    # 3 seeds, 1 anchor seed
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from streams.a2e.stats import DEFAULT_HALF_LIFE_S, SkillStats
from streams.a2e.strategies import Arm, rank

__all__ = ["SUITES", "Suite", "main"]

OURS = ("ucb1", "epsilon_greedy", "softmax", "thompson")
ANCHOR = {"ucb1": "UCB1", "epsilon_greedy": "EpsilonGreedy", "softmax": "Softmax"}
ANCHOR |= {"thompson": "ThompsonSampling"}
PULLS, LATE = 6000, 1000


@dataclass(frozen=True)
class Suite:
    """Arms (reward means in [0, 1]), how rewards are drawn, and an optional change."""

    name: str
    means: tuple[float, ...]
    scores: bool = False  # rewards are scores N(2 mean - 1, 0.5) clipped to [-1, 1]
    seeds: int = 20
    change_at: int | None = None
    after: tuple[float, ...] = ()
    target: bool = field(default=False)  # the >= 90 % late-share target applies

    def mean(self, pull: int) -> tuple[float, ...]:
        """Return the arms' means at ``pull``."""
        return self.after if self.change_at is not None and pull >= self.change_at else self.means


def _bernoulli(k: int, gap: float, best: float = 0.6) -> tuple[float, ...]:
    rest = [round(best - gap - 0.05 - i * 0.35 / max(k - 3, 1), 4) for i in range(k - 2)]
    return (best, best - gap, *rest)


def _suite(k: int, gap: float) -> Suite:
    return Suite(f"bern K={k} gap={gap}", _bernoulli(k, gap), target=gap >= 0.1)


SUITES = (
    Suite("issue probe K=7 0.65/0.55", (0.65, 0.55, 0.5, 0.45, 0.4, 0.35, 0.3), seeds=3),
    _suite(3, 0.2),
    _suite(5, 0.1),
    _suite(10, 0.1),
    _suite(20, 0.1),
    _suite(20, 0.2),
    _suite(10, 0.05),
    Suite("scores K=5 gap=0.1", (0.7, 0.6, 0.5, 0.4, 0.3), scores=True, target=True),
    Suite(
        "change K=5 at 3000",
        (0.7, 0.5, 0.45, 0.2, 0.3),
        change_at=3000,
        after=(0.45, 0.5, 0.45, 0.75, 0.3),
    ),
)


class Env:
    """One seed's rewards: the same draw at pull t whichever arm is chosen."""

    def __init__(self, suite: Suite, seed: int) -> None:
        self.suite, self.rng = suite, random.Random(1_000_003 * seed + 17)  # noqa: S311

    def pull(self, t: int, arm: int) -> float:
        """Return the reward in [0, 1] of ``arm`` at pull ``t``."""
        mean = self.suite.mean(t)[arm]
        if not self.suite.scores:
            return float(self.rng.random() < mean)
        score = max(-1.0, min(1.0, self.rng.gauss(2 * mean - 1, 0.5)))
        return (score + 1) / 2


class _Counts:
    """Cumulative pulls, reward totals and squares as strategy arms."""

    def __init__(self, k: int, binary: bool) -> None:
        self.n, self.s, self.q, self.binary = [0.0] * k, [0.0] * k, [0.0] * k, binary

    def arms(self, t: int) -> list[Arm]:
        return [
            Arm(f"arm{i:02d}", self.n[i], self.s[i], self.q[i], self.binary)
            for i in range(len(self.n))
        ]

    def update(self, t: int, arm: int, reward: float) -> None:
        self.n[arm] += 1
        self.s[arm] += reward
        self.q[arm] += reward * reward


class _Rolling:
    """Per-arm :class:`SkillStats` with decay by event time, a pull every ``interval`` s."""

    def __init__(self, k: int, binary: bool, interval: float) -> None:
        self.stats = [SkillStats() for _ in range(k)]
        self.binary, self.interval = binary, interval

    def arms(self, t: int) -> list[Arm]:
        reward = "success" if self.binary else "score"
        now = t * self.interval
        return [s.arm(f"arm{i:02d}", now=now, reward=reward) for i, s in enumerate(self.stats)]

    def update(self, t: int, arm: int, reward: float) -> None:
        if self.binary:
            self.stats[arm].add_call(reward > 0.5, at=t * self.interval)
        else:
            self.stats[arm].add_score(2 * reward - 1, at=t * self.interval)


def _score(suite: Suite, choices: Sequence[int]) -> dict[str, float]:
    regret = sum(max(suite.mean(t)) - suite.mean(t)[a] for t, a in enumerate(choices))
    start = suite.change_at if suite.change_at is not None else PULLS - LATE
    best = suite.mean(start).index(max(suite.mean(start)))
    window = choices[start : start + LATE]
    return {"regret": regret, "share": sum(a == best for a in window) / len(window)}


def run_ours(
    suite: Suite, strategy: str, seed: int, rolling: bool, interval: float
) -> dict[str, float]:
    """Play one seed with ``rank``; return regret and share."""
    env, k = Env(suite, seed), len(suite.means)
    counts = _Rolling(k, not suite.scores, interval) if rolling else _Counts(k, not suite.scores)
    index, choices = {f"arm{i:02d}": i for i in range(k)}, []
    for t in range(PULLS):
        chosen = index[rank(counts.arms(t), strategy, None, seed * 100_000 + t)[0].name]
        counts.update(t, chosen, env.pull(t, chosen))
        choices.append(chosen)
    return _score(suite, choices)


def run_anchor(suite: Suite, strategy: str, seed: int) -> dict[str, float]:
    """Play one seed with MABWiser's policy of the same name; return regret and share."""
    import numpy as np  # noqa: PLC0415  (only the anchor needs them)
    from mabwiser.mab import MAB, LearningPolicy  # noqa: PLC0415

    env, k = Env(suite, seed), len(suite.means)
    policy = getattr(LearningPolicy, ANCHOR[strategy])
    coin = random.Random(seed)  # noqa: S311  (Agrawal-Goyal binarization of score rewards)
    binarizer: Callable[[Any, float], bool] = lambda _arm, r: coin.random() < r  # noqa: E731
    extra = {"binarizer": binarizer} if strategy == "thompson" and suite.scores else {}
    mab = MAB(arms=list(range(k)), learning_policy=policy(**extra), seed=seed)
    choices = list(range(k))
    mab.fit(decisions=choices, rewards=[env.pull(t, a) for t, a in enumerate(choices)])
    imp = mab._imp  # one pull at a time; the public wrapper re-validates every call
    for t in range(k, PULLS):
        chosen = int(imp.predict())
        imp.partial_fit(np.array([chosen]), np.array([env.pull(t, chosen)]))
        choices.append(chosen)
    return _score(suite, choices)


def _task(job: tuple[str, Suite, str, int, bool, float]) -> dict[str, float]:
    who, suite, strategy, seed, rolling, interval = job
    if who == "mabwiser":
        return run_anchor(suite, strategy, seed)
    return run_ours(suite, strategy, seed, rolling, interval)


def _jobs(args: argparse.Namespace, suites: Sequence[Suite]) -> list[tuple[Any, ...]]:
    jobs: list[tuple[Any, ...]] = []
    for suite in suites:
        seeds = min(suite.seeds, args.seeds)
        modes = (True, False) if suite.change_at is not None else (False,)
        for strategy in OURS:
            for rolling in modes:
                jobs += [("ours", suite, strategy, s, rolling, args.interval) for s in range(seeds)]
            if suite.change_at is None and not args.no_anchor:
                anchor_seeds = min(seeds, args.anchor_seeds)
                jobs += [("mabwiser", suite, strategy, s, False, 0.0) for s in range(anchor_seeds)]
    return jobs


def _summary(runs: list[dict[str, float]]) -> dict[str, float]:
    shares = [r["share"] for r in runs]
    regrets = [r["regret"] for r in runs]
    return {
        "share_mean": statistics.fmean(shares),
        "share_min": min(shares),
        "regret_mean": statistics.fmean(regrets),
        "regret_max": max(regrets),
        "seeds": len(runs),
    }


def collect(args: argparse.Namespace, suites: Sequence[Suite]) -> list[dict[str, Any]]:
    """Run every job (in ``args.jobs`` processes); return one row per suite and strategy."""
    jobs = _jobs(args, suites)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_task, jobs, chunksize=4))
    grouped: dict[tuple[str, str, str], list[tuple[int, dict[str, float]]]] = {}
    for job, result in zip(jobs, results, strict=True):
        who = "rolling" if job[4] else ("cumulative" if job[1].change_at else job[0])
        grouped.setdefault((job[1].name, job[2], who), []).append((job[3], result))
    return _rows(suites, grouped, args.anchor_seeds)


def _rows(
    suites: Sequence[Suite],
    grouped: dict[tuple[str, str, str], list[tuple[int, dict[str, float]]]],
    anchor_seeds: int,
) -> list[dict[str, Any]]:
    rows = []
    for suite in suites:
        for strategy in OURS:
            row: dict[str, Any] = {"suite": suite.name, "strategy": strategy}
            for who in ("ours", "mabwiser", "rolling", "cumulative"):
                runs = grouped.get((suite.name, strategy, who))
                if runs:
                    row[who] = _summary([r for _, r in runs])
            if "ours" in row and "mabwiser" in row:
                same = [r["regret"] for s, r in grouped[(suite.name, strategy, "ours")]]
                row["ours"]["regret_anchor_seeds"] = statistics.fmean(same[:anchor_seeds])
            row["verdict"] = _verdict(suite, row)
            rows.append(row)
    return rows


def _verdict(suite: Suite, row: dict[str, Any]) -> str:
    if suite.change_at is not None:
        ok = row["rolling"]["share_mean"] >= 0.7 and row["cumulative"]["share_mean"] < 0.3
        return "PASS" if ok else "FAIL"
    checks = []
    if suite.target:
        checks.append(row["ours"]["share_mean"] >= 0.9)
    if "mabwiser" in row:
        checks.append(row["ours"]["regret_anchor_seeds"] <= row["mabwiser"]["regret_mean"])
    if not checks:
        return "-"
    return "PASS" if all(checks) else "FAIL"


def _fmt(cell: dict[str, float] | None) -> str:
    if cell is None:
        return f"{'':>24}"
    return (
        f"{cell['share_mean'] * 100:5.1f}% ({cell['share_min'] * 100:5.1f}%)"
        f" {cell['regret_mean']:8.1f}"
    )


def render(rows: list[dict[str, Any]]) -> str:
    """Return the table: late share mean (min) and mean regret, ours and MABWiser's."""
    head = f"{'suite':<28}{'strategy':<16}{'ours: share (min)  regret':>26}"
    head += f"{'MABWiser: share (min) regret':>31}  verdict"
    lines = [head, "-" * len(head)]
    for row in rows:
        ours = row.get("ours") or row.get("rolling")
        other = row.get("mabwiser") or row.get("cumulative")
        label = row["strategy"] + (" (roll/cum)" if "rolling" in row else "")
        lines.append(
            f"{row['suite']:<28}{label:<16}  {_fmt(ours)}     {_fmt(other)}  {row['verdict']}"
        )
    fails = sum(row["verdict"] == "FAIL" for row in rows)
    lines.append(f"targets: {'PASS' if not fails else f'FAIL ({fails} rows)'}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bandits",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="Rows: stationary suites compare ours with MABWiser; the change suite compares "
        "rolling stats (left) with cumulative counts (right). Share is of the last 1,000 of "
        "6,000 pulls (change suite: of the 1,000 after the change).",
    )
    parser.add_argument("--quick", action="store_true", help="3 seeds, 1 MABWiser seed")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per suite (default 20)")
    parser.add_argument(
        "--anchor-seeds", type=int, default=5, help="seeds MABWiser plays (default 5)"
    )
    parser.add_argument("--no-anchor", action="store_true", help="skip MABWiser")
    parser.add_argument("--suite", action="append", help="run only suites whose name has this")
    parser.add_argument(
        "--interval",
        type=float,
        default=10.0,
        help=f"event seconds between pulls for rolling stats (half-life {DEFAULT_HALF_LIFE_S:g} s)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument(
        "--json", nargs="?", const="-", metavar="PATH", help="also write rows as JSON (- stdout)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suites, print the table; exit 1 when a target fails."""
    args = _parser().parse_args(argv)
    if args.quick:
        args.seeds, args.anchor_seeds = min(args.seeds, 3), 1
    suites = [s for s in SUITES if not args.suite or any(w in s.name for w in args.suite)]
    rows = collect(args, suites)
    if args.json == "-":
        json.dump(rows, sys.stdout, indent=2)
    else:
        print(render(rows))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(rows, out, indent=2)
    return 1 if any(row["verdict"] == "FAIL" for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
