"""Two workers, one answer: stats and adapt from every partition, whichever worker is asked;
and the synchronous client example of docs/a2e.md, run as it is.

Feedback for several skills goes to both workers over HTTP under fresh correlation ids, so
it lands on every partition of the requests topic and each worker counts only part of it;
then ``GET /learn/stats`` and ``POST /learn/adapt`` on either worker give the same stats
and, for the same request (its correlation id and ``as_of``), the same ranking; adapt
requests are answered by the learn agent of whichever worker owns their partition (both
answer some), and unseeded requests under fresh ids draw afresh, so they explore.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

#: Skill -> (positive, negative) feedbacks: a clear order of success rates.
FEEDBACK = {"alpha": (9, 1), "beta": (6, 4), "gamma": (3, 7), "delta": (1, 9)}
TOTAL = sum(p + n for p, n in FEEDBACK.values())


async def _metric(http: aiohttp.ClientSession, base: str, prefix: str) -> list[str]:
    async with http.get(f"{base}/metrics") as answer:
        return [line for line in (await answer.text()).splitlines() if line.startswith(prefix)]


async def _post(
    http: aiohttp.ClientSession, url: str, body: dict[str, Any], cid: str | None = None
) -> dict[str, Any]:
    headers = {"X-Correlation-Id": cid or str(uuid.uuid4())}
    async with http.post(url, json=body, headers=headers) as answer:
        assert answer.status == 200, await answer.text()
        result: dict[str, Any] = await answer.json()
        return result


async def _feed(http: aiohttp.ClientSession, bases: list[str]) -> None:
    """Post every feedback at once, alternating workers: each waits for its own answer."""
    posts = []
    for skill, (good, bad) in FEEDBACK.items():
        for score in [1.0] * good + [-1.0] * bad:
            sent = len(posts)
            polarity = "POSITIVE" if score > 0 else "NEGATIVE"
            body = {"correlation_id": f"turn-{sent}", "polarity": polarity, "score": score,
                    "skill_name": skill}  # fmt: skip
            posts.append(_post(http, f"{bases[sent % 2]}/learn/feedback", body))
    await asyncio.gather(*posts)


async def _stats(http: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    async with http.get(f"{base}/learn/stats") as answer:
        assert answer.status == 200
        payload: dict[str, Any] = (await answer.json())["payload"]
        return payload


async def _adapt_counts(http: aiohttp.ClientSession, base: str) -> float:
    lines = await _metric(http, base, "learnstream_learn_requests_total{")
    return sum(float(x.rsplit(" ", 1)[1]) for x in lines if 'type="adapt"' in x)


async def test_two_workers_answer_stats_and_adapt_the_same(
    broker, start_worker, namespace, tmp_path
):
    env = {"LEARNSTREAM_A2E__RESPONSE_TIMEOUT": "60s", "LEARNSTREAM_SAMPLE_FORMAT": "json"}
    workers = [start_worker(**env, LEARNSTREAM_DATA_DIR=str(tmp_path / f"d{i}")) for i in (0, 1)]
    bases = [f"http://127.0.0.1:{w.web_port}" for w in workers]
    timeout = aiohttp.ClientTimeout(total=90)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        await _feed(http, bases)  # a rebalance as the second joins holds answers meanwhile

        for _ in range(60):  # the last writes may still be on their way to the changelog
            answers = [await _stats(http, b) for b in bases]
            totals = [sum(s["calls_total"] for s in a["skills"]) for a in answers]
            if totals == [TOTAL, TOTAL]:
                break
            await asyncio.sleep(0.5)
        assert answers[0] == answers[1]
        got = {s["name"]: (s["calls_success"], s["calls_failed"]) for s in answers[0]["skills"]}
        assert got == FEEDBACK

        as_of = time.time()  # when the same request weighs the stats, whoever answers
        rankings: dict[str, set[tuple[str, ...]]] = {}

        async def ask_eight_times(strategy: str, body: dict[str, Any]) -> None:
            """The same request (one id) posted to both workers in turn (one at a time:
            a worker refuses an id already in flight)."""
            cid = f"{strategy}-{uuid.uuid4()}"
            for i in range(8):
                answer = await _post(http, f"{bases[i % 2]}/learn/adapt", body, cid)
                names = tuple(r["name"] for r in answer["payload"]["records"])
                rankings.setdefault(f"{strategy}, seed {'seed' in body}", set()).add(names)

        await asyncio.gather(
            *(
                ask_eight_times(strategy, body)
                for strategy in ("ucb1", "epsilon_greedy", "softmax", "thompson")
                for body in (
                    {"strategy": strategy, "seed": 11},
                    {"strategy": strategy, "as_of": as_of},
                )
            )
        )
        assert all(len(seen) == 1 for seen in rankings.values()), rankings
        assert rankings["ucb1, seed True"] == {("alpha", "beta", "gamma", "delta")}

        explore = {"strategy": "epsilon_greedy", "params": {"epsilon": 1.0}}
        answers = await asyncio.gather(  # fresh ids: on both workers' partitions, drawn afresh
            *(_post(http, f"{bases[i % 2]}/learn/adapt", explore) for i in range(24))
        )
        firsts = {answer["payload"]["records"][0]["name"] for answer in answers}
        assert len(firsts) > 1, firsts  # a seed fixed per query would pick one arm every time
        counts = [await _adapt_counts(http, b) for b in bases]
        assert all(n > 0 for n in counts), counts  # each worker's agent ranked some


DOC_EXAMPLE = "<!-- tests/integration/test_learn_workers.py runs this block as it is -->"
A2E_DOC = ROOT / "docs" / "a2e.md"


def _doc_example() -> str:
    after = A2E_DOC.read_text().split(DOC_EXAMPLE, 1)[1]
    return after.split("```python\n", 1)[1].split("```\n", 1)[0]


def test_the_a2e_doc_sync_client_example_runs(start_worker, tmp_path):
    """The synchronous client snippet, unchanged, against a fresh worker over HTTP."""
    worker = start_worker()
    script = tmp_path / "learn_example.py"
    script.write_text(_doc_example())
    done = subprocess.run(
        [sys.executable, str(script)],
        env=os.environ | {"LEARNSTREAM_URL": f"http://127.0.0.1:{worker.web_port}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "next: search, browse, deploy",
        "browse: 2/6 ok, avg score -0.33",
        "deploy: 0/1 ok, avg score -0.50",
        "search: 6/6 ok, avg score +1.00",
    ]
    shown = "On a fresh worker it prints `next: search, browse, deploy`"
    assert shown in A2E_DOC.read_text()
