"""How long a web app session lasts: the idle limit, "keep me signed in" and the 14-day limit.

The clock of the sessions (``app.views.security.clock``) is moved forward instead of sleeping.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Callable

import pytest
from quart import Quart, request

from app import create_app
from app.views import security
from tests.factories import PASSWORD, csrf_of, make_user, sign_in

HOUR = 3600.0


@pytest.fixture
def advance(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Move the sessions' clock forward by a number of seconds."""
    offset = [0.0]
    monkeypatch.setattr(security, "clock", lambda: time.time() + offset[0])

    def forward(seconds: float) -> None:
        offset[0] += seconds

    return forward


def _cookie(client, name: str) -> str | None:
    return next((cookie.value for cookie in client.cookie_jar if cookie.name == name), None)


def _signed_out(response) -> bool:
    return response.status_code == 302 and response.headers["Location"].startswith("/app/login")


async def _sign_in_remembered(client, user) -> None:
    token = await csrf_of(client)
    response = await client.post(
        "/app/login", form={"email": user.email, "password": PASSWORD, "csrf_token": token, "remember": "y"}
    )
    assert response.status_code == 302


async def test_a_session_idle_for_longer_than_the_limit_is_signed_out(client, agent, advance):
    await sign_in(client, agent)

    advance(12 * HOUR + 60)
    response = await client.get("/app/account")

    assert _signed_out(response)
    assert response.headers["Location"] == "/app/login?next=/app/account?"
    assert _cookie(client, "QUART_AUTH") is None
    assert _signed_out(await client.get("/app/account"))


async def test_activity_keeps_a_session_alive(client, agent, advance):
    await sign_in(client, agent)

    advance(11 * HOUR)
    first = await client.get("/app/account")
    advance(11 * HOUR)
    second = await client.get("/app/account")

    assert (first.status_code, second.status_code) == (200, 200)


async def test_activity_is_written_to_the_cookie_at_most_once_a_minute(client, agent, advance):
    await sign_in(client, agent)

    advance(30)
    soon = await client.get("/app/account")
    advance(60)
    later = await client.get("/app/account")

    assert "session=" not in soon.headers.get("Set-Cookie", "")
    assert "session=" in later.headers.get("Set-Cookie", "")


@pytest.fixture
async def short_idle_app(settings) -> AsyncIterator[Quart]:
    application = create_app(dataclasses.replace(settings, session_idle_minutes=30), manage_db=False)
    async with application.test_app():
        yield application


async def test_the_idle_limit_is_a_setting(short_idle_app, agent, advance):
    client = short_idle_app.test_client()
    await sign_in(client, agent)

    advance(29 * 60)
    still_in = await client.get("/app/account")
    advance(31 * 60)
    idle = await client.get("/app/account")

    assert still_in.status_code == 200
    assert _signed_out(idle)


async def test_a_remembered_session_outlasts_the_idle_limit(client, agent, advance):
    await _sign_in_remembered(client, agent)

    advance(13 * 24 * HOUR)
    response = await client.get("/app/account")

    assert response.status_code == 200


async def test_a_remembered_session_ends_fourteen_days_after_sign_in(client, agent, advance):
    await _sign_in_remembered(client, agent)

    for _ in range(15):
        advance(23 * HOUR)
        await client.get("/app/account")
    response = await client.get("/app/account")

    assert _signed_out(response)


async def test_an_idle_sign_in_cookie_is_not_revived_by_another_session_cookie(app, agent, advance):
    """The activity lives in the session cookie; a fresh one taken from another sign-in (even the
    attacker's own account) must not make a stolen, idle sign-in cookie usable again."""
    victim = app.test_client()
    await sign_in(victim, agent)
    stolen = _cookie(victim, "QUART_AUTH")
    advance(13 * HOUR)
    attacker = app.test_client()
    await sign_in(attacker, await make_user(email="mallory@example.com"))
    fresh_session = _cookie(attacker, "session")

    replay = app.test_client()
    response = await replay.get(
        "/app/account", headers={"Cookie": f"QUART_AUTH={stolen}; session={fresh_session}"}
    )

    assert _signed_out(response)


async def test_an_htmx_request_of_an_idle_session_sends_the_whole_page_to_sign_in(client, agent, advance):
    """htmx would swap the sign-in page into a fragment; it is told to load it instead."""
    token = await sign_in(client, agent)

    advance(12 * HOUR + 60)
    response = await client.post(
        "/app/account/tokens",
        form={"csrf_token": token, "name": "ci", "scopes": "read"},
        headers={"HX-Request": "true", "HX-Current-URL": "http://earful.test/app/account?tab=1"},
    )

    assert response.status_code == 204
    assert response.headers["HX-Redirect"] == "/app/login?next=/app/account?tab%3D1"
    assert _cookie(client, "QUART_AUTH") is None


async def _opened_session(app: Quart, cookie: str) -> dict:
    async with app.test_request_context("/app/login", headers={"Cookie": f"session={cookie}"}):
        opened = await app.session_interface.open_session(app, request)
    assert opened is not None
    return dict(opened)


async def _session_cookie(app: Quart, data: dict) -> str:
    signer = app.session_interface.get_signing_serializer(app)
    assert signer is not None
    return signer.dumps(data)


async def test_a_session_cookie_signed_with_a_replaced_secret_key_is_refused(app):
    """The session's signer is made once per set of keys (app.views.security.SessionCookies):
    a new secret key must take effect at once."""
    cookie = await _session_cookie(app, {"agent": "1"})
    assert await _opened_session(app, cookie) == {"agent": "1"}

    app.secret_key = "a rotated secret key, nothing like the first one"

    assert await _opened_session(app, cookie) == {}


async def test_a_session_cookie_signed_with_a_fallback_key_is_still_read(app):
    cookie = await _session_cookie(app, {"agent": "1"})
    app.config["SECRET_KEY_FALLBACKS"] = [app.secret_key]
    app.secret_key = "a rotated secret key, nothing like the first one"

    assert await _opened_session(app, cookie) == {"agent": "1"}
