"""The Notifications card in a real browser: saved in place by htmx, and without JavaScript."""

from __future__ import annotations

from playwright.async_api import Browser, expect

from tests.browser.conftest import (
    PASSWORD,
    csp_violations,
    mark_document,
    same_document,
    sign_in,
    watch_console,
)
from tests.browser.live import LiveSite

EMAIL = "notified@example.com"


async def test_the_notifications_card_saves_in_place_and_without_javascript(site: LiveSite, browser: Browser):
    token = site.create_agent(EMAIL, "Nora Notified", PASSWORD)
    application = site.create_application(token, name="Chatty")
    settings_url = f"{site.base_url}/app/applications/{application['id']}"

    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    messages = watch_console(page)
    await sign_in(page, site, EMAIL)
    await page.goto(settings_url)
    card = page.locator("#notifications")
    await expect(card.get_by_label("a daily digest")).to_be_checked()

    await mark_document(page)
    await card.get_by_label("every new thread").check()
    await card.get_by_role("button", name="Save notifications").click()

    await expect(card).to_contain_text("Notifications saved.")
    await expect(card.get_by_label("every new thread")).to_be_checked()
    assert await same_document(page)
    assert csp_violations(messages) == []
    await context.close()

    plain = await browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    page = await plain.new_page()
    await sign_in(page, site, EMAIL)
    await page.goto(settings_url)
    card = page.locator("#notifications")
    await expect(card.get_by_label("every new thread")).to_be_checked()
    await card.get_by_label("nothing").check()
    await card.get_by_role("button", name="Save notifications").click()

    await page.wait_for_url(f"{settings_url}#notifications")
    await expect(page.get_by_text("Notifications saved.")).to_be_visible()
    await expect(page.locator("#notifications").get_by_label("nothing")).to_be_checked()
    await plain.close()
