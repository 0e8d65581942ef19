"""Passwords: changing one, setting one (command line), and resetting one with a link by e-mail."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from datetime import UTC, datetime, timedelta

import pytest

from app.config import Settings
from app.errors import ValidationError
from app.models import PasswordResetRequest, User
from app.repositories.accounts import UserRow
from app.services import passwords, signin
from app.services.security import verify_password
from app.services.signin import TooManyAttempts
from app.services.users import MIN_PASSWORD_LENGTH
from tests.factories import PASSWORD, make_user

NEW_PASSWORD = "a brand new passphrase"
LINK_PREFIX = "http://earful.test/app/password/reset/"


ADDRESS = "198.51.100.20"


async def _reloaded(user: User) -> User:
    return await User.get(id=user.id)


# Changing a password ------------------------------------------------------------------------


async def test_changing_a_password_needs_the_current_one(agent):
    with pytest.raises(ValidationError, match="current password is wrong"):
        await passwords.change_password(agent, "not my password", NEW_PASSWORD, ADDRESS)

    stored = await _reloaded(agent)
    assert verify_password(stored.password_hash, PASSWORD)
    assert stored.session_version == agent.session_version


async def test_guessing_the_current_password_is_throttled_like_a_sign_in(agent):
    for number in range(signin.PAIR.limit):
        with pytest.raises(ValidationError):
            await passwords.change_password(agent, f"guess {number}", NEW_PASSWORD, ADDRESS)

    with pytest.raises(TooManyAttempts):
        await passwords.change_password(agent, PASSWORD, NEW_PASSWORD, ADDRESS)

    assert verify_password((await _reloaded(agent)).password_hash, PASSWORD)


async def test_changing_a_password_stores_the_new_one_and_ends_the_sessions(agent):
    changed = await passwords.change_password(agent, PASSWORD, NEW_PASSWORD, ADDRESS)

    stored = await _reloaded(agent)
    assert verify_password(stored.password_hash, NEW_PASSWORD)
    assert not verify_password(stored.password_hash, PASSWORD)
    assert stored.session_version == agent.session_version + 1
    assert changed.session_version == stored.session_version


async def test_changing_a_password_leaves_other_users_alone(agent):
    other = await make_user(email="bob@example.com")

    await passwords.change_password(agent, PASSWORD, NEW_PASSWORD, ADDRESS)

    assert (await _reloaded(other)).session_version == other.session_version


async def test_a_new_password_shorter_than_the_minimum_is_refused(agent):
    with pytest.raises(ValidationError, match=f"at least {MIN_PASSWORD_LENGTH} characters"):
        await passwords.change_password(agent, PASSWORD, "x" * (MIN_PASSWORD_LENGTH - 1), ADDRESS)

    assert verify_password((await _reloaded(agent)).password_hash, PASSWORD)


async def test_a_new_password_longer_than_sign_in_takes_is_refused(agent):
    with pytest.raises(ValidationError, match="not be greater than 1000 characters"):
        await passwords.set_password(agent, "x" * 1001)


async def test_a_password_changed_meanwhile_makes_the_change_fail(agent):
    """The current password was checked against a hash that another change replaced."""
    stale = await _reloaded(agent)
    await passwords.set_password(agent, "changed elsewhere meanwhile")

    with pytest.raises(ValidationError):
        await passwords.change_password(stale, PASSWORD, NEW_PASSWORD, ADDRESS)

    assert verify_password((await _reloaded(agent)).password_hash, "changed elsewhere meanwhile")


# Setting a password (earful user set-password) ---------------------------------------------


async def test_setting_a_password_replaces_it_and_ends_the_sessions(agent):
    await passwords.set_password(agent, NEW_PASSWORD)

    stored = await _reloaded(agent)
    assert verify_password(stored.password_hash, NEW_PASSWORD)
    assert stored.session_version == agent.session_version + 1


# Reset links ---------------------------------------------------------------------------------


def _token(user: User, secret: str = "test-secret-key", age: float = 0) -> str:
    return passwords.reset_token(user, secret, int(time.time() - age))


async def test_a_reset_token_names_its_user(agent):
    assert (await passwords.user_of_reset_token(_token(agent), "test-secret-key")).id == agent.id


async def test_a_reset_token_older_than_an_hour_is_refused(agent):
    with pytest.raises(ValidationError, match="expired or was already used"):
        await passwords.user_of_reset_token(_token(agent, age=3601), "test-secret-key")


async def test_a_reset_token_signed_with_another_key_is_refused(agent):
    with pytest.raises(ValidationError):
        await passwords.user_of_reset_token(_token(agent, secret="another key"), "test-secret-key")


async def test_a_reset_token_cannot_be_moved_to_another_user(agent):
    other = await make_user(email="bob@example.com")
    rest = _token(agent).split(".", 1)[1]

    with pytest.raises(ValidationError):
        await passwords.user_of_reset_token(f"{other.id}.{rest}", "test-secret-key")


@pytest.mark.parametrize("token", ["", "abc", "1.2", "1.2.zz", "99999999999.1.00", "1." + "9" * 40 + ".00"])
async def test_malformed_reset_tokens_are_refused(agent, token):
    with pytest.raises(ValidationError):
        await passwords.user_of_reset_token(token, "test-secret-key")


async def test_resetting_sets_the_password_and_ends_the_sessions(agent):
    user = await passwords.reset_password(_token(agent), NEW_PASSWORD, "test-secret-key")

    stored = await _reloaded(agent)
    assert verify_password(stored.password_hash, NEW_PASSWORD)
    assert stored.session_version == agent.session_version + 1
    assert user.session_version == stored.session_version


async def test_a_reset_token_works_once(agent):
    token = _token(agent)
    await passwords.reset_password(token, NEW_PASSWORD, "test-secret-key")

    with pytest.raises(ValidationError, match="expired or was already used"):
        await passwords.reset_password(token, "yet another passphrase", "test-secret-key")

    assert verify_password((await _reloaded(agent)).password_hash, NEW_PASSWORD)


async def test_two_resets_with_one_token_at_once_set_one_password(agent):
    token = _token(agent)

    results = await asyncio.gather(
        passwords.reset_password(token, "first racing passphrase", "test-secret-key"),
        passwords.reset_password(token, "second racing passphrase", "test-secret-key"),
        return_exceptions=True,
    )

    assert sum(isinstance(result, UserRow) for result in results) == 1
    assert sum(isinstance(result, ValidationError) for result in results) == 1
    assert (await _reloaded(agent)).session_version == agent.session_version + 1


async def test_a_reset_with_a_short_password_changes_nothing_and_keeps_the_link(agent):
    token = _token(agent)

    with pytest.raises(ValidationError, match="at least"):
        await passwords.reset_password(token, "short", "test-secret-key")

    assert (await passwords.user_of_reset_token(token, "test-secret-key")).id == agent.id


# Reset e-mails -------------------------------------------------------------------------------


@pytest.fixture
def mail_settings(settings: Settings, relay) -> Settings:
    return dataclasses.replace(
        settings, smtp_url=f"smtp://127.0.0.1:{relay.port}", mail_from="Earful <noreply@earful.test>"
    )


async def test_a_reset_e_mail_carries_a_working_link(agent, mail_settings, relay):
    sent = await passwords.send_reset_link(" Agent@Example.com ", mail_settings, LINK_PREFIX)

    assert sent is True
    [message] = relay.messages
    assert relay.envelopes[0].rcpt_tos == ["agent@example.com"]
    assert message["To"] == "agent@example.com"
    assert message["From"] == "Earful <noreply@earful.test>"
    assert message["Subject"] == "Reset your Earful password"
    assert message.get_content_type() == "text/plain"
    link = re.search(re.escape(LINK_PREFIX) + r"(\S+)", message.get_content())
    assert link, message.get_content()
    assert link.group(0).encode() in relay.envelopes[0].original_content  # not cut by an encoding
    user = await passwords.user_of_reset_token(link.group(1), mail_settings.secret_key)
    assert user.id == agent.id


async def test_no_e_mail_goes_to_an_address_without_an_account(db, mail_settings, relay):
    sent = await passwords.send_reset_link("nobody@example.com", mail_settings, LINK_PREFIX)

    assert sent is False
    assert relay.envelopes == []


async def test_reset_e_mails_are_limited_to_three_an_hour_per_account(agent, mail_settings, relay):
    now = datetime.now(UTC)
    results = [
        await passwords.send_reset_link(
            agent.email, mail_settings, LINK_PREFIX, now=now + timedelta(minutes=n)
        )
        for n in range(4)
    ]
    later = await passwords.send_reset_link(
        agent.email, mail_settings, LINK_PREFIX, now=now + timedelta(minutes=61)
    )

    assert results == [True, True, True, False]
    assert later is True
    assert len(relay.envelopes) == 4
    assert await PasswordResetRequest.filter(user_id=agent.id).count() <= 3


async def test_the_limit_of_one_account_leaves_the_others_alone(agent, mail_settings, relay):
    other = await make_user(email="bob@example.com")
    for _ in range(3):
        await passwords.send_reset_link(agent.email, mail_settings, LINK_PREFIX)

    assert await passwords.send_reset_link(other.email, mail_settings, LINK_PREFIX) is True


async def test_a_relay_that_is_down_is_logged_not_raised(agent, mail_settings, relay, caplog):
    await relay.stop()

    with caplog.at_level(logging.WARNING, logger="earful.passwords"):
        sent = await passwords.send_reset_link(agent.email, mail_settings, LINK_PREFIX)

    assert sent is False
    assert f"user {agent.id}" in caplog.text
