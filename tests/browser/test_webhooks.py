"""Webhooks in a real browser, against a live ``earful serve`` whose worker delivers to a receiver
on loopback run by the test: an administrator adds an endpoint, copies its secret (shown once),
sends a test event and watches it arrive in the log, signed; then the same without JavaScript."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect
from standardwebhooks import Webhook

from tests.browser.conftest import (
    PASSWORD,
    csp_violations,
    mark_document,
    same_document,
    sign_in,
    watch_console,
)
from tests.browser.live import LiveSite, live_site
from tests.webhook_receiver import Receiver

SCREENSHOTS = os.environ.get("EARFUL_SCREENSHOTS")  # a folder: the test saves its pages there


@pytest.fixture(scope="module")
def hooks_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    """A live server whose webhooks may go to loopback (EARFUL_WEBHOOK_ALLOW_PRIVATE=1)."""
    with live_site(tmp_path_factory.mktemp("hooks") / "data", EARFUL_WEBHOOK_ALLOW_PRIVATE="1") as running:
        yield running


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    server = Receiver()
    await server.start()
    yield server
    await server.stop()


async def _shot(page: Page, name: str) -> None:
    if SCREENSHOTS:  # Playwright makes the folder
        await page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)


# Chromium reports every answer of 400 or more as a console error; the refused form's 422 is expected.
REFUSED = "error: Failed to load resource: the server responded with a status of 422"


def _errors(messages: list[str]) -> list[str]:
    return [m for m in messages if m.startswith(("error", "pageerror")) and not m.startswith(REFUSED)]


async def test_an_administrator_adds_a_webhook_and_sees_a_test_event_delivered(
    hooks_site: LiveSite, browser: Browser, receiver: Receiver
):
    token = hooks_site.create_agent("hooks-owner@example.com", "Hana Hooks", PASSWORD)
    application = hooks_site.create_application(token, name="Hooked")
    settings_url = f"{hooks_site.base_url}/app/applications/{application['id']}"
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    messages = watch_console(page)
    await sign_in(page, hooks_site, "hooks-owner@example.com")

    await page.goto(settings_url)
    card = page.locator("#webhooks")
    await expect(card).to_contain_text("No webhooks yet.")
    await expect(card.locator("input[name=events]:checked")).to_have_count(4)
    await mark_document(page)
    await card.get_by_label("URL", exact=True).fill("http://user:password@127.0.0.1/in")
    await card.get_by_role("button", name="Add webhook").click()
    await expect(card).to_contain_text("must not hold a user name or a password")  # the card, swapped (422)
    assert await same_document(page)
    await card.get_by_label("URL", exact=True).fill(receiver.url)
    await card.get_by_label("Description").fill("The <b>CRM</b>")
    await _shot(page, "webhooks-card")
    await card.get_by_role("button", name="Add webhook").click()

    await page.wait_for_url(f"{settings_url}/webhooks/*")
    secret_box = page.locator("#webhook-secret-value")
    secret = await secret_box.input_value()
    assert secret.startswith("whsec_")
    await expect(page.locator("#webhook-secret")).to_contain_text("it is shown only this once")
    await expect(page.get_by_role("heading", level=1)).to_contain_text(receiver.url)
    await page.reload()
    await expect(page.locator("#webhook-secret")).to_contain_text("The secret is shown once")
    await expect(secret_box).to_have_count(0)

    await mark_document(page)
    await page.get_by_role("button", name="Send test event").click()
    log = page.locator("#deliveries")
    await expect(log).to_contain_text("Test event queued")
    delivery = log.locator(".delivery").first
    await expect(delivery.locator(".delivery__status")).to_have_text("Delivered", timeout=15_000)
    await expect(delivery).to_contain_text("HTTP 200")
    assert await same_document(page)  # swapped by htmx, refreshed while it waited
    await delivery.locator("details.attempt summary").first.click()
    await expect(delivery.locator("details.attempt").first).to_contain_text("webhook-id: msg_")
    await _shot(page, "webhook-page")

    async with asyncio.timeout(15):
        [received] = await receiver.wait_for(1)
    assert {"webhook-id", "webhook-timestamp", "webhook-signature"} <= set(received.headers)
    assert Webhook(secret).verify(received.body, received.headers)["type"] == "webhook.test"

    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.get_by_role("button", name="Rotate secret").click()
    await expect(page.locator("#webhook-secret")).to_contain_text("New secret.")
    rotated = await page.locator("#webhook-secret-value").input_value()
    assert rotated.startswith("whsec_") and rotated != secret
    await expect(page.locator("#webhook-secret")).to_contain_text(
        "keeps signing beside the new one for 24 hours"
    )
    assert await same_document(page)

    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.get_by_role("button", name="Delete webhook").click()
    await page.wait_for_url(f"{settings_url}#webhooks")
    await expect(page.get_by_text("Webhook deleted.")).to_be_visible()
    await expect(page.locator("#webhooks")).to_contain_text("No webhooks yet.")
    assert csp_violations(messages) == [] and _errors(messages) == []
    await context.close()


async def test_webhooks_work_without_javascript(hooks_site: LiveSite, browser: Browser, receiver: Receiver):
    token = hooks_site.create_agent("hooks-plain@example.com", "Paul Plain", PASSWORD)
    application = hooks_site.create_application(token, name="Plain Hooks")
    settings_url = f"{hooks_site.base_url}/app/applications/{application['id']}"
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    page = await context.new_page()
    await sign_in(page, hooks_site, "hooks-plain@example.com")

    await page.goto(settings_url)
    card = page.locator("#webhooks")
    await card.get_by_label("URL", exact=True).fill("ftp://example.com/in")
    await card.get_by_role("button", name="Add webhook").click()
    await expect(page.locator("#webhooks")).to_contain_text("must be an http:// or https:// URL")

    card = page.locator("#webhooks")
    await card.get_by_label("URL", exact=True).fill(receiver.url)
    await card.get_by_label("Format").select_option("slack")
    await card.get_by_role("button", name="Add webhook").click()
    await page.wait_for_url(f"{settings_url}/webhooks/*")
    webhook_url = page.url
    secret = await page.locator("#webhook-secret-value").input_value()

    await page.get_by_role("button", name="Send test event").click()
    await page.wait_for_url(f"{webhook_url}#deliveries")
    await expect(page.get_by_text("Test event queued")).to_be_visible()
    async with asyncio.timeout(15):
        [received] = await receiver.wait_for(1)
    assert "text" in Webhook(secret).verify(received.body, received.headers)  # a Slack message
    for _ in range(30):  # no JavaScript, no refresh: reload until the worker has recorded it
        await page.goto(webhook_url)
        if await page.locator(".delivery__status--delivered").count():
            break
        await asyncio.sleep(0.5)
    await expect(page.locator(".delivery__status").first).to_have_text("Delivered")

    await page.get_by_role("button", name="Rotate secret").click()
    await expect(page.get_by_role("heading", name="Rotate the secret?")).to_be_visible()
    await page.get_by_role("button", name="Rotate secret").click()
    rotated = await page.locator("#webhook-secret-value").input_value()
    assert rotated != secret
    await page.reload()
    await expect(page.locator("#webhook-secret-value")).to_have_count(0)

    await page.get_by_role("button", name="Delete webhook").click()
    await expect(page.get_by_role("heading", name="Delete this webhook?")).to_be_visible()
    assert "/delete" in page.url
    await page.get_by_role("button", name="Delete webhook").click()
    await page.wait_for_url(f"{settings_url}#webhooks")
    await expect(page.locator("#webhooks")).to_contain_text("No webhooks yet.")
    await context.close()
