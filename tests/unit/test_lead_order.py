"""The join's lead order (streams/join/lead.py): which input partitions wait while the plans
and the corrections catch up on a backlog."""

from __future__ import annotations

from faust.types import TP

from learnstream.agents.joins.lead import Leads
from learnstream.streams.join.lead import LAST, LeadOrder, lead_ranks

PLANS, DELTAS, APPROVED, STAGES = "plans", "deltas", "approved", "stages"
RANKS = lead_ranks(PLANS, DELTAS, (PLANS, DELTAS, APPROVED, STAGES))
ASSIGNED = [(topic, p) for topic in (PLANS, DELTAS, APPROVED, STAGES) for p in (0, 1)]


def order(backlog: int = 100, longest: float = 60.0) -> LeadOrder:
    return LeadOrder(RANKS, backlog, longest)


def test_ranks_put_the_plans_first_then_the_corrections() -> None:
    assert RANKS == {PLANS: 0, DELTAS: 1, APPROVED: LAST, STAGES: LAST}
    lead = order()
    assert [lead.leads(t) for t in (PLANS, DELTAS, APPROVED, "other")] == [
        True,
        True,
        False,
        False,
    ]


def test_a_plans_backlog_pauses_every_later_input_of_its_partition_only() -> None:
    lead = order()
    pause, resume = lead.step(0.0, ASSIGNED, {(PLANS, 0): 101, (PLANS, 1): 3, (DELTAS, 0): 0})
    assert pause == {(DELTAS, 0), (APPROVED, 0), (STAGES, 0)}
    assert resume == set()
    assert lead.paused() == frozenset(pause)


def test_a_backlog_at_the_limit_holds_nothing_back() -> None:
    assert order().step(0.0, ASSIGNED, {(PLANS, 0): 100, (DELTAS, 0): 100}) == (set(), set())


def test_a_corrections_backlog_pauses_the_decisions_but_not_the_corrections() -> None:
    pause, _ = order().step(0.0, ASSIGNED, {(PLANS, 1): 0, (DELTAS, 1): 500})
    assert pause == {(APPROVED, 1), (STAGES, 1)}


def test_a_lead_not_fetched_yet_holds_back_as_one_behind() -> None:
    pause, _ = order().step(0.0, ASSIGNED, {(PLANS, 0): None, (DELTAS, 0): 0})
    assert pause == {(DELTAS, 0), (APPROVED, 0), (STAGES, 0)}


def test_faust_resuming_an_assignment_leaves_paused_what_waits_for_a_lead() -> None:
    lead = order()
    resuming = ASSIGNED
    unread = {(PLANS, 0): None, (DELTAS, 0): None, (PLANS, 1): 0, (DELTAS, 1): 500}
    held = lead.hold(5.0, resuming, unread)
    assert held == {(DELTAS, 0), (APPROVED, 0), (STAGES, 0), (APPROVED, 1), (STAGES, 1)}
    assert lead.paused() == frozenset(held)
    # once the leads are fetched and caught up, the next step resumes them
    pause, resume = lead.step(5.25, ASSIGNED, {tp: 0 for tp in unread})
    assert (pause, resume) == (set(), held)


def test_faust_resuming_keeps_what_waits_already_and_never_holds_a_lead() -> None:
    lead = order()
    lead.step(0.0, ASSIGNED, {(PLANS, 0): 900})
    assert lead.hold(1.0, [(PLANS, 0), (APPROVED, 0)], {(PLANS, 0): 0}) == {(APPROVED, 0)}
    assert lead.since[(APPROVED, 0)] == 0.0  # still waiting since the first pause


def test_the_partitions_are_resumed_once_their_leads_have_caught_up() -> None:
    lead = order()
    lead.step(0.0, ASSIGNED, {(PLANS, 0): 900, (DELTAS, 0): 400})
    pause, resume = lead.step(1.0, ASSIGNED, {(PLANS, 0): 20, (DELTAS, 0): 400})
    assert (pause, resume) == (set(), {(DELTAS, 0)})  # the corrections still lead the rest
    pause, resume = lead.step(2.0, ASSIGNED, {(PLANS, 0): 0, (DELTAS, 0): 7})
    assert (pause, resume) == (set(), {(APPROVED, 0), (STAGES, 0)})
    assert lead.paused() == frozenset()


