"""Guard the worker's web server: bearer token on writes (and reads, if asked), body limit.

One aiohttp middleware, handed to Faust's ``web_application_options`` by
:func:`web_application_options`, so it runs before every route, Faust's own included.
A request that changes state (any method but GET/HEAD) needs ``Authorization: Bearer
<token>`` when a token is set; reads need it only with ``protect_reads``. A refusal is
401 with no detail; a declared body over ``max_body_bytes`` is 413 before it is read
(aiohttp's ``client_max_size`` catches the undeclared ones on read).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from learnstream.streams.config.settings import WebSettings

__all__ = [
    "READ_METHODS",
    "allowed",
    "exposed_writes_problem",
    "guard",
    "is_loopback",
    "token_matches",
    "web_application_options",
]

#: Methods that read; every other one may change state.
READ_METHODS = frozenset({"GET", "HEAD"})
_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def token_matches(authorization: str | None, token: str) -> bool:
    """Return True when ``authorization`` is ``Bearer <token>`` (constant-time compare)."""
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


def allowed(method: str, authorization: str | None, settings: WebSettings) -> bool:
    """Return True when a request with this method and header may go through."""
    if settings.token is None:
        return True  # no token: loopback only (the worker's pre-flight checks)
    if method.upper() in READ_METHODS and not settings.protect_reads:
        return True
    return token_matches(authorization, settings.token.get_secret_value())


def is_loopback(host: str) -> bool:
    """Return True when ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name may resolve to any address: treat it as exposed


def exposed_writes_problem(host: str, settings: WebSettings) -> str | None:
    """Return the one-line refusal when the write endpoints would be open to the network."""
    if settings.token is not None or is_loopback(host):
        return None
    return (
        f"LEARNSTREAM_WEB_HOST={host} exposes the /learn/* write endpoints: "
        "set LEARNSTREAM_WEB__TOKEN (or bind 127.0.0.1)"
    )


def guard(settings: WebSettings) -> Callable[[web.Request, _Handler], Awaitable[Any]]:
    """Return the middleware enforcing ``settings`` on every request."""

    @web.middleware
    async def middleware(request: web.Request, handler: _Handler) -> web.StreamResponse:
        if not allowed(request.method, request.headers.get("Authorization"), settings):
            return web.json_response(
                {"error": "unauthorized"}, status=401, headers={"WWW-Authenticate": "Bearer"}
            )
        if (request.content_length or 0) > settings.max_body_bytes:
            return web.json_response(
                {"error": f"the body exceeds {settings.max_body_bytes} bytes"}, status=413
            )
        return await handler(request)

    return middleware


def web_application_options(settings: WebSettings) -> dict[str, Any]:
    """Return Faust's ``web_application_options``: the guard and the body limit."""
    return {"middlewares": [guard(settings)], "client_max_size": settings.max_body_bytes}
