"""How every Kafka client of learnstream connects: bootstrap servers, TLS and SASL.

Built once from ``LEARNSTREAM_BROKER__*`` (:meth:`KafkaConnection.of`). Faust's app, the
admin client, the readers, the producers and the CLI all take their options from here, so
a broker that wants SASL_SSL is spoken to the same way by each of them.
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from aiokafka.helpers import create_ssl_context
from pydantic import SecretStr

from learnstream.streams.config.settings import BrokerSettings, SaslMechanism, SecurityProtocol
from learnstream.streams.config.usererrors import UserError

if TYPE_CHECKING:
    import faust
    from faust.types.auth import CredentialsT

__all__ = ["Broker", "KafkaConnection", "app_connection", "bootstrap_of", "connection_of"]

_VAR = "LEARNSTREAM_BROKER__"
# create_ssl_context logs "Loading SSL CA from ..." at INFO for every client Faust opens, and
# before a refused handshake's one-line error: the path is in `learnstream config` already.
logging.getLogger("aiokafka.helpers").setLevel(logging.WARNING)


def bootstrap_of(url: str) -> str:
    """Return ``host:port[,..]`` from a ``kafka://`` URL (or a bare bootstrap string)."""
    parts = url.replace(";", ",").split(",")
    return ",".join(part.strip().removeprefix("kafka://").rstrip("/") for part in parts)


@dataclass(frozen=True)
class KafkaConnection:
    """Where the brokers are and how to authenticate to them; ``repr`` hides the secrets."""

    bootstrap: str
    security_protocol: SecurityProtocol = "PLAINTEXT"
    sasl_mechanism: SaslMechanism | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = field(default=None, repr=False)
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_key_password: SecretStr | None = field(default=None, repr=False)

    @classmethod
    def of(cls, broker: BrokerSettings, url: str) -> KafkaConnection:
        """Return the connection to ``url`` (kafka://… or host:port) with ``broker``'s security."""
        return cls(
            bootstrap_of(url),
            broker.security_protocol,
            broker.sasl_mechanism,
            broker.sasl_username,
            broker.sasl_password,
            broker.ssl_cafile,
            broker.ssl_certfile,
            broker.ssl_keyfile,
            broker.ssl_key_password,
        )

    @property
    def tls(self) -> bool:
        """Tell whether the connection is encrypted (SSL or SASL_SSL)."""
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        """Tell whether the connection authenticates with SASL."""
        return self.security_protocol.startswith("SASL_")

    @property
    def hosts(self) -> list[tuple[str, int]]:
        """Return (host, port) of each bootstrap server (port 9092 when none is given)."""
        found = []
        for item in self.bootstrap.split(","):
            host, _, port = item.strip().rpartition(":")
            if not host or host.endswith(":"):  # no port, or a bare IPv6 address
                host, port = item.strip(), "9092"
            found.append((host.strip("[]"), int(port)))
        return found

    def ssl_context(self) -> ssl.SSLContext | None:
        """Return the TLS context (None without TLS); UserError if a PEM file does not load."""
        if not self.tls:
            return None
        try:
            context: ssl.SSLContext = create_ssl_context(cafile=self.ssl_cafile)
        except (ssl.SSLError, OSError) as exc:
            raise UserError(f"{_VAR}SSL_CAFILE holds no PEM CA certificate ({_why(exc)})") from exc
        if self.ssl_certfile:
            # "" rather than None: OpenSSL would ask a terminal for the key's password.
            password = self.ssl_key_password.get_secret_value() if self.ssl_key_password else ""
            try:
                context.load_cert_chain(self.ssl_certfile, self.ssl_keyfile, password)
            except (ssl.SSLError, OSError) as exc:
                raise UserError(
                    f"cannot load the client certificate ({_why(exc)}): check {_VAR}SSL_CERTFILE, "
                    f"{_VAR}SSL_KEYFILE (the key of that certificate) and {_VAR}SSL_KEY_PASSWORD"
                ) from exc
        return context

    def auth_options(self) -> dict[str, Any]:
        """Return aiokafka's security keyword arguments (everything but bootstrap_servers)."""
        options: dict[str, Any] = {"security_protocol": self.security_protocol}
        if self.tls:
            options["ssl_context"] = self.ssl_context()
        if self.sasl:
            options["sasl_mechanism"] = self.sasl_mechanism
            options["sasl_plain_username"] = self.sasl_username
            options["sasl_plain_password"] = _plain(self.sasl_password)
        return options

    def client_options(self) -> dict[str, Any]:
        """Return the keyword arguments every aiokafka client takes: servers and security."""
        return {"bootstrap_servers": self.bootstrap, **self.auth_options()}

    def faust_credentials(self) -> CredentialsT | None:
        """Return Faust's ``broker_credentials`` (None in plaintext)."""
        import faust

        context = self.ssl_context()
        if self.sasl:
            return faust.SASLCredentials(
                username=self.sasl_username,
                password=_plain(self.sasl_password),
                ssl_context=context,  # SASL_SSL with a context, SASL_PLAINTEXT without
                mechanism=self.sasl_mechanism,
            )
        return faust.SSLCredentials(context) if context is not None else None


Broker: TypeAlias = "str | KafkaConnection"


def _plain(secret: SecretStr | None) -> str | None:
    return None if secret is None else secret.get_secret_value()


def _why(exc: Exception) -> str:
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None)
    return str(reason or type(exc).__name__).lower().replace("_", " ")


def connection_of(broker: Broker) -> KafkaConnection:
    """Return ``broker`` as a connection: a bare bootstrap string connects in plaintext."""
    return broker if isinstance(broker, KafkaConnection) else KafkaConnection(bootstrap_of(broker))


def app_connection(app: faust.App, broker: BrokerSettings) -> KafkaConnection:
    """Return the connection to a Faust app's brokers, for clients the agents open themselves."""
    servers = ",".join(f"{url.host}:{url.port or 9092}" for url in app.conf.broker)
    return KafkaConnection.of(broker, servers)
