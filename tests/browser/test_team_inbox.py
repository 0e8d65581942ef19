"""A team's inbox in a real browser: an owner invites an agent who accepts and sees the
organization's inbox; an agent archives 120 threads across pages with "select all matching";
threads are assigned from the keyboard and found under Mine. Effects are read back through the
API."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.browser.conftest import (
    PASSWORD,
    csp_violations,
    mark_document,
    same_document,
    sign_in,
    watch_console,
)
from tests.browser.live import LiveSite

OWNER_EMAIL = "team-owner@example.com"
AGENT_EMAIL = "team-agent@example.com"
INVITEE_EMAIL = "team-newcomer@example.com"


@pytest.fixture(scope="module")
def owner_token(site: LiveSite) -> str:
    return site.create_agent(OWNER_EMAIL, "Tess Owner", PASSWORD)


@pytest.fixture(scope="module")
def agent_token(site: LiveSite, owner_token: str) -> str:
    """An agent of the owner's organization "Team Inc", which has the application "Team app"."""
    token = site.create_agent(AGENT_EMAIL, "Abe Agent", PASSWORD)
    site.cli("org", "create", "--name", "Team Inc", "--owner", OWNER_EMAIL, "--member", AGENT_EMAIL)
    return token


def organization_of(site: LiveSite, token: str, name: str) -> dict[str, Any]:
    return next(o for o in site.api_get(token, "/organizations")["data"] if o["name"] == name)


def shared_application(site: LiveSite, owner_token: str, name: str) -> dict[str, Any]:
    """A new application of "Team Inc"."""
    organization = organization_of(site, owner_token, "Team Inc")
    return site.create_application(owner_token, name=name, organization_id=str(organization["id"]))


def inbox_url(site: LiveSite, application: dict[str, Any], query: str = "") -> str:
    return f"{site.base_url}/app/applications/{application['id']}/feedback{query}"


async def test_an_invited_newcomer_accepts_and_sees_the_organizations_inbox(
    page: Page, browser, site, owner_token, agent_token
):
    application = shared_application(site, owner_token, "Invited app")
    site.submit(application, email="customer@example.org", message="Where is my invoice for March?")
    organization = organization_of(site, owner_token, "Team Inc")
    console = watch_console(page)
    await sign_in(page, site, OWNER_EMAIL)
    await page.goto(f"{site.base_url}/app/organizations/{organization['id']}")

    await mark_document(page)
    await page.get_by_label("Invite someone").fill(INVITEE_EMAIL)
    await page.get_by_role("button", name="Invite", exact=True).click()
    link = page.get_by_label("Invitation link")
    await expect(link).to_be_visible()
    assert await same_document(page)
    url = await link.input_value()
    await expect(page.locator(".invitation-list").get_by_text(INVITEE_EMAIL, exact=True)).to_be_visible()

    newcomer = await browser.new_context(viewport={"width": 1280, "height": 900})
    newcomer_page = await newcomer.new_page()
    newcomer_console = watch_console(newcomer_page)
    await newcomer_page.goto(url)
    await expect(newcomer_page.get_by_role("heading", name="Join Team Inc")).to_be_visible()
    await newcomer_page.get_by_label("Your name").fill("Nia Newcomer")
    await newcomer_page.get_by_label("Password", exact=True).fill("newcomer-password-1")
    await newcomer_page.get_by_label("Repeat the password").fill("newcomer-password-1")
    await newcomer_page.get_by_role("button", name="Create my account and join").click()

    await expect(newcomer_page.get_by_role("heading", level=1, name="Team Inc")).to_be_visible()
    await expect(newcomer_page.get_by_role("status")).to_have_text("You joined Team Inc.")
    await newcomer_page.get_by_role("link", name="Invited app").click()
    await expect(newcomer_page.get_by_text("Where is my invoice for March?")).to_be_visible()
    await newcomer_page.goto(url)
    await expect(newcomer_page.get_by_text("This invitation was accepted already.")).to_be_visible()
    assert csp_violations(newcomer_console) == [], newcomer_console
    await newcomer.close()

    await page.reload()
    await expect(page.get_by_role("button", name="Remove Nia Newcomer")).to_be_visible()
    await expect(page.get_by_text("Pending invitations")).to_have_count(0)
    assert csp_violations(console) == [], console


