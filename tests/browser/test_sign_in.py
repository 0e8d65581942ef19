"""Signing in and out in a real browser."""

from __future__ import annotations

from playwright.async_api import expect

from tests.browser.conftest import PASSWORD, sign_in


async def test_agent_signs_in_and_out(page, site):
    site.create_agent("signin@example.com", "Sam Signin", PASSWORD)

    await sign_in(page, site, "signin@example.com")
    await expect(page.get_by_text("Sam Signin")).to_be_visible()
    await page.get_by_role("button", name="Sign out").click()

    await expect(page.get_by_role("button", name="Sign in")).to_be_visible()


async def test_wrong_password_shows_an_error(page, site):
    await page.goto(f"{site.base_url}/app/login")
    await page.get_by_label("E-mail").fill("nobody@example.com")
    await page.get_by_label("Password").fill("not the password")
    await page.get_by_role("button", name="Sign in").click()

    await expect(page.get_by_role("alert")).to_have_text("Wrong e-mail address or password.")


async def test_pages_run_no_inline_script_and_report_no_csp_violation(page, site):
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))

    await page.goto(f"{site.base_url}/app/login")
    await page.wait_for_load_state("networkidle")

    assert not [m for m in messages if "Content Security Policy" in m]
