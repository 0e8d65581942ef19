"""Deleting in a real browser: with JavaScript the browser's confirm box asks; without it, a
confirmation page does. Each deletion is checked on the page and through the management API."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import PASSWORD, csp_violations, sign_in, watch_console
from tests.browser.live import LiveSite

EMAIL = "deleter@example.com"
_serial = itertools.count(1)


@pytest.fixture(scope="module")
def token(site: LiveSite) -> str:
    return site.create_agent(EMAIL, "Dee Leter", PASSWORD)


def new_application(site: LiveSite, token: str, name: str) -> dict[str, Any]:
    return site.create_application(token, name=f"{name} {next(_serial)}")


def messages(site: LiveSite, token: str, application: dict[str, Any]) -> set[str]:
    threads = site.api_get(token, f"/applications/{application['id']}/feedback?limit=100")["data"]
    return {thread["message"] for thread in threads}


def submit(site: LiveSite, application: dict[str, Any], message: str, tags: str = "") -> None:
    number = next(_serial)
    site.submit(application, email=f"person{number}@example.org", message=message, tags=tags)


def thread_id(site: LiveSite, token: str, application: dict[str, Any], message: str) -> int:
    threads = site.api_get(token, f"/applications/{application['id']}/feedback?limit=100")["data"]
    return next(thread["id"] for thread in threads if thread["message"] == message)


@pytest.fixture
async def no_js_page(browser: Browser):
    context = await browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    opened = await context.new_page()
    yield opened
    await context.close()


def app_url(site: LiveSite, application: dict[str, Any], suffix: str = "") -> str:
    return f"{site.base_url}/app/applications/{application['id']}{suffix}"


async def test_a_thread_is_deleted_after_the_confirm_box(page: Page, site, token):
    application = new_application(site, token, "Thread deletion")
    submit(site, application, "Please delete my old account data.")
    submit(site, application, "This one stays in the inbox.")
    feedback_id = thread_id(site, token, application, "Please delete my old account data.")
    console = watch_console(page)
    await sign_in(page, site, EMAIL)
    await page.goto(app_url(site, application, f"/feedback/{feedback_id}"))

    page.once("dialog", lambda dialog: dialog.dismiss())
    await page.get_by_role("button", name="Delete thread").click()
    await page.wait_for_timeout(300)
    assert messages(site, token, application) == {
        "Please delete my old account data.",
        "This one stays in the inbox.",
    }

    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete thread").click()

    await expect(page).to_have_url(app_url(site, application, "/feedback"))
    await expect(page.get_by_role("status")).to_have_text("Thread deleted.")
    assert messages(site, token, application) == {"This one stays in the inbox."}
    assert csp_violations(console) == []


async def test_without_javascript_a_thread_is_deleted_through_a_confirmation_page(no_js_page, site, token):
    page = no_js_page
    application = new_application(site, token, "Thread deletion without JS")
    submit(site, application, "Delete me without JavaScript.")
    feedback_id = thread_id(site, token, application, "Delete me without JavaScript.")
    await sign_in(page, site, EMAIL)
    await page.goto(app_url(site, application, f"/feedback/{feedback_id}"))

    await page.get_by_role("button", name="Delete thread").click()
    await expect(page.get_by_role("heading", name="Delete this thread?")).to_be_visible()
    assert messages(site, token, application) == {"Delete me without JavaScript."}
    await page.get_by_role("button", name="Delete thread").click()

    await expect(page).to_have_url(app_url(site, application, "/feedback"))
    await expect(page.get_by_role("status")).to_have_text("Thread deleted.")
    assert messages(site, token, application) == set()


async def test_the_checked_threads_of_the_inbox_are_deleted(page: Page, site, token):
    application = new_application(site, token, "Inbox deletion")
    for message in ("First spam message here.", "Second spam message here.", "A real question to keep."):
        submit(site, application, message)
    console = watch_console(page)
    await sign_in(page, site, EMAIL)
    await page.goto(app_url(site, application, "/feedback"))

    rows = page.get_by_role("region", name="Feedback threads").get_by_role("listitem")
    await rows.filter(has_text="First spam").get_by_role("checkbox").check()
    await rows.filter(has_text="Second spam").get_by_role("checkbox").check()
    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete selected").click()

    await expect(page.get_by_role("status")).to_have_text("2 threads deleted.")
    await expect(rows).to_have_count(1)
    assert messages(site, token, application) == {"A real question to keep."}
    assert csp_violations(console) == []


async def test_without_javascript_the_inbox_asks_on_a_page_of_its_own(no_js_page, site, token):
    page = no_js_page
    application = new_application(site, token, "Inbox deletion without JS")
    submit(site, application, "Spam without JavaScript.")
    submit(site, application, "Keep me without JavaScript.")
    await sign_in(page, site, EMAIL)
    await page.goto(app_url(site, application, "/feedback"))

    rows = page.get_by_role("region", name="Feedback threads").get_by_role("listitem")
    await rows.filter(has_text="Spam without").get_by_role("checkbox").check()
    await page.get_by_role("button", name="Delete selected").click()
    await expect(page.get_by_role("heading", name="Delete 1 thread?")).to_be_visible()
    await page.get_by_role("button", name="Delete 1 thread").click()

    await expect(page.get_by_role("status")).to_have_text("1 thread deleted.")
    assert messages(site, token, application) == {"Keep me without JavaScript."}


async def test_the_tags_page_searches_as_you_type_and_deletes_a_tag(page: Page, site, token):
    application = new_application(site, token, "Tag deletion")
    submit(site, application, "Tagged with billing and ui.", tags="billing,ui")
    console = watch_console(page)
    await sign_in(page, site, EMAIL)
    await page.goto(app_url(site, application))

    await page.get_by_role("link", name="Tags", exact=True).click()
    rows = page.get_by_role("region", name="Tags").get_by_role("row")
    await expect(rows).to_have_count(3)
    await page.get_by_role("searchbox", name="Search tags").fill("bil")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(1)).to_contain_text("billing")

    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete billing").click()

    await expect(page.get_by_role("status")).to_have_text("Tag deleted.")
    tags = site.api_get(token, f"/applications/{application['id']}/tags")["data"]
    assert [tag["name"] for tag in tags] == ["ui"]
    assert messages(site, token, application) == {"Tagged with billing and ui."}
    assert csp_violations(console) == []


async def test_an_application_is_deleted_once_its_name_is_typed(page: Page, site, token):
    application = new_application(site, token, "Doomed")
    submit(site, application, "Feedback of a doomed application.")
    await sign_in(page, site, EMAIL)
    await page.goto(app_url(site, application))

    await page.get_by_role("link", name="Delete application…").click()
    await page.get_by_label("Type").fill("not the name")
    await page.get_by_role("button", name="Delete this application").click()
    await expect(page.get_by_role("alert")).to_have_text("Type the application's name to confirm.")

    await page.get_by_label("Type").fill(application["name"])
    await page.get_by_role("button", name="Delete this application").click()

    await expect(page).to_have_url(f"{site.base_url}/app/applications")
    await expect(page.get_by_role("status")).to_have_text(
        f"{application['name']} was deleted with its 1 thread."
    )
    response = site.http.get(
        f"{site.base_url}/applications/{application['id']}", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 404
