"""What the ``learnstream`` commands share: settings, the broker's address, time options."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click
from pydantic import ValidationError
from pydantic_settings import SettingsError

from streams.settings import Settings
from streams.usererrors import UserError, check_broker, settings_problem

__all__ = ["When", "bootstrap_of_settings", "broker_variable", "settings_or_fail"]


def settings_or_fail() -> Settings:
    """Return the settings, or a one-line error naming what is wrong."""
    try:
        return Settings()
    except (ValidationError, SettingsError) as exc:
        raise UserError(settings_problem(exc)) from exc


def broker_variable(settings: Settings) -> str:
    """Return the variable the broker's address came from."""
    return "LEARNSTREAM_BROKER_URL" if settings.broker_url else "LEARNSTREAM_BROKER__URL"


def bootstrap_of_settings(settings: Settings) -> str:
    """Return host:port of the configured broker, checked to be reachable."""
    from streams.admin import bootstrap_of

    if not settings.kafka_url:
        raise UserError(
            "no broker configured: set LEARNSTREAM_BROKER_URL=kafka://host:9092 "
            "(the embedded broker lives only inside `learnstream worker` / `learnstream demo`)"
        )
    check_broker(settings.kafka_url, broker_variable(settings))
    return bootstrap_of(settings.kafka_url)


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
