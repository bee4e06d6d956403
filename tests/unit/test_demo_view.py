"""The demo's live view shows every sample family, and the preference pairs."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

from rich.console import Console

from learnstream.streams.io.demo import DemoView
from learnstream.streams.samples.pairs import PAIR_KINDS
from learnstream.streams.samples.sample import FAMILIES


def _view() -> DemoView:
    pub = SimpleNamespace(stats=SimpleNamespace(sent=7))
    return DemoView(pub, "http://127.0.0.1:6066/metrics")  # type: ignore[arg-type]


def _text(view: DemoView) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(view.render())
    return console.export_text()


def _sample(family: str, quality: str) -> bytes:
    return json.dumps({"sample_family": family, "feedback": {"quality_label": quality}}).encode()


def _row(text: str, family: str) -> list[str]:
    line = next(line for line in text.splitlines() if f" {family} " in line)
    return [cell.strip() for cell in line.strip("│┃ ").split("│")]


def test_every_family_has_a_row_before_its_first_sample() -> None:
    text = _text(_view())
    for family in FAMILIES:
        assert _row(text, family) == [family, "0", "0", "0", "0%", "0%"], family


def test_counts_by_family_and_quality_and_pairs_by_kind() -> None:
    view = _view()
    for quality in ("good", "good", "poor", "acceptable"):
        view.record("samples", _sample("graph_evolution", quality), {})
    view.record("samples", _sample("multi_agent_coordination", "poor"), {})
    for kind in (*PAIR_KINDS, PAIR_KINDS[0]):
        view.record("pairs", json.dumps({"kind": kind, "pair_id": "p"}).encode(), {})
    view.record("dlq", b"x", {"reason": b"invalid_json"})
    text = _text(view)
    assert _row(text, "graph_evolution") == ["graph_evolution", "2", "1", "1", "50%", "25%"]
    assert _row(text, "multi_agent_coordination")[1:4] == ["0", "0", "1"]
    assert _row(text, "intent_resolution")[1:4] == ["0", "0", "0"]
    assert f"preference pairs: {len(PAIR_KINDS) + 1}" in text
    assert view.pairs == {**dict.fromkeys(PAIR_KINDS, 1), PAIR_KINDS[0]: 2}
    assert "dead letters: 1" in text
