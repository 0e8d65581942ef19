"""Organization roles in a real browser: an owner invites and promotes members through htmx, an
agent accepts, sees the members without the owner's controls and leaves. Effects are read back
through the API."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Dialog, expect

from tests.browser.conftest import (
    PASSWORD,
    csp_violations,
    mark_document,
    same_document,
    sign_in,
    watch_console,
)
from tests.browser.live import LiveSite

OWNER_EMAIL = "roles-owner@example.com"
AGENT_EMAIL = "roles-agent@example.com"


@pytest.fixture(scope="module")
def owner_token(site: LiveSite) -> str:
    return site.create_agent(OWNER_EMAIL, "Olga Owner", PASSWORD)


@pytest.fixture(scope="module")
def agent_token(site: LiveSite) -> str:
    return site.create_agent(AGENT_EMAIL, "Andy Agent", PASSWORD)


def roles_of(site: LiveSite, token: str) -> dict[str, str]:
    """The user's organizations by name, with the user's role in each (GET /organizations)."""
    return {o["name"]: o["role"] for o in site.api_get(token, "/organizations")["data"]}


async def test_owner_adds_an_agent_who_sees_no_controls_and_leaves(
    page, site, owner_token, agent_token, browser
):
    console = watch_console(page)
    await sign_in(page, site, OWNER_EMAIL)
    await page.goto(f"{site.base_url}/app/organizations")
    await page.get_by_label("Name").fill("Roles Ltd")
    await page.get_by_role("button", name="Create organization").click()
    await expect(page.get_by_role("heading", level=1, name="Roles Ltd")).to_be_visible()
    assert roles_of(site, owner_token) == {"Roles Ltd": "owner"}

    await mark_document(page)
    await page.get_by_label("Invite someone").fill(AGENT_EMAIL)
    await page.get_by_role("button", name="Invite", exact=True).click()
    await expect(page.get_by_role("status")).to_contain_text("Invitation for roles-agent@example.com made.")
    assert await same_document(page)
    link = await page.get_by_label("Invitation link").input_value()
    assert roles_of(site, agent_token) == {}

    agent_context = await browser.new_context(viewport={"width": 1280, "height": 900})
    agent_page = await agent_context.new_page()
    agent_console = watch_console(agent_page)
    await sign_in(agent_page, site, AGENT_EMAIL)
    await agent_page.goto(link)
    await agent_page.get_by_role("button", name="Join Roles Ltd").click()
    await expect(agent_page.get_by_role("heading", level=1, name="Roles Ltd")).to_be_visible()
    assert roles_of(site, agent_token) == {"Roles Ltd": "agent"}
    members = agent_page.locator("#members")
    await expect(members.get_by_text("Olga Owner")).to_be_visible()
    await expect(members.get_by_text("Owner", exact=True)).to_be_visible()
    await expect(agent_page.get_by_label("Invite someone")).to_have_count(0)
    await expect(
        agent_page.get_by_role("button", name=re.compile("^(Remove|Make owner|Make agent)"))
    ).to_have_count(0)

    async def accept(dialog: Dialog) -> None:
        await dialog.accept()

    agent_page.on("dialog", accept)
    await agent_page.get_by_role("button", name="Leave").click()
    await agent_page.wait_for_url(f"{site.base_url}/app/organizations")
    await expect(agent_page.get_by_text("Roles Ltd")).to_have_count(0)
    assert roles_of(site, agent_token) == {}
    assert not csp_violations(agent_console), agent_console
    await agent_context.close()
    assert not csp_violations(console), console


async def test_owner_promotes_a_member_and_the_last_owner_cannot_leave(page, site, owner_token, agent_token):
    site.cli("org", "create", "--name", "Promo Inc", "--owner", OWNER_EMAIL, "--member", AGENT_EMAIL)
    organization = next(
        o for o in site.api_get(owner_token, "/organizations")["data"] if o["name"] == "Promo Inc"
    )
    console = watch_console(page)
    await sign_in(page, site, OWNER_EMAIL)
    await page.goto(f"{site.base_url}/app/organizations/{organization['id']}")
    await expect(page.get_by_role("button", name="Leave")).to_have_count(0)
    await expect(page.get_by_text("make another member an owner before you leave")).to_be_visible()

    await mark_document(page)
    await page.get_by_role("button", name="Make owner Andy Agent").click()
    await expect(page.get_by_role("status")).to_have_text(
        "Andy Agent (roles-agent@example.com) is an owner now."
    )
    assert await same_document(page)
    assert roles_of(site, agent_token)["Promo Inc"] == "owner"

    await page.get_by_role("button", name="Make agent Olga Owner").click()
    await expect(page.get_by_role("status")).to_have_text(
        "Olga Owner (roles-owner@example.com) is an agent now."
    )
    await expect(page.get_by_label("Invite someone")).to_have_count(0)
    assert roles_of(site, owner_token)["Promo Inc"] == "agent"
    assert not csp_violations(console), console
