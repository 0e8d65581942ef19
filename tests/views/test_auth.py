"""Signing in and out of the web app."""

from __future__ import annotations

import re

from app.models import SignInFailure
from tests.factories import PASSWORD, make_user


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


async def test_sign_in_with_a_wrong_password_is_refused(client):
    user = await make_user(email="ann@example.com")

    response = await _sign_in(client, user.email, "wrong password")

    assert response.status_code == 400
    assert "Wrong e-mail address or password." in await response.get_data(as_text=True)


async def test_sign_in_without_csrf_token_is_refused(client):
    user = await make_user(email="ann@example.com")

    response = await client.post("/app/login", form={"email": user.email, "password": PASSWORD})

    assert response.status_code == 400


async def test_sign_in_is_rate_limited_per_account(client):
    user = await make_user(email="ann@example.com")
    for _ in range(5):
        await _sign_in(client, user.email, "wrong password")

    response = await _sign_in(client, user.email)

    assert response.status_code == 429
    assert "Too many failed sign-ins" in await response.get_data(as_text=True)
    assert await SignInFailure.all().count() == 10


async def test_failures_are_stored_without_the_address_or_email(client):
    await _sign_in(client, "ann@example.com", "wrong password")

    keys = await SignInFailure.all().values_list("key", flat=True)

    assert keys and all("ann@example.com" not in key and "127.0.0.1" not in key for key in keys)


async def test_sign_out_ends_the_session_even_for_a_replayed_cookie(client):
    user = await make_user(email="ann@example.com")
    response = await _sign_in(client, user.email)
    cookie = response.headers["Set-Cookie"].split(";", 1)[0]
    assert (await client.get("/app/account")).status_code == 200

    token = await _csrf(client, "/app/account")
    await client.post("/app/logout", form={"csrf_token": token})
    replay = await client.get("/app/account", headers={"Cookie": cookie})

    assert replay.status_code == 302
    assert "/app/login" in replay.headers["Location"]


async def test_pages_redirect_to_sign_in_and_back(client):
    response = await client.get("/app/account")

    assert response.status_code == 302
    assert response.headers["Location"].startswith("/app/login?next=")


async def test_sign_in_follows_only_local_next_addresses(client):
    user = await make_user(email="ann@example.com")

    response = await _sign_in(client, user.email, query="?next=https://evil.example/steal")

    assert response.headers["Location"] == "/app/"
