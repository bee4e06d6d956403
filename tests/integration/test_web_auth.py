"""The worker's web server with LEARNSTREAM_WEB__TOKEN: writes need the bearer token, reads
only with protect_reads; bodies are size-limited and validated; the token leaks nowhere; a
worker bound to the network with no token refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys

import aiohttp
import pytest
from click.testing import CliRunner

from learnstream.agents.cli.main import main
from learnstream.streams.a2e.client import LearnAPI
from learnstream.streams.io.a2e_transport import HttpTransport

pytestmark = pytest.mark.integration

TOKEN = "web-tok-9Qx-known-to-the-test-only"
WRITES = ("/learn/feedback", "/learn/experience", "/learn/adapt")
READS = ("/metrics", "/quality", "/learn/stats")
WRONG = {"Authorization": "Bearer not-the-token"}
RIGHT = {"Authorization": f"Bearer {TOKEN}"}


async def _status(http: aiohttp.ClientSession, method: str, url: str, **options) -> int:
    async with http.request(method, url, **options) as answer:
        body = await answer.read()
        if answer.status == 401:  # no detail: nothing about why, or what was expected
            assert body == b'{"error": "unauthorized"}'
            assert answer.headers["WWW-Authenticate"] == "Bearer"
        return answer.status


async def _use_the_api(base: str, token: str) -> None:
    async with HttpTransport(base, token, timeout=60) as transport:
        api = LearnAPI(transport, timeout=60)
        result = await api.feedback(polarity="POSITIVE", score=0.5, skill_name="search")
        assert result.accepted == 1
        transition = {"state": {}, "action": {"a": 1}, "reward": 1.0, "next_state": {},
                      "done": True}  # fmt: skip
        assert await api.experience([transition]) == 1
        assert [r.name for r in await api.adapt(strategy="ucb1")] == ["search"]


async def test_writes_need_the_token_and_reads_stay_open(start_worker):
    worker = start_worker(LEARNSTREAM_WEB__TOKEN=TOKEN, LEARNSTREAM_WEB__MAX_BODY_BYTES="4096")
    base = f"http://127.0.0.1:{worker.web_port}"
    async with aiohttp.ClientSession() as http:
        for path in WRITES:
            assert await _status(http, "POST", base + path, json={}) == 401, path
            assert await _status(http, "POST", base + path, json={}, headers=WRONG) == 401, path
            # Through the guard: a bad body is then the view's 400.
            assert await _status(http, "POST", base + path, json=[1], headers=RIGHT) == 400, path
        for path in READS:
            assert await _status(http, "GET", base + path) == 200, path
            assert await _status(http, "GET", base + path, headers=WRONG) == 200, path
        await _use_the_api(base, TOKEN)

        big = b'{"experiences": [' + b" " * 5000 + b"]}"
        url = f"{base}/learn/experience"
        assert await _status(http, "POST", url, data=big, headers=RIGHT) == 413
        async with http.post(url, data=b"{not json", headers=RIGHT) as answer:
            assert answer.status == 400
            assert await answer.json() == {"error": "the body is not valid JSON"}
        async with http.get(f"{base}/metrics") as answer:
            metrics = await answer.text()
    assert "learnstream_" in metrics
    assert TOKEN not in metrics
    worker.stop()
    assert TOKEN not in worker.log()


async def test_protect_reads_puts_every_page_behind_the_token(start_worker, worker_env):
    worker = start_worker(LEARNSTREAM_WEB__TOKEN=TOKEN, LEARNSTREAM_WEB__PROTECT_READS="true")
    base = f"http://127.0.0.1:{worker.web_port}"
    async with aiohttp.ClientSession() as http:
        for path in READS:
            assert await _status(http, "GET", base + path) == 401, path
            assert await _status(http, "GET", base + path, headers=WRONG) == 401, path
            assert await _status(http, "GET", base + path, headers=RIGHT) == 200, path
        assert await _status(http, "POST", f"{base}/learn/adapt", json={}) == 401
        await _use_the_api(base, TOKEN)

    env = {**worker_env, "LEARNSTREAM_WEB_PORT": str(worker.web_port)}
    shown = CliRunner().invoke(main, ["quality"], env={**env, "LEARNSTREAM_WEB__TOKEN": TOKEN})
    assert shown.exit_code == 0, shown.output
    assert "from the worker at" in shown.output
    refused = CliRunner().invoke(main, ["quality"], env={**env, "LEARNSTREAM_WEB__TOKEN": "wrong"})
    assert refused.exit_code == 1
    assert refused.output.splitlines() == [
        f"Error: the worker at http://127.0.0.1:{worker.web_port}/quality refused the request: "
        "set LEARNSTREAM_WEB__TOKEN to its token"
    ]


def test_a_worker_on_the_network_without_a_token_refuses_to_start(worker_env):
    # Refused in the pre-flight, before anything binds: 0.0.0.0 is never listened on.
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEARNSTREAM_")}
    env |= worker_env | {"LEARNSTREAM_WEB_HOST": "0.0.0.0"}  # noqa: S104
    done = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "learnstream", "worker"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "Error: LEARNSTREAM_WEB_HOST=0.0.0.0 exposes the /learn/* write endpoints: "
        "set LEARNSTREAM_WEB__TOKEN (or bind 127.0.0.1)"
    ]
