"""The Retention card in a real browser: saved in place by htmx, and by a plain post without JavaScript."""

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

OWNER_EMAIL = "retention-owner@example.com"


async def test_the_retention_card_saves_in_place_and_without_javascript(site: LiveSite, browser: Browser):
    token = site.create_agent(OWNER_EMAIL, "Rita Retention", PASSWORD)
    application = site.create_application(token, name="Short Memory")
    site.submit(application, email="someone@example.org", message="Please keep this for a while.")
    settings_url = f"{site.base_url}/app/applications/{application['id']}"

    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    messages = watch_console(page)
    await sign_in(page, site, OWNER_EMAIL)
    await page.goto(settings_url)
    card = page.locator("#retention")
    await expect(card).to_contain_text("Retention is off.")

    await mark_document(page)
    await card.get_by_label("Delete threads older than (days)").fill("30")
    await card.get_by_label("Only archived threads").check()
    await card.get_by_role("button", name="Save retention").click()

    await expect(card).to_contain_text("Retention saved.")
    await expect(card).to_contain_text("The next run deletes 0 threads.")
    assert await same_document(page)
    stored = site.api_get(token, f"/applications/{application['id']}")["data"]
    assert (stored["retention_days"], stored["retention_archived_only"]) == (30, True)
    assert csp_violations(messages) == []
    await context.close()

    plain = await browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    page = await plain.new_page()
    await sign_in(page, site, OWNER_EMAIL)
    await page.goto(settings_url)
    card = page.locator("#retention")
    await card.get_by_label("Delete threads older than (days)").fill("")
    await card.get_by_role("button", name="Save retention").click()

    await page.wait_for_url(f"{settings_url}#retention")
    await expect(page.locator("#retention")).to_contain_text("Retention is off.")
    assert site.api_get(token, f"/applications/{application['id']}")["data"]["retention_days"] is None
    await plain.close()
