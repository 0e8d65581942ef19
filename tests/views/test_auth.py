"""Signing in and out of the web app."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator

import pytest
from quart import Quart, session

from app import create_app
from app.models import SignInThrottle
from app.proxies import parse_networks
from app.views import security
from tests.factories import PASSWORD, make_thread, make_user, sign_in


async def _csrf(client, path: str = "/app/login") -> str:
    page = await (await client.get(path)).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


async def _sign_in(client, email: str, password: str = PASSWORD, **extra):
    token = await _csrf(client)
    return await client.post(
        "/app/login" + extra.pop("query", ""),
        form={"email": email, "password": password, "csrf_token": token},
    )


async def test_sign_in_page_renders_a_form_with_a_csrf_token(client):
    response = await client.get("/app/login")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await response.get_data(as_text=True)
    assert 'name="csrf_token"' in body
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


async def test_sign_in_with_the_right_password_starts_a_session(client):
    user = await make_user(email="ann@example.com")

    response = await _sign_in(client, user.email)

    assert response.status_code == 302
    cookie = response.headers.get("Set-Cookie", "")
    assert "QUART_AUTH=" in cookie
    assert "HttpOnly" in cookie


def _cookie(client, name: str) -> str | None:
    return next((cookie.value for cookie in client.cookie_jar if cookie.name == name), None)


async def test_sign_in_replaces_the_anonymous_session(client):
    user = await make_user(email="ann@example.com")
    token_before = await _csrf(client)
    session_before = _cookie(client, "session")

    response = await client.post(
        "/app/login", form={"email": user.email, "password": PASSWORD, "csrf_token": token_before}
    )

    assert response.status_code == 302
    assert _cookie(client, "session") not in (None, session_before)
    stale = await client.post("/app/logout", form={"csrf_token": token_before})
    assert stale.status_code == 400
    assert (await client.get("/app/account")).status_code == 200


async def test_every_form_of_a_page_carries_the_sessions_one_token(client, agent, application):
    thread = await make_thread(application)
    token = await sign_in(client, agent)

    response = await client.get(f"/app/applications/{application.id}/feedback/{thread.id}")

    page = await response.get_data(as_text=True)
    assert len(re.findall(r'name="csrf_token"', page)) > 3
    assert set(re.findall(r'name="csrf_token" value="([^"]+)"', page)) == {token}


async def test_a_token_made_before_the_session_changed_is_not_handed_out_again(app):
    async with app.test_request_context("/app/login"):
        before = security.csrf_token()
        session.clear()  # as signing in does: a new session, a new CSRF secret

        after = security.csrf_token()

        assert after != before
        assert after == security.CSRFForm().csrf_token.current_token  # type: ignore[attr-defined]


async def test_the_token_made_without_a_form_is_one_a_form_accepts(app):
    async with app.test_request_context("/app/login"):
        token = security.csrf_token()
        form = security.CSRFForm()

        form.csrf_token.data = token  # type: ignore[attr-defined]
        accepted = form.validate()
        form.csrf_token.data = token[:-1] + ("1" if token.endswith("0") else "0")  # type: ignore[attr-defined]

        assert accepted and not form.validate()


async def test_sign_in_with_a_wrong_password_is_refused(client):
    user = await make_user(email="ann@example.com")

    response = await _sign_in(client, user.email, "wrong password")

    assert response.status_code == 400
    assert "Wrong e-mail address or password." in await response.get_data(as_text=True)


async def test_sign_in_without_csrf_token_is_refused(client):
    user = await make_user(email="ann@example.com")

    response = await client.post("/app/login", form={"email": user.email, "password": PASSWORD})

    assert response.status_code == 400


async def test_sign_in_is_rate_limited_per_account_and_address(client):
    user = await make_user(email="ann@example.com")
    for _ in range(5):
        await _sign_in(client, user.email, "wrong password")

    response = await _sign_in(client, user.email)

    assert response.status_code == 429
    assert response.headers["Retry-After"] == "900"
    assert "Too many failed sign-ins" in await response.get_data(as_text=True)


async def test_throttles_are_stored_without_the_address_or_email(client):
    await _sign_in(client, "ann@example.com", "wrong password")

    keys = await SignInThrottle.all().values_list("key", flat=True)

    assert keys and all("ann@example.com" not in key and "127.0.0.1" not in key for key in keys)


@pytest.fixture
async def behind_proxy(settings) -> AsyncIterator[Quart]:
    """The web app behind a reverse proxy on loopback that it trusts."""
    application = create_app(
        dataclasses.replace(settings, trusted_proxies=parse_networks("127.0.0.1, ::1")), manage_db=False
    )
    async with application.test_app():
        yield application


async def _sign_in_from(client, email: str, password: str, client_address: str):
    token = await _csrf(client)
    return await client.post(
        "/app/login",
        form={"email": email, "password": password, "csrf_token": token},
        headers={"X-Forwarded-For": f"{client_address}, 127.0.0.1"},
        scope_base={"client": ("127.0.0.1", 44321)},
    )


async def test_behind_a_trusted_proxy_each_client_has_its_own_throttle(behind_proxy):
    user = await make_user(email="ann@example.com")
    guesser, owner = behind_proxy.test_client(), behind_proxy.test_client()
    for _ in range(5):
        await _sign_in_from(guesser, user.email, "wrong password", "203.0.113.9")

    refused = await _sign_in_from(guesser, user.email, PASSWORD, "203.0.113.9")
    signed_in = await _sign_in_from(owner, user.email, PASSWORD, "198.51.100.4")

    assert refused.status_code == 429
    assert signed_in.status_code == 302


async def test_forwarded_addresses_from_an_untrusted_peer_are_ignored(client):
    user = await make_user(email="ann@example.com")
    for number in range(5):
        await _sign_in_from(client, user.email, "wrong password", f"203.0.113.{number}")

    response = await _sign_in_from(client, user.email, PASSWORD, "198.51.100.4")

    assert response.status_code == 429


async def test_sign_out_ends_the_session_even_for_replayed_cookies(app, client):
    user = await make_user(email="ann@example.com")
    await _sign_in(client, user.email)
    assert (await client.get("/app/account")).status_code == 200
    cookies = "; ".join(f"{name}={_cookie(client, name)}" for name in ("QUART_AUTH", "session"))

    token = await _csrf(client, "/app/account")
    await client.post("/app/logout", form={"csrf_token": token})
    replay = await app.test_client().get("/app/account", headers={"Cookie": cookies})

    assert replay.status_code == 302
    assert "/app/login" in replay.headers["Location"]


async def test_sign_out_deletes_both_cookies(client):
    user = await make_user(email="ann@example.com")
    await _sign_in(client, user.email)

    await client.post("/app/logout", form={"csrf_token": await _csrf(client, "/app/account")})

    assert _cookie(client, "QUART_AUTH") is None
    assert _cookie(client, "session") is None


async def test_pages_redirect_to_sign_in_and_back(client):
    response = await client.get("/app/account")

    assert response.status_code == 302
    assert response.headers["Location"].startswith("/app/login?next=")


async def test_sign_in_follows_only_local_next_addresses(client):
    user = await make_user(email="ann@example.com")

    response = await _sign_in(client, user.email, query="?next=https://evil.example/steal")

    assert response.headers["Location"] == "/app/"
