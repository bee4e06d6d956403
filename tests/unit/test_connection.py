"""Kafka security settings, the connection every client is built from, and the handshake check."""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from faust.auth import SASLCredentials, SSLCredentials
from faust.transport.drivers.aiokafka import credentials_to_aiokafka_auth
from faust.types.auth import AuthProtocol, SASLMechanism
from pydantic import SecretStr

from learnstream.agents.cli.main import main
from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import UserError
from learnstream.streams.io.broker_check import handshake_problem
from learnstream.streams.io.connection import KafkaConnection, bootstrap_of, connection_of
from tests.support.tls import Authority

PASSWORD = "pw-Zq81-never-printed"
URL = "kafka://127.0.0.1:9093"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every test from the defaults, whatever the shell exported."""
    for name in list(os.environ):
        if name.startswith("LEARNSTREAM_"):
            monkeypatch.delenv(name)


@pytest.fixture(scope="module")
def ca() -> Authority:
    """Return the CA that signs the servers' certificates."""
    return Authority()


@pytest.fixture
def cafile(ca: Authority, tmp_path: Path) -> Path:
    """Return the CA certificate as a PEM file."""
    return ca.write(tmp_path / "ca.pem")


def _sasl_ssl(cafile: Path, url: str = URL) -> Settings:
    return Settings(
        broker_url=url,
        broker={
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": "alice",
            "sasl_password": PASSWORD,
            "ssl_cafile": str(cafile),
        },
    )


# ----------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("env", "line"),
    [
        (
            {"LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SASL_SSL", "LEARNSTREAM_BROKER_URL": URL},
            "LEARNSTREAM_BROKER__SECURITY_PROTOCOL=SASL_SSL needs "
            "LEARNSTREAM_BROKER__SASL_MECHANISM, LEARNSTREAM_BROKER__SASL_USERNAME, "
            "LEARNSTREAM_BROKER__SASL_PASSWORD",
        ),
        (
            {
                "LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                "LEARNSTREAM_BROKER__SASL_MECHANISM": "PLAIN",
                "LEARNSTREAM_BROKER__SASL_USERNAME": "alice",
                "LEARNSTREAM_BROKER__SASL_PASSWORD": " ",  # blank counts as unset
                "LEARNSTREAM_BROKER_URL": URL,
            },
            "LEARNSTREAM_BROKER__SECURITY_PROTOCOL=SASL_PLAINTEXT needs "
            "LEARNSTREAM_BROKER__SASL_PASSWORD",
        ),
        (
            {"LEARNSTREAM_BROKER__SASL_PASSWORD": PASSWORD, "LEARNSTREAM_BROKER_URL": URL},
            "LEARNSTREAM_BROKER__SASL_PASSWORD applies only with "
            "LEARNSTREAM_BROKER__SECURITY_PROTOCOL=SASL_SSL or SASL_PLAINTEXT (it is PLAINTEXT)",
        ),
        (
            {
                "LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SSL",
                "LEARNSTREAM_BROKER__SASL_USERNAME": "alice",
                "LEARNSTREAM_BROKER__SASL_PASSWORD": PASSWORD,
                "LEARNSTREAM_BROKER_URL": URL,
            },
            "LEARNSTREAM_BROKER__SASL_USERNAME, LEARNSTREAM_BROKER__SASL_PASSWORD apply only "
            "with LEARNSTREAM_BROKER__SECURITY_PROTOCOL=SASL_SSL or SASL_PLAINTEXT (it is SSL)",
        ),
        (
            {"LEARNSTREAM_BROKER__SSL_CAFILE": "{cafile}", "LEARNSTREAM_BROKER_URL": URL},
            "LEARNSTREAM_BROKER__SSL_CAFILE applies only with "
            "LEARNSTREAM_BROKER__SECURITY_PROTOCOL=SSL or SASL_SSL (it is PLAINTEXT)",
        ),
        (
            {
                "LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SSL",
                "LEARNSTREAM_BROKER__SSL_CERTFILE": "{cafile}",
                "LEARNSTREAM_BROKER_URL": URL,
            },
            "LEARNSTREAM_BROKER__SSL_CERTFILE and LEARNSTREAM_BROKER__SSL_KEYFILE go together: "
            "set both or neither",
        ),
        (
            {
                "LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SSL",
                "LEARNSTREAM_BROKER__SSL_KEY_PASSWORD": PASSWORD,
                "LEARNSTREAM_BROKER_URL": URL,
            },
            "LEARNSTREAM_BROKER__SSL_KEY_PASSWORD needs LEARNSTREAM_BROKER__SSL_KEYFILE "
            "(the key it decrypts)",
        ),
        (
            {
                "LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SSL",
                "LEARNSTREAM_BROKER__SSL_CAFILE": "/no/such/ca.pem",
                "LEARNSTREAM_BROKER_URL": URL,
            },
            "LEARNSTREAM_BROKER__SSL_CAFILE names no readable file: give the path of a PEM file",
        ),
        (
            {"LEARNSTREAM_BROKER_URL": f"kafka://alice:{PASSWORD}@127.0.0.1:9093"},
            "LEARNSTREAM_BROKER_URL must not hold credentials (user:password@): set "
            "LEARNSTREAM_BROKER__SASL_USERNAME and LEARNSTREAM_BROKER__SASL_PASSWORD instead",
        ),
        (
            {"LEARNSTREAM_BROKER__URL": f"kafka://alice:{PASSWORD}@127.0.0.1:9093"},
            "LEARNSTREAM_BROKER__URL must not hold credentials (user:password@): set "
            "LEARNSTREAM_BROKER__SASL_USERNAME and LEARNSTREAM_BROKER__SASL_PASSWORD instead",
        ),
        (
            {"LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SSL"},
            "LEARNSTREAM_BROKER__SECURITY_PROTOCOL and the other TLS/SASL settings apply only "
            "to an external broker: set LEARNSTREAM_BROKER_URL too (the embedded broker has none)",
        ),
        (
            {"LEARNSTREAM_BROKER__SASL_MECHANISM": "GSSAPI", "LEARNSTREAM_BROKER_URL": URL},
            "LEARNSTREAM_BROKER__SASL_MECHANISM must be 'PLAIN', 'SCRAM-SHA-256' or "
            "'SCRAM-SHA-512'",
        ),
    ],
)
def test_inconsistent_security_fails_in_one_line_without_the_values(
    monkeypatch: pytest.MonkeyPatch, cafile: Path, env: dict[str, str], line: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(cafile=cafile))
    result = CliRunner().invoke(main, ["config"])
    assert (result.exit_code, result.output) == (1, f"Error: {line}\n")
    assert PASSWORD not in result.output


