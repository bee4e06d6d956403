"""Benchmark the adaptation strategies on simulated skills, beside MABWiser on the same arms.

Each pull asks ``learnstream.streams.a2e.strategies.rank`` (default parameters) for a ranking, takes
the first skill, draws its outcome and updates the stats. Rewards come from one stream of
uniforms (Bernoulli) or normals (scores) per seed, shared by every strategy and by the
MABWiser anchor, so the runs face the same luck; with ``--rewards arm`` from one stream
per arm, so an arm's j-th pull draws the same in every run, which narrows the paired
regret intervals (MABWiser's coin that turns a score into a success for its Thompson
sampling stays one per seed). Every suite runs as the worker's ``adapt``
does, on rolling stats (default half-life, a pull every ``--interval`` seconds; each skill
ranked on its long or its recent memory, as ``SkillStats.arm`` chooses, or with ``--memory
recent`` on the recent memory alone), and on cumulative counts as a control (with the
defaults of ``EXACT_DEFAULTS``; only epsilon-greedy keeps its exploration floor: exact
counts never forget). Reported per suite
and strategy, mean over seeds (and min): cumulative pseudo-regret over all pulls, and the
best arm's share of the last 1,000 pulls (change suite: the new best arm's share of the
1,000 pulls after the change).

The cumulative suite (``cumulative drawn K=7``) plays plain cumulative counts only, as a
script or a plugin holding ``SkillPerformanceRecord`` counts ranks them (no decay, no floor but
epsilon-greedy's; the defaults of ``EXACT_DEFAULTS``), on arms the project never saw: each
seed draws its own 7 means (the best in [0.3, 0.9], the second 0.1 to 0.15 below it, the
rest up to 0.4 below that, in a drawn order), over 20,000 pulls, and reports the best arm's
share of the last 1,000 (target >= 90 % for every strategy), with no MABWiser anchor.

MABWiser (UCB1 alpha 1, EpsilonGreedy, Softmax, ThompsonSampling at their defaults) plays
each arm once, then predicts and learns one pull at a time, on the first
``--anchor-seeds`` seeds (default 20). Regret is compared on those
seeds between what ``adapt`` does, ours on rolling stats, and MABWiser, which keeps no
decayed stats (so the stationary suites charge ours for every pull its forgetting costs),
as a paired test: per seed ``d = ours - MABWiser``; a row passes when ``mean(d) <= 0`` or
when the 95 % Student-t interval of ``mean(d)`` includes 0 (no significant excess). The
table names the rule that decided. The cumulative control shows what forgetting costs.

    python -m benchmarks.bandits            # the full sweep (a few CPU minutes)
    python -m benchmarks.bandits --quick    # 3 seeds, 2 anchor seeds
    python -m benchmarks.bandits --suite change --seeds 40 --no-anchor   # seeds 0-39
    python -m benchmarks.bandits --suite cumulative    # the cumulative suite, 100 seeds
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from learnstream.streams.a2e.memory import bounds_for
from learnstream.streams.a2e.payloads import AdaptQuery
from learnstream.streams.a2e.stats import DEFAULT_HALF_LIFE_S, SkillStats
from learnstream.streams.a2e.stats_view import adapt_seed
from learnstream.streams.a2e.strategies import Arm, rank

__all__ = ["SUITES", "Suite", "main"]

OURS = ("ucb1", "epsilon_greedy", "softmax", "thompson")
ANCHOR = {"ucb1": "UCB1", "epsilon_greedy": "EpsilonGreedy", "softmax": "Softmax"}
ANCHOR |= {"thompson": "ThompsonSampling"}
PULLS, LATE = 6000, 1000
Memory = Literal["chosen", "recent"]


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
    drawn: bool = False  # each seed draws its own means (as many as ``means`` holds)
    cumulative_only: bool = False  # plays cumulative counts only (no rolling, no anchor)
    pulls: int = PULLS

    def mean(self, pull: int) -> tuple[float, ...]:
        """Return the arms' means at ``pull``."""
        return self.after if self.change_at is not None and pull >= self.change_at else self.means

    def on(self, seed: int) -> Suite:
        """Return the suite as seed ``seed`` plays it: its own means when they are drawn."""
        return replace(self, means=drawn_means(seed, len(self.means))) if self.drawn else self


def drawn_means(seed: int, k: int) -> tuple[float, ...]:
    """Return ``k`` means drawn for ``seed``: the best in [0.3, 0.9], the second 0.1 to 0.15
    below it, the others up to 0.4 below the second, in a drawn order."""
    rng = random.Random(f"drawn-arms-{seed}")  # noqa: S311
    best = rng.uniform(0.3, 0.9)
    second = best - rng.uniform(0.1, 0.15)
    means = [best, second, *(rng.uniform(max(second - 0.4, 0.0), second) for _ in range(k - 2))]
    rng.shuffle(means)
    return tuple(round(m, 4) for m in means)


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
    Suite(
        "cumulative drawn K=7",
        (0.0,) * 7,
        seeds=100,
        target=True,
        drawn=True,
        cumulative_only=True,
        pulls=20_000,
    ),
)