def test_a_partition_waits_at_most_longest_then_is_read_until_its_lead_catches_up() -> None:
    lead = order(longest=30.0)
    behind = {(PLANS, 0): 5000}
    pause, _ = lead.step(0.0, ASSIGNED, behind)
    assert (APPROVED, 0) in pause
    assert lead.step(29.9, ASSIGNED, behind) == (set(), set())
    pause, resume = lead.step(30.0, ASSIGNED, behind)
    assert (pause, resume) == (set(), {(DELTAS, 0), (APPROVED, 0), (STAGES, 0)})
    assert lead.step(100.0, ASSIGNED, behind) == (set(), set())  # released: not paused again
    assert lead.step(101.0, ASSIGNED, {(PLANS, 0): 0}) == (set(), set())  # caught up once
    pause, _ = lead.step(102.0, ASSIGNED, behind)  # a new backlog pauses them again
    assert pause == {(DELTAS, 0), (APPROVED, 0), (STAGES, 0)}


def test_a_partition_no_longer_assigned_is_dropped_not_resumed() -> None:
    lead = order()
    lead.step(0.0, ASSIGNED, {(PLANS, 0): 900})
    still = [tp for tp in ASSIGNED if tp != (APPROVED, 0)]
    pause, resume = lead.step(1.0, still, {(PLANS, 0): 900})
    assert (pause, resume) == (set(), set())
    assert lead.paused() == frozenset({(DELTAS, 0), (STAGES, 0)})


def test_a_backlog_of_zero_turns_the_order_off() -> None:
    assert not order(backlog=0).on
    assert order().on


class _Gauge:
    def __init__(self) -> None:
        self.value = -1

    def set(self, value: int) -> None:
        self.value = value


class _Consumer:
    """What the lead order reads and calls of Faust's consumer."""

    def __init__(self, highwater: dict[tuple[str, int], int]) -> None:
        self.highwater_of = highwater
        self.paused: set[tuple[str, int]] = set()
        self.calls: list[tuple[str, set[tuple[str, int]]]] = []

    def assignment(self) -> set[TP]:
        return {TP(topic, p) for topic, p in ASSIGNED}

    def highwater(self, tp: TP) -> int | None:
        return self.highwater_of.get((tp.topic, tp.partition))

    def pause_partitions(self, tps: set[TP]) -> None:
        got = {(tp.topic, tp.partition) for tp in tps}
        self.paused |= got
        self.calls.append(("pause", got))

    def resume_partitions(self, tps: set[TP]) -> None:
        got = {(tp.topic, tp.partition) for tp in tps}
        self.paused -= got
        self.calls.append(("resume", got))


class _App:
    def __init__(self, consumer: _Consumer) -> None:
        self.consumer = consumer
        self.rebalancing = False
        self.in_recovery = False


class _Progress:
    def __init__(self, expected: dict[tuple[str, int], int]) -> None:
        self.at = expected

    def expected(self, tp: TP) -> int | None:
        return self.at.get((tp.topic, tp.partition))


def test_the_timer_pauses_by_the_leads_unread_records_and_resumes_when_they_catch_up() -> None:
    consumer = _Consumer({(PLANS, 0): 1000, (PLANS, 1): 50, (DELTAS, 0): 10, (DELTAS, 1): 10})
    progress = _Progress({(PLANS, 0): 200, (PLANS, 1): 0, (DELTAS, 0): 10, (DELTAS, 1): 10})
    gauge, app = _Gauge(), _App(consumer)
    leads = Leads(app, order(), progress, gauge)  # type: ignore[arg-type]
    leads.tick(0.0)
    assert consumer.paused == {(DELTAS, 0), (APPROVED, 0), (STAGES, 0)}  # 800 unread
    assert gauge.value == 3
    consumer.paused.discard((APPROVED, 0))  # Faust's buffer drain put it back
    leads.tick(0.25)
    assert (APPROVED, 0) in consumer.paused  # paused again on the next tick
    progress.at[(PLANS, 0)] = 990
    leads.tick(0.5)
    assert consumer.paused == set()
    assert consumer.calls[-1] == ("resume", {(DELTAS, 0), (APPROVED, 0), (STAGES, 0)})
    assert gauge.value == 0


