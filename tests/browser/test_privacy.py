"""The Privacy requests page in a real browser: from the account page, export a person's data as a
file, then erase them after typing the address twice."""

from __future__ import annotations

import json
import os

import pytest
from playwright.async_api import expect

from tests.browser.conftest import PASSWORD, csp_violations, sign_in, watch_console
from tests.browser.live import LiveSite

EMAIL = "privacy-admin@example.com"
PERSON = "dana@example.org"


@pytest.fixture(scope="module")
def shop(site: LiveSite) -> tuple[str, dict]:
    token = site.create_agent(EMAIL, "Priya Admin", PASSWORD)
    application = site.create_application(token, name="Privacy Shop")
    site.submit(application, name="Dana", email=PERSON, message="Please forget me after this")
    site.submit(application, name="Eli", email="eli@example.org", message="Keep me")
    return token, application


async def test_an_administrator_exports_then_erases_a_person(page, site, shop):
    token, application = shop
    console = watch_console(page)
    await sign_in(page, site, EMAIL)
    await page.goto(f"{site.base_url}/app/account")
    await page.get_by_role("link", name="Privacy requests").click()
    await expect(page.get_by_role("heading", name="Privacy requests", level=1)).to_be_visible()

    export = page.get_by_role("form", name="Export a person's data")
    await export.get_by_label("E-mail address").fill(PERSON)
    async with page.expect_download() as waiting:
        await export.get_by_role("button", name="Download the export").click()
    download = await waiting.value
    document = json.loads((await download.path()).read_text())
    assert [t["message"] for t in document["applications"][0]["threads"]] == ["Please forget me after this"]

    erase = page.get_by_role("form", name="Erase a person")
    await erase.get_by_label("E-mail address").fill(PERSON)
    await erase.get_by_label("The same address again, to confirm").fill(PERSON.upper())
    await erase.get_by_label("Applications").select_option(label="Privacy Shop")
    await erase.get_by_role("button", name="Erase for good").click()

    await expect(page.get_by_role("status").filter(has_text="Erased.")).to_be_visible()
    await expect(page.locator(".privacy-audit tbody tr")).to_have_count(2)
    if os.environ.get("EARFUL_SCREENSHOTS"):
        await page.screenshot(path=os.environ["EARFUL_SCREENSHOTS"] + "/privacy.png", full_page=True)
    threads = site.api_get(token, f"/applications/{application['id']}/feedback")["data"]
    assert [thread["email"] for thread in threads] == ["eli@example.org"]
    assert csp_violations(console) == []
