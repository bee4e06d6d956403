"""The benchmarks' quiet check after a run: a worker is quiet at its own idle use."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from benchmarks.workers import settled_cpu


def _ticking(
    shares: list[float], quiet_s: float
) -> tuple[Callable[[int], float], Callable[[float], None], Callable[[], float]]:
    """Return cpu/sleep/clock fakes for a process that uses shares[i] of a core in window i."""
    used, now, windows = [0.0], [0.0], iter(shares)

    def sleep(seconds: float) -> None:
        now[0] += seconds
        used[0] += next(windows) * quiet_s

    return (lambda pid: used[0]), sleep, (lambda: now[0])


@pytest.mark.parametrize(
    ("shares", "windows"),
    [
        ([0.9, 0.6, 0.15, 0.09, 0.09], 5),  # falls to an idle worker's polling, then holds
        ([0.08], 1),  # idle from the start
        ([0.9, 0.04, 0.03], 3),  # a long drop is not quiet until it holds
    ],
)
def test_settled_cpu_sees_a_worker_quiet_at_its_own_idle_use(
    shares: list[float], windows: int
) -> None:
    cpu, sleep, clock = _ticking(shares, 1.0)
    got = settled_cpu(0, 1.0, 60.0, cpu=cpu, sleep=sleep, clock=clock)
    assert got == pytest.approx(sum(shares[:windows]))


def test_settled_cpu_gives_up_on_a_busy_process_at_the_limit() -> None:
    cpu, sleep, clock = _ticking([0.5] * 10, 1.0)
    assert settled_cpu(0, 1.0, 5.0, cpu=cpu, sleep=sleep, clock=clock) == pytest.approx(2.5)
