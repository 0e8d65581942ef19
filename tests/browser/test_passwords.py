"""Changing a password, and resetting a forgotten one through the e-mailed link, in a real browser."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from playwright.async_api import expect

from tests.browser.conftest import PASSWORD, mark_document, same_document, sign_in
from tests.browser.live import LiveSite, live_site

NEW_PASSWORD = "a brand new browser passphrase"


@pytest.fixture
def mail_site(tmp_path, relay) -> Iterator[LiveSite]:
    """A live server that sends its e-mail through the loopback relay."""
    with live_site(tmp_path / "data", EARFUL_SMTP_URL=f"smtp://127.0.0.1:{relay.port}") as running:
        yield running


async def _sign_out(page) -> None:
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("button", name="Sign in")).to_be_visible()


async def test_an_agent_changes_the_password_on_the_account_page(page, site):
    site.create_agent("changer@example.com", "Cai Changer", PASSWORD)
    await sign_in(page, site, "changer@example.com")
    await page.goto(f"{site.base_url}/app/account")
    await mark_document(page)

    await page.get_by_label("Current password").fill(PASSWORD)
    await page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    await page.get_by_label("New password, again").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Change password").click()

    await expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    assert await same_document(page)
    await _sign_out(page)
    await sign_in(page, site, "changer@example.com", NEW_PASSWORD)
    await expect(page.get_by_text("Cai Changer")).to_be_visible()


async def test_a_forgotten_password_is_reset_through_the_e_mailed_link(page, mail_site, relay):
    mail_site.create_agent("forgetful@example.com", "Fay Forgetful", PASSWORD)
    await page.goto(f"{mail_site.base_url}/app/login")

    await page.get_by_role("link", name="Forgot your password?").click()
    await page.get_by_label("E-mail").fill("forgetful@example.com")
    await page.get_by_role("button", name="Send me a link").click()
    await expect(page.get_by_role("status")).to_contain_text("If an account exists for that address")

    async with asyncio.timeout(20):
        [message] = await relay.wait_for(1)
    link = re.search(r"http://\S+/app/password/reset/\S+", message.get_content()).group(0)
    await page.goto(link)
    await page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    await page.get_by_label("New password, again").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Set the new password").click()

    await expect(page.get_by_text("Fay Forgetful")).to_be_visible()
    await _sign_out(page)
    await sign_in(page, mail_site, "forgetful@example.com", NEW_PASSWORD)
    await expect(page.get_by_text("Fay Forgetful")).to_be_visible()
