"""Bearer-token authentication and scopes of the management API (cookies are never read)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any

from quart import Response, g, request

from app.api.common import path_id, text_response
from app.repositories.accounts import UserRow
from app.services.tokens import authenticate_token

Handler = Callable[..., Awaitable[Response]]


def unauthenticated() -> Response:
    return text_response("Unauthenticated", 401, {"WWW-Authenticate": "Bearer"})


def require_scope(scope: str) -> Callable[[Handler], Handler]:
    """Let the handler run only for a live token that carries ``scope``."""

    def decorate(handler: Handler) -> Handler:
        @wraps(handler)
        async def checked(*args: Any, **kwargs: Any) -> Response:
            header = request.headers.get("Authorization", "")
            kind, _, raw = header.partition(" ")
            if kind.lower() != "bearer" or not raw.strip():
                return unauthenticated()
            token = await authenticate_token(raw.strip(), _application_in_path())
            if token is None:
                return unauthenticated()
            if scope not in token.scope_set:
                return text_response("Insufficient scope", 403)
            g.user = token.user
            return await handler(*args, **kwargs)

        return checked

    return decorate


def _application_in_path() -> int | None:
    """The id of the application the request's path names, if it names one: the token's
    statement reads it too (app.services.tokens.authenticate_token)."""
    value = (request.view_args or {}).get("application_id")
    return path_id(value) if isinstance(value, str) else None


def current_user() -> UserRow:
    """The user of the authenticated request."""
    user: UserRow = g.user
    return user
