"""Sessions of agents, CSRF protection and security headers of the web app."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any

from quart import current_app, g, redirect, request, session, url_for
from quart_auth import AuthUser as QuartAuthUser
from quart_auth import current_user, login_user
from wtforms import Form
from wtforms.csrf.session import SessionCSRF

from app.db import select_models
from app.models import User

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_HEADER = "X-CSRF-Token"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class CSRFForm(Form):
    """Base of every form of the web app: it carries and checks the session's CSRF token."""

    class Meta:
        csrf = True
        csrf_class = SessionCSRF
        csrf_time_limit = None  # inbox pages stay open all day

        @property
        def csrf_secret(self) -> bytes:
            return current_app.config["EARFUL"].secret_key.encode()

        @property
        def csrf_context(self) -> Any:
            return session


def csrf_token() -> str:
    """The CSRF token of the current session, for forms and htmx headers."""
    return CSRFForm().csrf_token.current_token


async def check_csrf() -> bool:
    """Tell whether an unsafe request carries a valid CSRF token (header or form field)."""
    token = request.headers.get(CSRF_HEADER) or (await request.form).get("csrf_token", "")
    if not token:
        return False
    checker = CSRFForm()
    checker.csrf_token.data = token
    return checker.validate()


def sign_in_session(user: User, remember: bool) -> None:
    """Start an agent session bound to the user's current session version."""
    login_user(QuartAuthUser(f"{user.id}:{user.session_version}"), remember=remember)


async def load_agent() -> User | None:
    """The signed-in agent, if the session is still valid (it dies with a sign-out anywhere)."""
    if "agent" in g:
        return g.agent
    auth_id = current_user.auth_id or ""
    user_id, _, version = auth_id.partition(":")
    agent = None
    if user_id.isdigit() and version.isdigit():
        found = await select_models(
            User, "u", "WHERE u.id = {} AND u.session_version = {}", [int(user_id), int(version)]
        )
        agent = found[0] if found else None
    g.agent = agent
    return agent


Handler = Callable[..., Awaitable[Any]]


def agent_required(handler: Handler) -> Handler:
    """Let only signed-in agents in; others go to the sign-in page and come back after."""

    @wraps(handler)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        if await load_agent() is None:
            target = request.full_path if request.method == "GET" else None
            return redirect(
                url_for("views.auth.sign_in", next=target) if target else url_for("views.auth.sign_in")
            )
        return await handler(*args, **kwargs)

    return guarded


def current_agent() -> User:
    """The agent of a request that passed :func:`agent_required`."""
    return g.agent