def test_a_consistent_sasl_ssl_config_is_accepted_and_printed_masked(
    monkeypatch: pytest.MonkeyPatch, cafile: Path
) -> None:
    env = {
        "LEARNSTREAM_BROKER_URL": URL,
        "LEARNSTREAM_BROKER__SECURITY_PROTOCOL": "SASL_SSL",
        "LEARNSTREAM_BROKER__SASL_MECHANISM": "SCRAM-SHA-512",
        "LEARNSTREAM_BROKER__SASL_USERNAME": "alice",
        "LEARNSTREAM_BROKER__SASL_PASSWORD": PASSWORD,
        "LEARNSTREAM_BROKER__SSL_CAFILE": str(cafile),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, ["config"])
    assert result.exit_code == 0, result.output
    assert "LEARNSTREAM_BROKER__SECURITY_PROTOCOL=SASL_SSL" in result.output.splitlines()
    assert "LEARNSTREAM_BROKER__SASL_PASSWORD='**********'" in result.output.splitlines()
    assert PASSWORD not in result.output


# ----------------------------------------------------------------- the connection


def test_a_bootstrap_string_connects_in_plaintext() -> None:
    connection = connection_of("kafka://b1:9092;kafka://b2/")
    assert connection.bootstrap == "b1:9092,b2"
    assert connection.hosts == [("b1", 9092), ("b2", 9092)]
    assert connection.client_options() == {
        "bootstrap_servers": "b1:9092,b2",
        "security_protocol": "PLAINTEXT",
    }
    assert connection.faust_credentials() is None
    assert connection_of(connection) is connection
    assert KafkaConnection("[::1]:9093").hosts == [("::1", 9093)]
    assert bootstrap_of("kafka://h:1,h2:2") == "h:1,h2:2"


def test_sasl_ssl_options_for_aiokafka(cafile: Path, ca: Authority) -> None:
    connection = KafkaConnection.of(_sasl_ssl(cafile).broker, URL)
    options = connection.client_options()
    context = options.pop("ssl_context")
    assert options == {
        "bootstrap_servers": "127.0.0.1:9093",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice",
        "sasl_plain_password": PASSWORD,
    }
    assert isinstance(context, ssl.SSLContext)
    assert context.check_hostname
    assert context.verify_mode == ssl.CERT_REQUIRED
    subjects = [str(c["subject"]) for c in context.get_ca_certs()]
    assert subjects == [str(((("commonName", "learnstream test CA"),),))]


def test_faust_credentials_give_faust_the_same_options(cafile: Path) -> None:
    connection = KafkaConnection.of(_sasl_ssl(cafile).broker, URL)
    credentials = connection.faust_credentials()
    assert isinstance(credentials, SASLCredentials)
    assert credentials.protocol is AuthProtocol.SASL_SSL
    assert credentials.mechanism is SASLMechanism.SCRAM_SHA_512
    faust_options = credentials_to_aiokafka_auth(credentials)  # what Faust gives aiokafka
    ours = connection.auth_options()
    assert faust_options.keys() == ours.keys()
    assert {k: v for k, v in faust_options.items() if k != "ssl_context"} == {
        k: v for k, v in ours.items() if k != "ssl_context"
    }


def test_the_faust_app_gets_the_credentials(cafile: Path, tmp_path: Path) -> None:
    from learnstream.streams.io.app import create_app

    settings = _sasl_ssl(cafile).model_copy(update={"data_dir": str(tmp_path)})
    credentials = create_app(settings, URL, embedded=False).conf.broker_credentials
    assert isinstance(credentials, SASLCredentials)
    assert (credentials.protocol, credentials.username) == (AuthProtocol.SASL_SSL, "alice")
    assert credentials.mechanism is SASLMechanism.SCRAM_SHA_512
    plain = Settings(broker_url=URL, data_dir=str(tmp_path))
    assert create_app(plain, URL, embedded=False).conf.broker_credentials is None


