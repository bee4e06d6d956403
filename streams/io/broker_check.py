"""Check that the broker accepts our TLS and SASL before anything starts; one line if not.

aiokafka's clients log the cause of a failed handshake and then retry, or raise "Unable to
bootstrap" without it; Faust retries for ever. So the worker's pre-flight and every CLI
command first open one connection of their own, where the cause is still known.
"""

from __future__ import annotations

import asyncio
import ssl

import aiokafka.errors as kafka_errors
from aiokafka.conn import create_conn
from aiokafka.protocol.metadata import MetadataRequest

from learnstream.streams.config.usererrors import UserError
from learnstream.streams.io.connection import KafkaConnection

__all__ = ["check_handshake", "handshake_problem"]

_VAR = "LEARNSTREAM_BROKER__"
#: OpenSSL's X509_V_ERR_* codes that have a clearer wording than "verify failed".
_EXPIRED, _NAME_MISMATCH = 10, (62, 64)  # host name, IP address


async def _handshake(connection: KafkaConnection, host: str, port: int, limit: float) -> None:
    """Connect, authenticate and ask for metadata once (aiokafka's own bootstrap steps)."""
    options = connection.auth_options()
    async with asyncio.timeout(limit):
        conn = await create_conn(
            host, port, client_id="learnstream-check", request_timeout_ms=int(limit * 1000),
            **options,
        )  # fmt: skip
        try:  # a listener that wants SASL first answers ApiVersions, then hangs up here
            await conn.send(MetadataRequest([]))
        finally:
            conn.close()


def _tls_problem(exc: ssl.SSLError, connection: KafkaConnection, where: str) -> str:
    if not isinstance(exc, ssl.SSLCertVerificationError):
        return (
            f"TLS to {where} failed ({(exc.reason or 'handshake error').lower()}): is it a TLS "
            f"listener? check {_VAR}SECURITY_PROTOCOL ({connection.security_protocol})"
        )
    if exc.verify_code in _NAME_MISMATCH:
        return (
            f"TLS to {where} failed: the broker's certificate is not issued for that host "
            "(certificate verify failed): connect by a name the certificate lists"
        )
    if exc.verify_code == _EXPIRED:
        return f"TLS to {where} failed: the broker's certificate has expired"
    signer = f"{_VAR}SSL_CAFILE" if connection.ssl_cafile else "a CA this machine trusts"
    hint = "" if connection.ssl_cafile else f": set {_VAR}SSL_CAFILE to the broker's CA"
    return (
        f"TLS to {where} failed: the broker's certificate is not signed by {signer} "
        f"(certificate verify failed){hint}"
    )


def _problem(exc: BaseException, connection: KafkaConnection, where: str, timeout: float) -> str:
    protocol = connection.security_protocol
    listener = f"check {_VAR}SECURITY_PROTOCOL ({protocol}) against the broker's listener"
    if isinstance(exc, ssl.SSLError):
        return _tls_problem(exc, connection, where)
    if isinstance(exc, kafka_errors.SaslAuthenticationFailed):
        return (
            f"the broker at {where} rejected the SASL credentials of user "
            f"{connection.sasl_username} ({connection.sasl_mechanism}): check "
            f"{_VAR}SASL_USERNAME / __SASL_PASSWORD"
        )
    if isinstance(exc, kafka_errors.UnsupportedSaslMechanismError):
        return (
            f"the broker at {where} does not accept SASL mechanism "
            f"{connection.sasl_mechanism}: check {_VAR}SASL_MECHANISM"
        )
    if isinstance(exc, kafka_errors.IllegalSaslStateError):
        return f"the broker at {where} does not expect SASL there: {listener}"
    if isinstance(exc, TimeoutError):
        return f"the broker at {where} did not finish the handshake in {timeout:g} s: {listener}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot connect to the broker at {where} ({exc.strerror.lower()})"
    return f"the broker at {where} closed the connection during the handshake: {listener}"


async def handshake_problem(connection: KafkaConnection, limit: float = 10.0) -> str | None:
    """Return why no bootstrap server accepts our handshake in ``limit`` s (None if one does)."""
    problems = []
    for host, port in connection.hosts:
        try:
            await _handshake(connection, host, port, limit)
            return None
        except (OSError, kafka_errors.KafkaError, EOFError) as exc:
            where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            problems.append(_problem(exc, connection, where, limit))
    return problems[0] if problems else None


def check_handshake(connection: KafkaConnection, timeout: float = 10.0) -> None:
    """Raise UserError naming the cause unless a broker accepts our TLS and SASL handshake."""
    problem = asyncio.run(handshake_problem(connection, timeout))
    if problem:
        raise UserError(problem)
