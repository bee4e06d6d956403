"""One module knows Faust's and aiokafka's internals, and a worker refuses to start on a
Faust whose seams changed (agents/seams/faust_compat.py, agents/seams/faust_check.py)."""

from __future__ import annotations

import asyncio
import re
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from faust.transport import consumer as faust_consumer
from faust.transport.drivers import aiokafka as faust_aiokafka

from learnstream.agents.seams.faust_check import PINNED, SEAMS, check
from learnstream.streams.config.usererrors import UserError

ROOT = Path(__file__).resolve().parents[2]
COMPAT = {
    ROOT / "agents" / "seams" / "faust_compat.py",
    ROOT / "agents" / "seams" / "faust_check.py",
}

#: Private attributes of Faust, mode, aiokafka and asyncio objects: the seams, and others
#: a newcomer would reach for (the app's consumer and producer, a driver's client).
SEAM_NAMES = {seam.name.rpartition(".")[2] for seam in SEAMS}
PRIVATE = sorted(
    {name for name in SEAM_NAMES if name.startswith("_")}
    | {"_acked_index", "_send_pending", "_consumer", "_producer", "_transport", "_fetcher"}
    | {"_thread", "_topic_groups", "_attachments", "_transactions", "_monitor"}
)
#: ``x._name`` (not ``self._name``: a class's own state) or ``getattr(x, "_name")``.
PRIVATE_USE = re.compile(rf"(?<!\bself)\.({'|'.join(PRIVATE)})\b|[\"']({'|'.join(PRIVATE)})[\"']")


def test_the_installed_packages_pass() -> None:
    check()


def test_the_pins_are_the_checked_and_installed_versions() -> None:
    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for package, expected in PINNED.items():
        assert f"{package}=={expected}" in pinned
        assert version(package) == expected


def test_a_missing_seam_is_named_with_the_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(faust_consumer.Consumer, "_new_offset")
    monkeypatch.setattr("learnstream.agents.seams.faust_check.version", lambda package: "0.16.0")
    with pytest.raises(UserError) as caught:
        check()
    assert str(caught.value) == (
        "faust-streaming 0.16.0 is not the version learnstream was built for (0.15.3): "
        "Consumer._new_offset is missing; install faust-streaming==0.15.3"
    )


def test_a_changed_signature_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    async def _commit(self: Any, offsets: Any, start_new_transaction: bool = True) -> bool:
        return True

    monkeypatch.setattr(faust_aiokafka.Consumer, "_commit", _commit)
    expected = r"^faust-streaming 0\.15\.3 is not the release .*: Consumer\._commit changed; "
    with pytest.raises(UserError, match=expected + r"reinstall faust-streaming==0\.15\.3$"):
        check()


def test_a_changed_transaction_id_format_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    async def commit(self: Any, offsets: Any, start_new_transaction: bool = True) -> bool:
        transactional_id = f"{self.app.conf.id}-{offsets}"  # not the format we copy
        return bool(transactional_id)

    monkeypatch.setattr(faust_consumer.TransactionManager, "commit", commit)
    with pytest.raises(UserError, match=r": TransactionManager\.commit changed; "):
        check()


def test_attributes_faust_no_longer_creates_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self.offsets = {}

    monkeypatch.setattr(faust_consumer.Consumer, "__init__", __init__)
    with pytest.raises(UserError, match=r": Consumer\._read_offset changed; .* \(and 3 more\)$"):
        check()


def test_python_seams_name_python(monkeypatch: pytest.MonkeyPatch) -> None:
    def __init__(self: Any, maxsize: int = 0) -> None:
        self.waiting = []

    monkeypatch.setattr(asyncio.Queue, "__init__", __init__)
    expected = r"^Python 3\.\d+\.\d+: asyncio\.Queue\._getters changed; "
    with pytest.raises(UserError, match=expected + "learnstream runs on Python 3.11 to 3.13$"):
        check()


def test_aiokafka_seams_name_aiokafka(monkeypatch: pytest.MonkeyPatch) -> None:
    from aiokafka.client import AIOKafkaClient

    monkeypatch.delattr(AIOKafkaClient, "force_metadata_update")
    with pytest.raises(UserError, match=r"^aiokafka 0\.14\.0 .*: AIOKafkaClient\."):
        check()


def test_a_worker_refuses_to_start_on_a_changed_faust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from learnstream.agents.wiring import wire
    from learnstream.streams.config.settings import Settings
    from learnstream.streams.io.app import create_app

    settings = Settings(data_dir=str(tmp_path))
    app = create_app(settings, "kafka://127.0.0.1:9", embedded=False)
    monkeypatch.delattr(faust_consumer.Consumer, "_filter_tps_with_pending_acks")
    with pytest.raises(UserError, match=r"Consumer\._filter_tps_with_pending_acks is missing"):
        wire(app, settings)


def sources() -> list[Path]:
    return [
        path
        for folder in ("streams", "agents", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path not in COMPAT
    ]


def test_no_other_module_touches_fausts_or_aiokafkas_internals() -> None:
    assert {"_commit", "_read_offset", "_client", "_getters", "_committed_offset"} <= set(PRIVATE)
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE_USE.search(line)
    ]
    assert found == []


def test_the_source_check_finds_a_private_use() -> None:
    """The pattern above is not blind: the lines moved into faust_compat would be caught."""
    assert PRIVATE_USE.search("await consumer._client.force_metadata_update()")
    assert PRIVATE_USE.search('committed = getattr(consumer, "_committed_offset", {})')
    assert PRIVATE_USE.search("consumer._read_offset = DeliverAll()")
    assert not PRIVATE_USE.search("self._client = None")