def test_faust_credentials_for_ssl_and_sasl_plaintext(cafile: Path) -> None:
    tls = KafkaConnection("h:9093", "SSL", ssl_cafile=str(cafile)).faust_credentials()
    assert isinstance(tls, SSLCredentials)
    assert tls.protocol is AuthProtocol.SSL
    sasl = KafkaConnection(
        "h:9092", "SASL_PLAINTEXT", "PLAIN", "bob", _secret(PASSWORD)
    ).faust_credentials()
    assert isinstance(sasl, SASLCredentials)
    assert (sasl.protocol, sasl.mechanism) == (AuthProtocol.SASL_PLAINTEXT, SASLMechanism.PLAIN)
    assert credentials_to_aiokafka_auth(sasl)["ssl_context"] is None


def test_repr_hides_every_password(cafile: Path) -> None:
    connection = KafkaConnection.of(_sasl_ssl(cafile).broker, URL)
    keyed = KafkaConnection("h:1", "SSL", ssl_key_password=_secret(PASSWORD))
    for text in (
        repr(connection),
        str(connection),
        repr(keyed),
        repr(connection.faust_credentials()),
    ):
        assert PASSWORD not in text
    assert "alice" in repr(connection)


def test_client_certificate_with_an_encrypted_key(ca: Authority, tmp_path: Path) -> None:
    cert, key = ca.issue("learnstream client").write(tmp_path, "client", password=PASSWORD)

    def context(password: str | None) -> ssl.SSLContext | None:
        secret = _secret(password) if password else None
        return KafkaConnection(
            "h:1", "SSL", ssl_certfile=str(cert), ssl_keyfile=str(key), ssl_key_password=secret
        ).ssl_context()

    assert isinstance(context(PASSWORD), ssl.SSLContext)
    for wrong in ("not-the-password", None):  # None must not ask a terminal for it
        with pytest.raises(UserError) as caught:
            context(wrong)
        assert str(caught.value).startswith("cannot load the client certificate (")
        assert str(caught.value).endswith(
            "check LEARNSTREAM_BROKER__SSL_CERTFILE, LEARNSTREAM_BROKER__SSL_KEYFILE (the key "
            "of that certificate) and LEARNSTREAM_BROKER__SSL_KEY_PASSWORD"
        )
        assert PASSWORD not in str(caught.value)


def test_a_cafile_that_is_not_a_certificate(tmp_path: Path) -> None:
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate\n")
    with pytest.raises(UserError, match=r"^LEARNSTREAM_BROKER__SSL_CAFILE holds no PEM CA"):
        KafkaConnection("h:1", "SSL", ssl_cafile=str(bogus)).ssl_context()


def _secret(value: str) -> SecretStr:
    return SecretStr(value)


# ----------------------------------------------------------------- the handshake check


@contextlib.asynccontextmanager
async def _server(context: ssl.SSLContext | None) -> AsyncIterator[int]:
    async def hang_up(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0, ssl=context)
    async with server:
        yield server.sockets[0].getsockname()[1]


def _server_context(ca: Authority, tmp_path: Path, hosts: tuple[str, ...]) -> ssl.SSLContext:
    cert, key = ca.issue("broker", hosts).write(tmp_path, "broker")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


@pytest.mark.parametrize(
    ("signer", "hosts", "why"),
    [
        (
            "another CA",
            ("127.0.0.1",),
            "is not signed by LEARNSTREAM_BROKER__SSL_CAFILE (certificate verify failed)",
        ),
        (
            "our CA",
            ("broker.example",),
            "is not issued for that host (certificate verify failed): "
            "connect by a name the certificate lists",
        ),
    ],
)
async def test_a_certificate_we_cannot_trust_is_named(
    signer: str, hosts: tuple[str, ...], why: str, ca: Authority, cafile: Path, tmp_path: Path
) -> None:
    authority = ca if signer == "our CA" else Authority(signer)
    async with _server(_server_context(authority, tmp_path, hosts)) as port:
        connection = KafkaConnection(f"127.0.0.1:{port}", "SSL", ssl_cafile=str(cafile))
        problem = await handshake_problem(connection, limit=5)
    assert problem == f"TLS to 127.0.0.1:{port} failed: the broker's certificate {why}"


async def test_plaintext_to_a_tls_listener_says_check_the_protocol(
    ca: Authority, tmp_path: Path
) -> None:
    async with _server(_server_context(ca, tmp_path, ("127.0.0.1",))) as port:
        problem = await handshake_problem(KafkaConnection(f"127.0.0.1:{port}"), limit=5)
        assert problem == (
            f"the broker at 127.0.0.1:{port} closed the connection during the handshake: check "
            "LEARNSTREAM_BROKER__SECURITY_PROTOCOL (PLAINTEXT) against the broker's listener"
        )
