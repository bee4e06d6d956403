"""The web guard's decisions, and its middleware on a bare aiohttp app (no worker)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from learnstream.streams.config.settings import Settings, WebSettings
from learnstream.streams.io.web_auth import (
    allowed,
    exposed_writes_problem,
    is_loopback,
    token_matches,
    web_application_options,
)

TOKEN = "t0ken-for-the-unit-test"
GUARDED = WebSettings(token=SecretStr(TOKEN), max_body_bytes=64)


def test_token_matches_only_the_exact_bearer_token():
    assert token_matches(f"Bearer {TOKEN}", TOKEN)
    assert token_matches(f"bearer {TOKEN}", TOKEN)
    assert not token_matches(None, TOKEN)
    assert not token_matches("", TOKEN)
    assert not token_matches(TOKEN, TOKEN)
    assert not token_matches(f"Basic {TOKEN}", TOKEN)
    assert not token_matches(f"Bearer {TOKEN}x", TOKEN)
    assert not token_matches(f"Bearer {TOKEN[:-1]}", TOKEN)


@pytest.mark.parametrize(
    ("method", "header", "protect_reads", "expected"),
    [
        ("POST", None, False, False),
        ("POST", "Bearer wrong", False, False),
        ("POST", f"Bearer {TOKEN}", False, True),
        ("DELETE", None, False, False),
        ("PUT", f"Bearer {TOKEN}", False, True),
        ("GET", None, False, True),
        ("HEAD", None, False, True),
        ("GET", None, True, False),
        ("GET", "Bearer wrong", True, False),
        ("GET", f"Bearer {TOKEN}", True, True),
    ],
)
def test_allowed_with_a_token(method, header, protect_reads, expected):
    settings = WebSettings(token=SecretStr(TOKEN), protect_reads=protect_reads)
    assert allowed(method, header, settings) is expected


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_token_is_no_token(empty):
    settings = WebSettings(token=SecretStr(empty))
    assert settings.token is None
    assert exposed_writes_problem("0.0.0.0", settings) is not None  # noqa: S104


def test_without_a_token_everything_is_allowed():
    assert allowed("POST", None, WebSettings())
    assert allowed("GET", None, WebSettings(protect_reads=True))


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("::1", True), ("localhost", True), ("127.0.0.2", True),
     ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("worker.example", False)],  # noqa: S104
)  # fmt: skip
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_exposed_writes_problem_names_the_host_and_the_fix():
    problem = exposed_writes_problem("0.0.0.0", WebSettings())  # noqa: S104
    assert problem == (
        "LEARNSTREAM_WEB_HOST=0.0.0.0 exposes the /learn/* write endpoints: "
        "set LEARNSTREAM_WEB__TOKEN (or bind 127.0.0.1)"
    )
    assert exposed_writes_problem("127.0.0.1", WebSettings()) is None
    assert exposed_writes_problem("0.0.0.0", GUARDED) is None  # noqa: S104


def test_settings_read_the_web_section(monkeypatch):
    monkeypatch.setenv("LEARNSTREAM_WEB__TOKEN", TOKEN)
    monkeypatch.setenv("LEARNSTREAM_WEB__PROTECT_READS", "true")
    monkeypatch.setenv("LEARNSTREAM_WEB__MAX_BODY_BYTES", "2048")
    web_settings = Settings().web
    assert web_settings.token is not None
    assert web_settings.token.get_secret_value() == TOKEN
    assert TOKEN not in repr(web_settings)
    assert (web_settings.protect_reads, web_settings.max_body_bytes) == (True, 2048)
    assert Settings.model_fields["web"].default == WebSettings()
    assert WebSettings().max_body_bytes == 1024 * 1024


@pytest.fixture
async def client() -> AsyncIterator[TestClient]:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(body=await request.read())

    app = web.Application(**web_application_options(GUARDED))
    app.router.add_route("*", "/any", echo)
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


async def test_middleware_refuses_without_detail(client):
    answer = await client.post("/any", data=b"{}")
    assert answer.status == 401
    assert answer.headers["WWW-Authenticate"] == "Bearer"
    assert await answer.json() == {"error": "unauthorized"}
    wrong = await client.post("/any", data=b"{}", headers={"Authorization": "Bearer nope"})
    assert wrong.status == 401


async def test_middleware_lets_the_token_and_reads_through(client):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    answer = await client.post("/any", data=b"{}", headers=auth)
    assert (answer.status, await answer.read()) == (200, b"{}")
    assert (await client.get("/any")).status == 200


async def test_middleware_limits_the_body(client):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    answer = await client.post("/any", data=b"x" * 65, headers=auth)
    assert answer.status == 413
    assert await answer.json() == {"error": "the body exceeds 64 bytes"}

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: aiohttp's own limit
        for _ in range(5):
            yield b"x" * 20

    chunked = await client.post("/any", data=chunks(), headers=auth)
    assert chunked.status == 413


def test_compose_gives_the_worker_a_token_and_prometheus_shows_how_to_send_it():
    root = Path(__file__).resolve().parents[2]
    compose = yaml.safe_load((root / "docker-compose.yml").read_text(encoding="utf-8"))
    env = compose["services"]["worker"]["environment"]
    assert env["LEARNSTREAM_WEB_HOST"] == "0.0.0.0"  # noqa: S104 - hence the token
    assert env["LEARNSTREAM_WEB__TOKEN"].startswith("${LEARNSTREAM_WEB_TOKEN:?")
    prometheus = (root / "ops/prometheus/prometheus.yml").read_text(encoding="utf-8")
    assert "# authorization:\n    #   type: Bearer\n    #   credentials_file: " in prometheus