def test_the_timer_touches_nothing_during_a_rebalance() -> None:
    caught_up = {(t, p): 0 for t in (PLANS, DELTAS) for p in (0, 1)}
    consumer = _Consumer({**caught_up, (PLANS, 0): 1000})
    app, lead = _App(consumer), order()
    leads = Leads(app, lead, _Progress(caught_up), _Gauge())  # type: ignore[arg-type]
    leads.tick(0.0)
    calls, waiting = len(consumer.calls), lead.paused()
    app.rebalancing = True
    consumer.highwater_of[(PLANS, 0)] = 0
    leads.tick(1.0)
    assert len(consumer.calls) == calls  # Faust pauses and resumes the assignment itself
    assert lead.paused() == waiting


def test_the_partitions_faust_resumes_stay_paused_until_the_leads_are_fetched() -> None:
    consumer = _Consumer({})  # nothing fetched since the assignment: no high watermark
    progress = _Progress({(t, p): 0 for t in (PLANS, DELTAS) for p in (0, 1)})
    leads = Leads(_App(consumer), order(), progress, _Gauge())  # type: ignore[arg-type]
    resuming = {TP(topic, p) for topic, p in ASSIGNED}
    held = leads.held(resuming)
    assert {(tp.topic, tp.partition) for tp in held} == {
        (t, p) for t in (DELTAS, APPROVED, STAGES) for p in (0, 1)
    }
    consumer.highwater_of.update({(t, p): 0 for t in (PLANS, DELTAS) for p in (0, 1)})
    leads.tick(0.25)
    assert consumer.calls[0] == ("resume", {(tp.topic, tp.partition) for tp in held})


def test_a_failing_read_holds_nothing_back_from_faust() -> None:
    class _Broken(_Consumer):
        def highwater(self, tp: TP) -> int | None:
            raise RuntimeError("consumer not started")

    leads = Leads(_App(_Broken({})), order(), _Progress({}), _Gauge())  # type: ignore[arg-type]
    assert leads.held({TP(APPROVED, 0)}) == set()


def test_a_lead_not_assigned_here_reads_as_unknown_and_standby_numbers_are_ignored() -> None:
    class _Partial(_Consumer):
        def highwater(self, tp: TP) -> int | None:
            if tp.partition == 1:
                raise AssertionError("Partition is not assigned")
            return super().highwater(tp)

    consumer = _Partial({(PLANS, 0): 0, (DELTAS, 0): 0})
    leads = Leads(_App(consumer), order(), _Progress({(PLANS, 0): 0, (DELTAS, 0): 0}), _Gauge())  # type: ignore[arg-type]
    found = leads.leads_of([(APPROVED, 0), (APPROVED, 1), ("app-plan_state-changelog", 7)])
    assert found == {(PLANS, 0): 0, (DELTAS, 0): 0, (PLANS, 1): None, (DELTAS, 1): None}


def test_release_resumes_every_waiting_partition_until_the_leads_catch_up() -> None:
    consumer = _Consumer({(t, p): 900 for t in (PLANS, DELTAS) for p in (0, 1)})
    progress = _Progress({(t, p): 0 for t in (PLANS, DELTAS) for p in (0, 1)})
    lead = order()
    leads = Leads(_App(consumer), lead, progress, _Gauge())  # type: ignore[arg-type]
    leads.tick(0.0)
    assert consumer.paused
    leads.release()
    assert consumer.paused == set()
    leads.tick(0.25)  # released: not paused again while the backlog lasts
    assert consumer.paused == set()


def test_a_lead_fetched_whose_start_is_not_known_holds_nothing_back() -> None:
    consumer = _Consumer({(PLANS, 0): 0, (DELTAS, 0): 0})  # fetched: empty partitions
    leads = Leads(_App(consumer), order(), _Progress({}), _Gauge())  # type: ignore[arg-type]
    assert leads.leads_of([(APPROVED, 0)]) == {(PLANS, 0): 0, (DELTAS, 0): 0}
    assert leads.held({TP(APPROVED, 0), TP(DELTAS, 0)}) == set()