Rewards = Literal["pull", "arm"]


class Env:
    """One seed's rewards. ``pull``: the same draw at pull t whichever arm is chosen.
    ``arm``: one stream per arm, so an arm's j-th pull draws the same in every run, however
    the runs got there (common random numbers per arm: two policies that pull an arm alike
    see the same outcomes of it, which narrows the paired regret difference)."""

    def __init__(self, suite: Suite, seed: int, rewards: Rewards = "pull") -> None:
        self.suite = suite
        self.rng = random.Random(1_000_003 * seed + 17)  # noqa: S311
        self.streams = None
        if rewards == "arm":
            self.streams = [random.Random(f"{seed}-{a}") for a in range(len(suite.means))]  # noqa: S311

    def pull(self, t: int, arm: int) -> float:
        """Return the reward in [0, 1] of ``arm`` at pull ``t``."""
        mean, rng = self.suite.mean(t)[arm], self.streams[arm] if self.streams else self.rng
        if not self.suite.scores:
            return float(rng.random() < mean)
        score = max(-1.0, min(1.0, rng.gauss(2 * mean - 1, 0.5)))
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

    def __init__(
        self, k: int, binary: bool, interval: float, memory: Memory, strategy: str
    ) -> None:
        self.stats = [SkillStats() for _ in range(k)]
        self.binary, self.interval, self.memory = binary, interval, memory
        self.bounds = bounds_for(strategy)

    def arms(self, t: int) -> list[Arm]:
        reward: Literal["success", "score"] = "success" if self.binary else "score"
        now, memory, bounds = t * self.interval, self.memory, self.bounds
        return [
            s.arm(f"arm{i:02d}", now=now, reward=reward, memory=memory, bounds=bounds)
            for i, s in enumerate(self.stats)
        ]

    def update(self, t: int, arm: int, reward: float) -> None:
        if self.binary:
            self.stats[arm].add_call(reward > 0.5, at=t * self.interval)
        else:
            self.stats[arm].add_score(2 * reward - 1, at=t * self.interval)


def _score(suite: Suite, choices: Sequence[int]) -> dict[str, float]:
    regret = sum(max(suite.mean(t)) - suite.mean(t)[a] for t, a in enumerate(choices))
    start = suite.change_at if suite.change_at is not None else suite.pulls - LATE
    best = suite.mean(start).index(max(suite.mean(start)))
    window = choices[start : start + LATE]
    return {"regret": regret, "share": sum(a == best for a in window) / len(window)}


def run_ours(
    suite: Suite,
    strategy: str,
    seed: int,
    rolling: bool,
    interval: float,
    memory: Memory = "chosen",
    rewards: Rewards = "pull",
) -> dict[str, float]:
    """Play one seed with ``rank``; return regret and share.

    Each pull is one unseeded adapt request: its seed is the worker's (``adapt_seed`` of the
    query, the default base 0 and the pull's own correlation id).
    """
    suite = suite.on(seed)
    env, k = Env(suite, seed, rewards), len(suite.means)
    binary = not suite.scores
    counts = _Rolling(k, binary, interval, memory, strategy) if rolling else _Counts(k, binary)
    index, choices = {f"arm{i:02d}": i for i in range(k)}, []
    query = AdaptQuery(strategy=strategy)
    for t in range(suite.pulls):
        drawn = adapt_seed(query, 0, f"bandits-{suite.name}-{seed}-{t}")
        chosen = index[rank(counts.arms(t), strategy, None, drawn)[0].name]
        counts.update(t, chosen, env.pull(t, chosen))
        choices.append(chosen)
    return _score(suite, choices)


