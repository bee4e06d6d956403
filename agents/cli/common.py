"""What the ``learnstream`` commands share: settings, the broker connection, time options."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click
from pydantic import ValidationError
from pydantic_settings import SettingsError

from learnstream.streams.config.settings import Settings
from learnstream.streams.config.usererrors import UserError, settings_problem
from learnstream.streams.io.preflight import check_broker

if TYPE_CHECKING:
    from learnstream.streams.io.connection import KafkaConnection

__all__ = ["When", "broker_variable", "connection_of_settings", "settings_or_fail"]


def settings_or_fail() -> Settings:
    """Return the settings, or a one-line error naming what is wrong."""
    try:
        return Settings()
    except (ValidationError, SettingsError) as exc:
        raise UserError(settings_problem(exc)) from exc


def broker_variable(settings: Settings) -> str:
    """Return the variable the broker's address came from."""
    return "LEARNSTREAM_BROKER_URL" if settings.broker_url else "LEARNSTREAM_BROKER__URL"


def connection_of_settings(settings: Settings) -> KafkaConnection:
    """Return the connection to the configured broker, checked to accept our TLS and SASL.

    The one place the commands get their broker from: an unreachable broker, a refused
    password or an untrusted certificate is one line here, before any client retries.
    """
    from learnstream.streams.io.broker_check import check_handshake
    from learnstream.streams.io.connection import KafkaConnection

    if not settings.kafka_url:
        raise UserError(
            "no broker configured: set LEARNSTREAM_BROKER_URL=kafka://host:9092 "
            "(the embedded broker lives only inside `learnstream worker` / `learnstream demo`)"
        )
    check_broker(settings.kafka_url, broker_variable(settings))
    connection = KafkaConnection.of(settings.broker, settings.kafka_url)
    check_handshake(connection)
    return connection


class When(click.ParamType):
    """An ISO-8601 date-time; without a zone it is UTC."""

    name = "ISO"

    def convert(self, value: Any, param: click.Parameter | None, ctx: Any) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail("must be an ISO-8601 date-time, e.g. 2026-11-24T08:00:00Z", param, ctx)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
