"""Resetting a forgotten password with a link sent by e-mail (only when EARFUL_SMTP_URL is set)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections.abc import AsyncIterator

import pytest
from quart import Quart

from app import create_app
from app.models import User
from app.services.passwords import reset_token
from app.services.security import verify_password
from tests.conftest import BASE_URL
from tests.factories import PASSWORD, csrf_of, make_user, sign_in

NEW_PASSWORD = "a brand new passphrase"
LINK = re.compile(re.escape(BASE_URL) + r"(/app/password/reset/\S+)")
SENT = "If an account exists for that address, we sent it a link"


@pytest.fixture
async def mail_app(settings, relay) -> AsyncIterator[Quart]:
    """The web app, sending e-mail through the loopback relay."""
    application = create_app(
        dataclasses.replace(
            settings, smtp_url=f"smtp://127.0.0.1:{relay.port}", mail_from="Earful <noreply@earful.test>"
        ),
        manage_db=False,
    )
    async with application.test_app():
        yield application


@pytest.fixture
def mail_client(mail_app):
    return mail_app.test_client()


async def _ask(client, email: str):
    return await client.post(
        "/app/password/forgot",
        form={"email": email, "csrf_token": await csrf_of(client)},
    )


async def _reset(client, path: str, new: str = NEW_PASSWORD, confirm: str | None = None):
    return await client.post(
        path,
        form={
            "new_password": new,
            "confirm_password": new if confirm is None else confirm,
            "csrf_token": await csrf_of(client, "/app/login"),
        },
    )


async def _mailed_link(client, relay, email: str) -> str:
    """Ask for a link and return its path, read from the e-mail the relay received."""
    count = len(relay.envelopes)
    await _ask(client, email)
    async with asyncio.timeout(10):
        messages = await relay.wait_for(count + 1)
    match = LINK.search(messages[-1].get_content())
    assert match, messages[-1].get_content()
    return match.group(1)


def _signed_out(response) -> bool:
    return response.status_code == 302 and response.headers["Location"].startswith("/app/login")


def _without_tokens(body: str) -> str:
    return re.sub(r"[0-9a-f]*##[0-9a-f]+", "", body)


# Without e-mail --------------------------------------------------------------------------------


async def test_without_e_mail_there_is_no_reset(client, agent):
    login = await (await client.get("/app/login")).get_data(as_text=True)
    token = reset_token(agent, "test-secret-key")

    assert "Forgot your password?" not in login
    assert (await client.get("/app/password/forgot")).status_code == 404
    assert (await _ask(client, agent.email)).status_code == 404
    assert (await client.get(f"/app/password/reset/{token}")).status_code == 404


# Asking for a link ----------------------------------------------------------------------------


async def test_the_sign_in_page_offers_the_reset(mail_client):
    body = await (await mail_client.get("/app/login")).get_data(as_text=True)

    assert "Forgot your password?" in body
    assert 'href="/app/password/forgot"' in body


async def test_the_answer_is_the_same_whether_the_address_has_an_account_or_not(mail_app, agent, relay):
    answers = []
    for email in (agent.email, "nobody@example.com"):
        client = mail_app.test_client()
        response = await _ask(client, email)
        page = await client.get(response.headers["Location"])
        answers.append(
            (
                response.status_code,
                response.headers["Location"],
                _without_tokens(await page.get_data(as_text=True)),
            )
        )

    assert answers[0] == answers[1]
    assert answers[0][0] == 303
    assert SENT in answers[0][2]
    async with asyncio.timeout(10):
        await asyncio.gather(*mail_app.background_tasks)
    assert [envelope.rcpt_tos for envelope in relay.envelopes] == [[agent.email]]


async def test_the_answer_does_not_wait_for_the_relay(mail_client, agent, relay):
    relay.open.clear()  # the relay holds the message

    async with asyncio.timeout(5):
        response = await _ask(mail_client, agent.email)

    assert response.status_code == 303
    assert relay.envelopes == []
    relay.open.set()
    async with asyncio.timeout(10):
        await relay.wait_for(1)


async def test_the_e_mail_goes_to_the_bare_address_with_a_fixed_subject(mail_client, relay):
    user = await make_user(email="ann@example.com", name="Ann\r\nBcc: victim@example.org")

    await _mailed_link(mail_client, relay, user.email)

    [message] = relay.messages
    assert message["To"] == "ann@example.com"
    assert message["From"] == "Earful <noreply@earful.test>"
    assert message["Subject"] == "Reset your Earful password"
    assert "Bcc" not in message and "Ann" not in str(message)
    assert relay.envelopes[0].rcpt_tos == ["ann@example.com"]


# Using the link ---------------------------------------------------------------------------------


async def test_the_link_sets_a_new_password_and_signs_in(mail_app, mail_client, agent, relay):
    path = await _mailed_link(mail_client, relay, agent.email)
    page = await mail_client.get(path)
    assert page.status_code == 200
    assert 'name="new_password"' in await page.get_data(as_text=True)

    response = await _reset(mail_client, path)

    assert response.status_code == 303
    assert (await mail_client.get("/app/account")).status_code == 200
    stored = await User.get(id=agent.id)
    assert verify_password(stored.password_hash, NEW_PASSWORD)
    assert not verify_password(stored.password_hash, PASSWORD)


async def test_a_link_works_once(mail_app, mail_client, agent, relay):
    path = await _mailed_link(mail_client, relay, agent.email)
    await _reset(mail_client, path)

    again = mail_app.test_client()
    page = await again.get(path)
    second = await _reset(again, path, "yet another passphrase")

    assert page.status_code == 400
    assert "expired or was already used" in await page.get_data(as_text=True)
    assert second.status_code == 400
    assert verify_password((await User.get(id=agent.id)).password_hash, NEW_PASSWORD)


async def test_a_link_older_than_an_hour_is_refused(mail_client, agent):
    path = f"/app/password/reset/{reset_token(agent, 'test-secret-key', int(time.time()) - 3601)}"

    page = await mail_client.get(path)
    response = await _reset(mail_client, path)

    assert page.status_code == 400
    assert "expired or was already used" in await page.get_data(as_text=True)
    assert response.status_code == 400
    assert verify_password((await User.get(id=agent.id)).password_hash, PASSWORD)


async def test_a_forged_link_is_refused(mail_client, agent):
    token = reset_token(agent, "not the secret key")

    response = await _reset(mail_client, f"/app/password/reset/{token}")

    assert response.status_code == 400
    assert verify_password((await User.get(id=agent.id)).password_hash, PASSWORD)


async def test_resetting_ends_every_other_session_of_that_user_only(mail_app, mail_client, agent, relay):
    other_device = mail_app.test_client()
    await sign_in(other_device, agent)
    colleague = mail_app.test_client()
    await sign_in(colleague, await make_user(email="bob@example.com"))
    path = await _mailed_link(mail_client, relay, agent.email)

    await _reset(mail_client, path)

    assert _signed_out(await other_device.get("/app/account"))
    assert (await colleague.get("/app/account")).status_code == 200


async def test_new_passwords_that_differ_change_nothing_and_keep_the_link(mail_client, agent, relay):
    path = await _mailed_link(mail_client, relay, agent.email)

    response = await _reset(mail_client, path, confirm="a different passphrase")

    assert response.status_code == 422
    assert "The two new passwords differ." in await response.get_data(as_text=True)
    assert verify_password((await User.get(id=agent.id)).password_hash, PASSWORD)
    assert (await mail_client.get(path)).status_code == 200


async def test_a_short_new_password_is_refused_on_the_reset_page(mail_client, agent, relay):
    path = await _mailed_link(mail_client, relay, agent.email)

    response = await _reset(mail_client, path, new="short")

    assert response.status_code == 400
    assert "at least 8 characters" in await response.get_data(as_text=True)