def run_anchor(
    suite: Suite, strategy: str, seed: int, rewards: Rewards = "pull"
) -> dict[str, float]:
    """Play one seed with MABWiser's policy of the same name; return regret and share."""
    import numpy as np  # noqa: PLC0415  (only the anchor needs them)
    from mabwiser.mab import MAB, LearningPolicy  # noqa: PLC0415

    suite = suite.on(seed)
    env, k = Env(suite, seed, rewards), len(suite.means)
    policy = getattr(LearningPolicy, ANCHOR[strategy])
    coin = random.Random(seed)  # noqa: S311  (Agrawal-Goyal binarization of score rewards)
    binarizer: Callable[[Any, float], bool] = lambda _arm, r: coin.random() < r  # noqa: E731
    extra = {"binarizer": binarizer} if strategy == "thompson" and suite.scores else {}
    mab = MAB(arms=list(range(k)), learning_policy=policy(**extra), seed=seed)
    choices = list(range(k))
    mab.fit(decisions=choices, rewards=[env.pull(t, a) for t, a in enumerate(choices)])
    imp = mab._imp  # one pull at a time; the public wrapper re-validates every call
    for t in range(k, suite.pulls):
        chosen = int(imp.predict())
        imp.partial_fit(np.array([chosen]), np.array([env.pull(t, chosen)]))
        choices.append(chosen)
    return _score(suite, choices)


def _task(job: tuple[str, Suite, str, int, float, Memory, Rewards]) -> dict[str, float]:
    who, suite, strategy, seed, interval, memory, rewards = job
    if who == "mabwiser":
        return run_anchor(suite, strategy, seed, rewards)
    return run_ours(suite, strategy, seed, who == "rolling", interval, memory, rewards)


def _jobs(args: argparse.Namespace, suites: Sequence[Suite]) -> list[tuple[Any, ...]]:
    jobs: list[tuple[Any, ...]] = []
    for suite in suites:
        seeds = suite.seeds if args.seeds is None else args.seeds
        if suite.cumulative_only:
            r = args.rewards
            jobs += [("cumulative", suite, st, s, 0.0, "", r) for st in OURS for s in range(seeds)]
            continue
        anchor = 0 if suite.change_at is not None or args.no_anchor else args.anchor_seeds
        # the cumulative control runs on MABWiser's seeds (all seeds on the change suite)
        control = seeds if suite.change_at is not None else min(seeds, anchor)
        for strategy in OURS:
            rolling, r = ("rolling", suite, strategy), args.rewards
            jobs += [(*rolling, s, args.interval, args.memory, r) for s in range(seeds)]
            jobs += [("cumulative", suite, strategy, s, 0.0, "", r) for s in range(control)]
            anchored = range(min(seeds, anchor))
            jobs += [("mabwiser", suite, strategy, s, 0.0, "", r) for s in anchored]
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


# two-sided 95 % Student t quantiles by degrees of freedom (1.96 beyond the table)
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}
_T95 |= {9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 19: 2.093, 24: 2.064, 29: 2.045}


def paired(ours: dict[int, float], theirs: dict[int, float]) -> dict[str, float] | None:
    """Return mean and 95 % CI half-width of ``ours - theirs`` over the seeds both ran."""
    diffs = [ours[s] - theirs[s] for s in sorted(ours.keys() & theirs.keys())]
    if len(diffs) < 2:
        return None
    n = len(diffs)
    t = _T95.get(n - 1) or min((v for k, v in _T95.items() if k <= n - 1), default=1.96)
    half = t * statistics.stdev(diffs) / n**0.5
    return {"mean": statistics.fmean(diffs), "half": half, "n": n}


def _regret_rule(diff: dict[str, float]) -> str:
    if diff["mean"] <= 0:
        return "mean<=0"
    return "CI has 0" if diff["mean"] - diff["half"] <= 0 else "worse"


def collect(args: argparse.Namespace, suites: Sequence[Suite]) -> list[dict[str, Any]]:
    """Run every job (in ``args.jobs`` processes); return one row per suite and strategy."""
    jobs = _jobs(args, suites)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_task, jobs, chunksize=4))
    grouped: dict[tuple[str, str, str], dict[int, dict[str, float]]] = {}
    for job, result in zip(jobs, results, strict=True):
        grouped.setdefault((job[1].name, job[2], job[0]), {})[job[3]] = result
    return _rows(suites, grouped)


def _rows(
    suites: Sequence[Suite], grouped: dict[tuple[str, str, str], dict[int, dict[str, float]]]
) -> list[dict[str, Any]]:
    rows = []
    for suite in suites:
        for strategy in OURS:
            row: dict[str, Any] = {"suite": suite.name, "strategy": strategy}
            for who in ("rolling", "cumulative", "mabwiser"):
                runs = grouped.get((suite.name, strategy, who))
                if runs:
                    row[who] = _summary(list(runs.values()))
            if "mabwiser" in row:
                regret = {
                    who: {s: r["regret"] for s, r in grouped[(suite.name, strategy, who)].items()}
                    for who in ("rolling", "mabwiser")
                }
                row["paired"] = paired(regret["rolling"], regret["mabwiser"])
            row["verdict"] = _verdict(suite, row)
            rows.append(row)
    return rows


