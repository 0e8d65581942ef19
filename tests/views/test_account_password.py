"""Changing the password on the account page."""

from __future__ import annotations

from app.models import User
from app.services.security import verify_password
from tests.factories import PASSWORD, csrf_of, make_user, sign_in

NEW_PASSWORD = "a brand new passphrase"
HTMX = {"HX-Request": "true"}


async def _change(client, current=PASSWORD, new=NEW_PASSWORD, confirm=None, headers=None):
    return await client.post(
        "/app/account/password",
        form={
            "csrf_token": await csrf_of(client, "/app/account"),
            "current_password": current,
            "new_password": new,
            "confirm_password": new if confirm is None else confirm,
        },
        headers=headers or {},
    )


def _signed_out(response) -> bool:
    return response.status_code == 302 and response.headers["Location"].startswith("/app/login")


async def _can_sign_in(app, email: str, password: str) -> bool:
    client = app.test_client()
    response = await client.post(
        "/app/login", form={"email": email, "password": password, "csrf_token": await csrf_of(client)}
    )
    return response.status_code == 302


async def test_the_account_page_has_a_password_form(client, agent):
    await sign_in(client, agent)

    body = await (await client.get("/app/account")).get_data(as_text=True)

    assert 'action="/app/account/password"' in body
    assert 'name="current_password"' in body and 'autocomplete="current-password"' in body
    assert body.count('autocomplete="new-password"') == 2
    assert 'minlength="8"' in body


async def test_changing_the_password_keeps_this_session_and_ends_the_others(app, client, agent):
    other_device = app.test_client()
    await sign_in(other_device, agent)
    colleague = app.test_client()
    await sign_in(colleague, await make_user(email="bob@example.com"))
    await sign_in(client, agent)

    response = await _change(client)

    assert response.status_code == 303
    assert response.headers["Location"] == "/app/account#password"
    page = await client.get("/app/account")
    assert page.status_code == 200
    assert "Your password is changed" in await page.get_data(as_text=True)
    assert _signed_out(await other_device.get("/app/account"))
    assert (await colleague.get("/app/account")).status_code == 200


async def test_the_new_password_signs_in_and_the_old_one_no_longer_does(app, client, agent):
    await sign_in(client, agent)

    await _change(client)

    assert await _can_sign_in(app, agent.email, NEW_PASSWORD)
    assert not await _can_sign_in(app, agent.email, PASSWORD)


async def test_a_wrong_current_password_changes_nothing(app, client, agent):
    other_device = app.test_client()
    await sign_in(other_device, agent)
    await sign_in(client, agent)

    response = await _change(client, current="not my password")

    assert response.status_code == 400
    assert "Your current password is wrong." in await response.get_data(as_text=True)
    stored = await User.get(id=agent.id)
    assert verify_password(stored.password_hash, PASSWORD)
    assert (await other_device.get("/app/account")).status_code == 200


async def test_new_passwords_that_differ_are_refused(client, agent):
    await sign_in(client, agent)

    response = await _change(client, confirm="a different passphrase")

    assert response.status_code == 422
    assert "The two new passwords differ." in await response.get_data(as_text=True)
    assert verify_password((await User.get(id=agent.id)).password_hash, PASSWORD)


async def test_a_new_password_under_the_minimum_is_refused(client, agent):
    await sign_in(client, agent)

    response = await _change(client, new="short")

    assert response.status_code == 400
    assert "at least 8 characters" in await response.get_data(as_text=True)


async def test_with_htmx_the_password_card_is_answered_and_the_page_keeps_working(client, agent):
    token = await sign_in(client, agent)

    response = await _change(client, headers=HTMX)

    assert response.status_code == 200
    body = await response.get_data(as_text=True)
    assert body.lstrip().startswith('<section id="password"')
    assert "Your password is changed" in body
    # The page stays open: its CSRF token (in hx-headers) still works after the change.
    later = await client.post(
        "/app/account/tokens", form={"csrf_token": token, "name": "ci", "scopes": "read"}
    )
    assert later.status_code == 200


async def test_changing_a_password_needs_a_signed_in_agent(client, agent):
    response = await client.post(
        "/app/account/password",
        form={
            "csrf_token": await csrf_of(client),
            "current_password": PASSWORD,
            "new_password": NEW_PASSWORD,
            "confirm_password": NEW_PASSWORD,
        },
    )

    assert _signed_out(response)
    assert verify_password((await User.get(id=agent.id)).password_hash, PASSWORD)