async def test_an_agent_archives_120_threads_across_pages_with_select_all_matching(
    page: Page, site, owner_token, agent_token
):
    application = shared_application(site, owner_token, "Busy app")
    for number in range(120):
        site.submit(
            application,
            email=f"busy{number}@example.org",
            message=f"Busy thread number {number}",
            tags=["busy"],
        )
    site.submit(application, email="calm@example.org", message="A calm thread that stays open.")
    console = watch_console(page)
    await sign_in(page, site, AGENT_EMAIL)
    await page.goto(inbox_url(site, application, "?tag=busy"))

    boxes = page.get_by_role("region", name="Feedback threads").get_by_role("checkbox", name="Select")
    await expect(boxes).to_have_count(50)
    offer = page.get_by_text("Select all 120 threads matching these filters")
    await expect(offer).to_be_hidden()
    await boxes.first.click()
    await boxes.last.click(modifiers=["Shift"])  # a range: the whole page
    await expect(page.get_by_text("50 threads selected.")).to_be_visible()
    await offer.click()
    await expect(page.get_by_text("Every thread matching is selected.")).to_be_visible()
    await page.get_by_role("button", name="Archive", exact=True).click()

    await expect(page.get_by_role("status")).to_have_text("120 threads archived.")
    archived = site.api_get(agent_token, f"/applications/{application['id']}/feedback?archived=true&limit=1")
    still_open = site.api_get(agent_token, f"/applications/{application['id']}/feedback")
    assert archived["pagination"]["total"] == 120
    assert [thread["message"] for thread in still_open["data"]] == ["A calm thread that stays open."]
    assert csp_violations(console) == [], console


async def test_threads_are_assigned_from_the_keyboard_and_found_under_mine(
    page: Page, site, owner_token, agent_token
):
    application = shared_application(site, owner_token, "Keyboard app")
    for message in (
        "Oldest: the login page loops.",
        "Middle: the export is slow.",
        "Newest: dark mode please.",
    ):
        site.submit(application, email="keys@example.org", message=message)
    console = watch_console(page)
    await sign_in(page, site, AGENT_EMAIL)
    await page.goto(inbox_url(site, application))
    await expect(page.get_by_text("x select")).to_be_visible()

    await page.keyboard.press("j")  # the newest thread
    async with page.expect_navigation():
        await page.keyboard.press("i")  # assigned to me at once
    await expect(page.get_by_role("status")).to_have_text("1 thread assigned to you.")

    await page.keyboard.press("j")
    await page.keyboard.press("j")  # the second newest
    await page.keyboard.press("a")  # the picker
    dialog = page.get_by_role("dialog", name="Assign the thread")
    await expect(dialog).to_be_visible()
    await dialog.get_by_label("Assign to").select_option(label="Abe Agent (me)")
    async with page.expect_navigation():
        await dialog.get_by_role("button", name="Assign").click()
    await expect(page.get_by_role("status")).to_have_text("1 thread assigned to you.")

    await mark_document(page)
    await page.get_by_label("Assignee").select_option("mine")
    rows = page.get_by_role("region", name="Feedback threads").get_by_role("listitem")
    await expect(rows).to_have_count(2)
    assert await same_document(page)  # the filter swapped the results in
    await expect(rows.filter(has_text="Newest: dark mode please.")).to_have_count(1)
    await expect(rows.filter(has_text="Middle: the export is slow.")).to_have_count(1)
    mine = site.api_get(agent_token, f"/applications/{application['id']}/feedback?assignee=me")["data"]
    assert sorted(thread["message"] for thread in mine) == [
        "Middle: the export is slow.",
        "Newest: dark mode please.",
    ]
    assert {thread["assignee"]["email"] for thread in mine} == {AGENT_EMAIL}

    # On a thread's page, a focuses the assignee picker and i gives it to the agent.
    await page.goto(inbox_url(site, application, "?assignee=unassigned"))
    await rows.first.get_by_role("link").click()
    await expect(page.get_by_text("Unassigned")).to_be_visible()
    await page.keyboard.press("i")
    await expect(page.locator("#thread-assignee").get_by_text("Abe Agent", exact=True)).to_be_visible()
    await page.keyboard.press("a")
    await expect(page.get_by_label("Assign to a")).to_be_focused()
    assert csp_violations(console) == [], console
