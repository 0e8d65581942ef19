"""Saved replies in a real browser: added on their page, inserted from the reply box by the
typeahead ("/" or the button) with the placeholders filled for the thread, the customer's name as
text; without JavaScript, the select and Insert do the same."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import (
    PASSWORD,
    csp_violations,
    mark_document,
    same_document,
    sign_in,
    watch_console,
)
from tests.browser.live import LiveSite

TEXT = "Hi {name}, your refund for {application} is on its way; we will write to {email}. {unknown}"
_serial = itertools.count(1)


def setup(site: LiveSite) -> tuple[str, dict[str, Any], int]:
    """An agent, an application and a thread from a customer whose name looks like markup."""
    email = f"saved{next(_serial)}@example.com"
    token = site.create_agent(email, "Sam Saved", PASSWORD, plan="team")
    application = site.create_application(token, name="Refund Shop")
    site.submit(
        application, email="rita@example.org", name="Rita <b>Reader</b>", message="Where is my refund?"
    )
    thread = site.api_get(token, f"/applications/{application['id']}/feedback")["data"][0]
    return email, application, thread["id"]


def filled(application: dict[str, Any]) -> str:
    return (
        f"Hi Rita <b>Reader</b>, your refund for {application['name']} is on its way; "
        "we will write to rita@example.org. {unknown}"
    )


async def add_saved_reply(page: Page, site: LiveSite, application: dict[str, Any], title: str) -> None:
    """Add a saved reply through its page, as an agent does."""
    await page.goto(f"{site.base_url}/app/applications/{application['id']}/saved-replies")
    await page.get_by_label("Title").fill(title)
    await page.get_by_label("Text").fill(TEXT)
    await page.get_by_role("button", name="Add saved reply").click()
    await expect(page.get_by_text("Saved reply added.")).to_be_visible()


async def test_slash_searches_the_titles_and_enter_inserts_the_filled_text(page: Page, site: LiveSite):
    email, application, thread_id = setup(site)
    console = watch_console(page)
    await sign_in(page, site, email)
    await add_saved_reply(page, site, application, "Refund on its way")
    await add_saved_reply(page, site, application, "Bug acknowledged")
    await page.goto(f"{site.base_url}/app/applications/{application['id']}/feedback/{thread_id}")
    await mark_document(page)
    message = page.locator("#reply-message")

    await expect(page.locator("[data-saved-insert]")).to_be_hidden()  # the typeahead replaces the select
    await message.press_sequentially("Thanks for waiting. /ref")
    listbox = page.get_by_role("listbox", name="Saved replies")
    await expect(listbox.get_by_role("option")).to_have_text(["Refund on its way"])
    await message.press("Enter")

    await expect(message).to_have_value("Thanks for waiting. " + filled(application))
    assert await page.locator("#conversation b").count() == 0  # the name stayed text
    await page.get_by_role("button", name="Send").click()
    await expect(page.locator("li.reply", has_text="your refund for Refund Shop")).to_be_visible()
    assert await same_document(page)
    assert csp_violations(console) == []


async def test_the_button_opens_a_search_and_enter_inserts_at_the_caret(page: Page, site: LiveSite):
    email, application, thread_id = setup(site)
    await sign_in(page, site, email)
    await add_saved_reply(page, site, application, "Refund on its way")
    await add_saved_reply(page, site, application, "Bug acknowledged")
    await page.goto(f"{site.base_url}/app/applications/{application['id']}/feedback/{thread_id}")
    message = page.locator("#reply-message")
    await message.fill("Dear customer,\n\nBest, Sam")
    await message.evaluate("el => el.setSelectionRange(16, 16)")

    await page.get_by_role("button", name="Saved replies").click()
    await page.get_by_role("combobox", name="Search saved replies by title").fill("bug")
    await expect(page.get_by_role("listbox", name="Saved replies").get_by_role("option")).to_have_text(
        ["Bug acknowledged"]
    )
    await page.keyboard.press("ArrowDown")  # wraps to the only match
    await page.keyboard.press("Enter")

    await expect(message).to_have_value("Dear customer,\n\n" + filled(application) + "Best, Sam")
    await expect(page.get_by_role("listbox", name="Saved replies")).to_be_hidden()


async def test_escape_closes_the_list_and_keeps_what_was_typed(page: Page, site: LiveSite):
    email, application, thread_id = setup(site)
    await sign_in(page, site, email)
    await add_saved_reply(page, site, application, "Refund on its way")
    await page.goto(f"{site.base_url}/app/applications/{application['id']}/feedback/{thread_id}")
    message = page.locator("#reply-message")

    await message.press_sequentially("/re")
    await expect(page.get_by_role("listbox", name="Saved replies").get_by_role("option")).to_have_count(1)
    await message.press("Escape")

    await expect(page.get_by_role("listbox", name="Saved replies")).to_be_hidden()
    await expect(message).to_have_value("/re")


@pytest.fixture
async def plain_page(browser: Browser):
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    opened = await context.new_page()
    yield opened
    await context.close()


async def test_without_javascript_the_select_and_insert_fill_the_box(plain_page: Page, site: LiveSite):
    email, application, thread_id = setup(site)
    await sign_in(plain_page, site, email)
    await add_saved_reply(plain_page, site, application, "Refund on its way")
    await plain_page.goto(f"{site.base_url}/app/applications/{application['id']}/feedback/{thread_id}")
    await plain_page.locator("#reply-message").fill("My draft")

    await plain_page.get_by_label("Saved reply").select_option(label="Refund on its way")
    await plain_page.get_by_role("button", name="Insert").click()

    await expect(plain_page.locator("#reply-message")).to_have_value("My draft\n\n" + filled(application))
    await plain_page.get_by_role("button", name="Send").click()
    await expect(plain_page.locator("li.reply", has_text="your refund for Refund Shop")).to_be_visible()