def _verdict(suite: Suite, row: dict[str, Any]) -> str:
    if suite.change_at is not None:
        # the control: cumulative counts miss the change, but under UCB1, whose textbook
        # bonus on exact counts re-tries every arm as ln N grows
        control = row["strategy"] == "ucb1" or row["cumulative"]["share_mean"] < 0.3
        return "PASS" if row["rolling"]["share_mean"] >= 0.7 and control else "FAIL"
    checks, rule = [], ""
    if suite.target:
        checks.append(
            row["cumulative" if suite.cumulative_only else "rolling"]["share_mean"] >= 0.9
        )
    if row.get("paired"):
        rule = _regret_rule(row["paired"])
        checks.append(rule != "worse")
    if not checks:
        return "-"
    return ("PASS" if all(checks) else "FAIL") + (f" (regret: {rule})" if rule else "")


def _fmt(cell: dict[str, float] | None) -> str:
    if cell is None:
        return f"{'':>22}"
    share = f"{cell['share_mean'] * 100:5.1f}% ({cell['share_min'] * 100:5.1f}%)"
    return f"{share} {cell['regret_mean']:7.1f}"


def _fmt_diff(diff: dict[str, float] | None) -> str:
    if not diff:
        return f"{'':>17}"
    return f"{diff['mean']:+7.1f} ± {diff['half']:5.1f} ({diff['n']:.0f})"


def render(rows: list[dict[str, Any]]) -> str:
    """Return the table: rolling (what adapt does), cumulative control, MABWiser, paired."""
    head = f"{'suite':<27}{'strategy':<15}{'rolling: share (min) regret':>28}"
    head += f"{'cumulative':>23}{'MABWiser':>23}{'roll-MW regret ±CI (n)':>23}  verdict"
    lines = [head, "-" * len(head)]
    for row in rows:
        cells = [_fmt(row.get(who)) for who in ("rolling", "cumulative", "mabwiser")]
        lines.append(
            f"{row['suite']:<27}{row['strategy']:<15} {cells[0]} {cells[1]} {cells[2]}"
            f"   {_fmt_diff(row.get('paired'))}  {row['verdict']}"
        )
    fails = sum(row["verdict"].startswith("FAIL") for row in rows)
    lines.append(f"targets: {'PASS' if not fails else f'FAIL ({fails} rows)'}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bandits",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="Columns: ours on rolling stats (what adapt does), ours on cumulative counts "
        "(control), MABWiser, and the paired regret difference rolling - MABWiser. Share "
        "is of the last 1,000 of 6,000 pulls (change suite: of the 1,000 after the change; "
        "cumulative suite: of the last 1,000 of 20,000, on cumulative counts only, arms "
        "drawn per seed; its target is >= 90 % for every strategy). The cumulative suite "
        "alone: python -m benchmarks.bandits --suite cumulative",
    )
    parser.add_argument("--quick", action="store_true", help="3 seeds, 2 MABWiser seeds")
    parser.add_argument(
        "--seeds",
        type=_positive,
        default=None,
        help="seeds per suite, from 0 (default: the suite's own, 20; the issue probe 3; "
        "the cumulative suite 100)",
    )
    parser.add_argument(
        "--anchor-seeds", type=int, default=20, help="seeds MABWiser plays (default 20)"
    )
    parser.add_argument("--no-anchor", action="store_true", help="skip MABWiser")
    parser.add_argument("--suite", action="append", help="run only suites whose name has this")
    parser.add_argument(
        "--interval",
        type=float,
        default=10.0,
        help=f"event seconds between pulls for rolling stats (half-life {DEFAULT_HALF_LIFE_S:g} s)",
    )
    parser.add_argument(
        "--memory",
        choices=("chosen", "recent"),
        default="chosen",
        help="what rolling stats rank on: the memory each skill's stats choose (long unless "
        "its recent outcomes disagree; default), or the recent memory alone",
    )
    parser.add_argument(
        "--rewards",
        choices=("pull", "arm"),
        default="pull",
        help="one reward stream per seed, the same draw at pull t whichever arm (default), "
        "or one per arm, the same draw at an arm's j-th pull (narrower paired intervals)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument(
        "--json", nargs="?", const="-", metavar="PATH", help="also write rows as JSON (- stdout)"
    )
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suites, print the table; exit 1 when a target fails."""
    args = _parser().parse_args(argv)
    if args.quick:
        args.seeds, args.anchor_seeds = 3 if args.seeds is None else min(args.seeds, 3), 2
    suites = [s for s in SUITES if not args.suite or any(w in s.name for w in args.suite)]
    rows = collect(args, suites)
    if args.json == "-":
        json.dump(rows, sys.stdout, indent=2)
    else:
        print(render(rows))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(rows, out, indent=2)
    return 1 if any(row["verdict"].startswith("FAIL") for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
