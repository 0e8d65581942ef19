"""An agent's day in a real browser: the inbox, its filters, a thread, replies, notes, archive, tags.

Every action is checked twice: on the page, and in what the management API then returns.
"""

from __future__ import annotations

import itertools
import re
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
from tests.browser.live import Agent, LiveSite

TEAM_EMAIL = "inbox-team@example.com"
FREE_EMAIL = "inbox-free@example.com"

SEEDED = [
    # name, e-mail, message, tags
    ("Maya Patel", "maya@northwind.io", "I love the new dashboard, it is wonderful and great!", "dashboard"),
    ("Jonas Weber", "jonas@weber.de", "The export is terrible and awful, it crashes every time.", "export"),
    ("Priya Nair", "priya@acme.co", "Where can I change my billing address?", ""),
]

_serial = itertools.count(1)


def threads_of(site: LiveSite, agent: Agent, archived: bool = False) -> list[dict[str, Any]]:
    """The application's threads as the management API lists them."""
    path = f"/applications/{agent.app_id}/feedback?limit=100&archived={'true' if archived else 'false'}"
    return site.api_get(agent.token, path)["data"]


def thread_of(site: LiveSite, agent: Agent, feedback_id: int) -> dict[str, Any]:
    """One thread as the management API shows it."""
    return site.api_get(agent.token, f"/applications/{agent.app_id}/feedback/{feedback_id}")["data"]


def new_thread(site: LiveSite, agent: Agent, message: str | None = None) -> tuple[int, str]:
    """Submit a fresh thread from a new customer; returns its id and the customer's name."""
    number = next(_serial)
    name = f"Customer Number{number}"
    text = message or f"Question number {number}: how do I export my invoices?"
    site.submit(agent.application, name=name, email=f"customer{number}@example.org", message=text)
    found = next(t for t in threads_of(site, agent) if t["name"] == name)
    return found["id"], name


def thread_url(site: LiveSite, agent: Agent, feedback_id: int) -> str:
    return f"{site.base_url}/app/applications/{agent.app_id}/feedback/{feedback_id}"


def inbox_url(site: LiveSite, agent: Agent) -> str:
    return f"{site.base_url}/app/applications/{agent.app_id}/feedback"


@pytest.fixture(scope="module")
def team(site: LiveSite) -> Agent:
    """An agent on the Team plan (internal notes) with an application that tests add threads to."""
    token = site.create_agent(TEAM_EMAIL, "Terry Team", PASSWORD, plan="team")
    application = site.create_application(token, name="Acme Support", url="https://support.acme.test")
    return Agent(TEAM_EMAIL, token, application)


@pytest.fixture(scope="module")
def seeded(site: LiveSite, team: Agent) -> Agent:
    """The Team agent's second application, with three known threads that no test changes."""
    application = site.create_application(team.token, name="Acme Shop", url="https://shop.acme.test")
    agent = Agent(team.email, team.token, application)
    for name, email, message, tags in SEEDED:
        site.submit(application, name=name, email=email, message=message, tags=tags)
    return agent


@pytest.fixture(scope="module")
def free(site: LiveSite) -> Agent:
    """An agent on the Free plan: no internal notes."""
    token = site.create_agent(FREE_EMAIL, "Fran Free", PASSWORD)
    application = site.create_application(token, name="Free Corner")
    return Agent(FREE_EMAIL, token, application)


async def visible_messages(page: Page) -> list[str]:
    rows = page.get_by_role("region", name="Feedback threads").get_by_role("listitem")
    return sorted(await rows.locator(".thread-row__excerpt").all_inner_texts())


async def expect_listed(page: Page, messages: set[str]) -> None:
    """The inbox shows exactly these threads (waits for htmx to swap the results)."""
    excerpts = page.get_by_role("region", name="Feedback threads").locator(".thread-row__excerpt")
    await expect(excerpts).to_have_count(len(messages))
    for message in messages:
        await expect(excerpts.filter(has_text=message)).to_have_count(1)


# --- the inbox -----------------------------------------------------------------------------------


async def test_agent_opens_the_inbox_from_the_applications_list(page, site, seeded):
    await sign_in(page, site, seeded.email)
    await page.goto(f"{site.base_url}/app/applications")

    await page.get_by_role("link", name="Acme Shop", exact=True).click()

    await expect(page.get_by_role("heading", level=1, name="Acme Shop")).to_be_visible()
    await expect(page).to_have_url(inbox_url(site, seeded))
    await expect_listed(page, {message for _, _, message, _ in SEEDED})
    api = {t["message"] for t in threads_of(site, seeded)}
    assert set(await visible_messages(page)) == api
    # Newest first, each with its sender, sentiment and tags.
    first = page.get_by_role("region", name="Feedback threads").get_by_role("listitem").first
    await expect(first).to_contain_text("Priya Nair")
    await expect(first).to_contain_text("priya@acme.co")
    await expect(first).to_contain_text("Awaiting reply")
    maya = page.get_by_role("listitem").filter(has_text="Maya Patel")
    await expect(maya).to_contain_text("Positive")
    await expect(maya).to_contain_text("dashboard")


async def test_filters_narrow_the_inbox_by_sentiment_tag_and_search(page, site, seeded):
    console = watch_console(page)
    await sign_in(page, site, seeded.email)
    await page.goto(inbox_url(site, seeded))
    await mark_document(page)
    api = threads_of(site, seeded)

    await page.get_by_label("Sentiment").select_option("negative")
    await expect_listed(page, {t["message"] for t in api if t["sentiment"] == "negative"})
    await expect(page).to_have_url(re.compile(r"sentiment=negative"))

    await page.get_by_label("Sentiment").select_option("")
    await expect_listed(page, {t["message"] for t in api})
    await page.get_by_label("Tag", exact=True).fill("dash")
    await page.locator('[data-tag-pick="dashboard"]').click()
    await expect_listed(page, {t["message"] for t in api if "dashboard" in t["tags"]})
    await expect(page).to_have_url(re.compile(r"tag=dashboard"))

    await page.get_by_label("Tag", exact=True).fill("")
    await page.get_by_label("Tag", exact=True).press("Enter")
    await expect_listed(page, {t["message"] for t in api})
    search = page.get_by_role("searchbox", name="Search messages, names and e-mail addresses")
    await search.fill("billing")
    await expect_listed(page, {t["message"] for t in api if "billing" in t["message"]})
    await search.fill("jonas@weber")
    await expect_listed(page, {t["message"] for t in api if t["email"] == "jonas@weber.de"})
    await search.fill("no such words anywhere")
    await expect(page.get_by_text("No feedback matches these filters.")).to_be_visible()

    assert await same_document(page), "the filters should swap the results with htmx"
    assert not csp_violations(console), console


async def test_inbox_is_usable_from_the_keyboard(page, site, seeded):
    await sign_in(page, site, seeded.email)
    await page.goto(inbox_url(site, seeded))
    search = page.get_by_role("searchbox", name="Search messages, names and e-mail addresses")

    await page.keyboard.press("/")
    await expect(search).to_be_focused()
    await search.evaluate("element => element.blur()")
    await page.keyboard.press("j")
    await page.keyboard.press("j")
    await page.keyboard.press("o")

    newest_first = sorted(threads_of(site, seeded), key=lambda t: t["id"], reverse=True)
    await expect(page).to_have_url(thread_url(site, seeded, newest_first[1]["id"]))
    await expect(page.get_by_role("heading", level=1)).to_have_text(newest_first[1]["name"])


# --- the thread page -----------------------------------------------------------------------------


async def test_agent_opens_a_thread_from_the_inbox(page, site, team):
    feedback_id, name = new_thread(site, team, "Can I pay by bank transfer instead of card?")
    await sign_in(page, site, team.email)
    await page.goto(inbox_url(site, team))

    await page.get_by_role("link", name=re.compile(name)).click()

    await expect(page).to_have_url(thread_url(site, team, feedback_id))
    await expect(page.get_by_role("heading", level=1, name=name)).to_be_visible()
    await expect(page.get_by_text("Can I pay by bank transfer instead of card?")).to_be_visible()
    await expect(page.get_by_text("No replies yet.")).to_be_visible()
    await page.get_by_role("link", name="← Back to inbox").click()
    await expect(page).to_have_url(inbox_url(site, team))


async def test_agent_replies_to_the_customer(page, site, team):
    feedback_id, _ = new_thread(site, team)
    console = watch_console(page)
    await sign_in(page, site, team.email)
    await page.goto(thread_url(site, team, feedback_id))
    await mark_document(page)

    await page.get_by_role("textbox", name="Message").fill("Go to Billing, then Export. Cheers!")
    await page.get_by_role("button", name="Send").click()

    reply = page.locator(".replies > li").filter(has_text="Go to Billing, then Export. Cheers!")
    await expect(reply).to_contain_text("Agent reply")
    await expect(reply).to_contain_text("Terry Team")
    await expect(page.get_by_role("textbox", name="Message")).to_have_value("")
    await expect(page.locator("#thread-status")).to_contain_text("First reply after")
    assert await same_document(page), "the reply should be swapped in by htmx"
    stored = thread_of(site, team, feedback_id)
    assert [(r["type"], r["message"], r["email"]) for r in stored["replies"]] == [
        ("reply", "Go to Billing, then Export. Cheers!", TEAM_EMAIL)
    ]
    assert stored["first_reply_time"] is not None
    assert not csp_violations(console), console


async def test_agent_adds_an_internal_note(page, site, team):
    feedback_id, _ = new_thread(site, team)
    console = watch_console(page)
    await sign_in(page, site, team.email)
    await page.goto(thread_url(site, team, feedback_id))

    await page.get_by_role("radio", name="Internal note").check()
    await page.get_by_role("textbox", name="Message").fill("Customer is on the legacy invoice system.")
    await page.get_by_role("button", name="Send").click()

    note = page.locator(".replies > li").filter(has_text="Customer is on the legacy invoice system.")
    await expect(note).to_contain_text("Internal note")
    await expect(note).to_have_class(re.compile(r"\breply--note\b"))
    stored = thread_of(site, team, feedback_id)
    assert [(r["type"], r["message"]) for r in stored["replies"]] == [
        ("note", "Customer is on the legacy invoice system.")
    ]
    assert stored["first_reply_time"] is None, "a note is not a reply to the customer"
    assert not csp_violations(console), console


async def test_internal_note_is_disabled_with_the_reason_on_the_free_plan(page, site, free):
    feedback_id, _ = new_thread(site, free)
    await sign_in(page, site, free.email)
    await page.goto(thread_url(site, free, feedback_id))

    note = page.get_by_role("radio", name="Internal note")
    await expect(note).to_be_disabled()
    await expect(note).to_have_accessible_description("Internal notes are part of the Team plan.")
    await expect(page.get_by_text("Internal notes are part of the Team plan.")).to_be_visible()
    await expect(page.get_by_role("radio", name="Reply to customer")).to_be_checked()

    # Forcing the disabled option through is refused by the server, and nothing is stored.
    await note.evaluate("radio => { radio.disabled = false; radio.checked = true; }")
    await page.get_by_role("textbox", name="Message").fill("Sneaky note")
    await page.get_by_role("button", name="Send").click()
    await expect(page.get_by_role("alert")).to_have_text("Your plan does not include internal notes")
    assert thread_of(site, free, feedback_id)["replies"] == []


async def test_agent_archives_a_thread_and_finds_it_under_archived(page, site, team):
    feedback_id, name = new_thread(site, team)
    console = watch_console(page)
    await sign_in(page, site, team.email)
    await page.goto(thread_url(site, team, feedback_id))
    await mark_document(page)

    await page.get_by_role("button", name="Archive").click()

    status = page.get_by_role("region", name="Status")
    await expect(status.get_by_role("button", name="Move back to inbox")).to_be_visible()
    await expect(status).to_contain_text("Archived")
    assert await same_document(page), "archiving should be swapped in by htmx"
    assert thread_of(site, team, feedback_id)["archived"] is True

    await page.get_by_role("link", name="← Back to inbox").click()
    threads = page.get_by_role("region", name="Feedback threads")
    await expect(page.get_by_role("heading", level=1, name="Acme Support")).to_be_visible()
    await expect(threads.get_by_role("link", name=re.compile(name))).to_have_count(0)
    await page.get_by_role("link", name=re.compile(r"^Archived")).click()
    await expect(page).to_have_url(re.compile(r"status=archived"))
    await threads.get_by_role("link", name=re.compile(name)).click()

    await page.get_by_role("button", name="Move back to inbox").click()
    await expect(page.get_by_role("button", name="Archive")).to_be_visible()
    assert thread_of(site, team, feedback_id)["archived"] is False
    assert not csp_violations(console), console


async def test_agent_adds_a_tag_and_filters_the_inbox_by_it(page, site, team):
    feedback_id, name = new_thread(site, team)
    console = watch_console(page)
    await sign_in(page, site, team.email)
    await page.goto(thread_url(site, team, feedback_id))
    await mark_document(page)

    await page.get_by_label("Add a tag").fill("vip-customer")
    await page.get_by_role("button", name="Add", exact=True).click()

    tags = page.get_by_role("region", name="Tags")
    await expect(tags.locator(".tag")).to_have_text(["vip-customer"])
    await expect(tags.get_by_role("button", name="Remove tag vip-customer")).to_be_visible()
    await expect(page.get_by_label("Add a tag")).to_have_value("")
    assert await same_document(page), "tagging should be swapped in by htmx"
    assert thread_of(site, team, feedback_id)["tags"] == ["vip-customer"]
    api_tags = site.api_get(team.token, f"/applications/{team.app_id}/tags")["data"]
    assert [(t["name"], t["feedback_count"]) for t in api_tags] == [("vip-customer", 1)]

    await page.goto(inbox_url(site, team))
    await page.get_by_label("Tag", exact=True).fill("vip")
    await page.locator('[data-tag-pick="vip-customer"]').click()
    await expect(page).to_have_url(re.compile(r"tag=vip-customer"))
    rows = page.get_by_role("region", name="Feedback threads").get_by_role("listitem")
    await expect(rows).to_have_count(1)
    await expect(rows).to_contain_text(name)

    await rows.get_by_role("link").click()
    await page.get_by_role("button", name="Remove tag vip-customer").click()
    await expect(page.get_by_role("region", name="Tags")).to_contain_text("No tags yet.")
    assert thread_of(site, team, feedback_id)["tags"] == []
    assert not csp_violations(console), console


async def test_feedback_markup_renders_as_inert_text(page, site, team):
    hostile = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b>bold</b>'
    feedback_id, _ = new_thread(site, team, hostile)
    await sign_in(page, site, team.email)

    for url in (inbox_url(site, team), thread_url(site, team, feedback_id)):
        await page.goto(url)
        await expect(page.get_by_text(hostile).first).to_be_visible()
        assert await page.evaluate("typeof window.pwned") == "undefined"
        assert await page.locator("main b, main img[src=x]").count() == 0


# --- without JavaScript --------------------------------------------------------------------------


async def test_reply_tag_archive_and_filters_work_without_javascript(browser: Browser, site, team):
    feedback_id, name = new_thread(site, team)
    context = await browser.new_context(java_script_enabled=False)
    page = await context.new_page()
    try:
        await sign_in(page, site, team.email)
        await page.goto(thread_url(site, team, feedback_id))

        await page.get_by_role("textbox", name="Message").fill("Answered without any script.")
        await page.get_by_role("button", name="Send").click()
        await expect(page).to_have_url(thread_url(site, team, feedback_id))
        await expect(page.locator(".replies > li")).to_contain_text(["Answered without any script."])

        await page.get_by_label("Add a tag").fill("no-js")
        await page.get_by_role("button", name="Add", exact=True).click()
        await expect(page.get_by_role("region", name="Tags").locator(".tag")).to_have_text(["no-js"])

        await page.get_by_role("button", name="Archive").click()
        await expect(page.get_by_role("button", name="Move back to inbox")).to_be_visible()

        stored = thread_of(site, team, feedback_id)
        assert [r["message"] for r in stored["replies"]] == ["Answered without any script."]
        assert stored["tags"] == ["no-js"]
        assert stored["archived"] is True

        await page.goto(inbox_url(site, team) + "?status=archived")
        await page.get_by_label("Tag", exact=True).fill("no-js")
        await page.get_by_role("button", name="Filter").click()
        await expect(page).to_have_url(re.compile(r"tag=no-js"))
        rows = page.get_by_role("region", name="Feedback threads").get_by_role("listitem")
        await expect(rows).to_have_count(1)
        await expect(rows).to_contain_text(name)
    finally:
        await context.close()


async def test_the_inbox_tag_filter_finds_a_tag_among_many_as_the_agent_types(page, site, team):
    application = site.create_application(team.token, name="Many Tags")
    agent = Agent(team.email, team.token, application)
    for batch in range(2):  # 20 tags; a submit takes 10 at most
        names = ",".join(f"topic-{batch}{digit}" for digit in range(10))
        site.submit(
            application, email=f"tagger{batch}@example.org", message=f"Batch number {batch}", tags=names
        )
    site.submit(application, email="untagged@example.org", message="Batch without tags")
    console = watch_console(page)
    await sign_in(page, site, team.email)
    await page.goto(inbox_url(site, agent))
    await mark_document(page)

    await page.get_by_label("Tag", exact=True).fill("topic-1")
    matches = page.locator("[data-tag-pick]")
    await expect(matches).to_have_count(10)  # topic-10 ... topic-19
    await page.locator('[data-tag-pick="topic-17"]').click()

    await expect(page).to_have_url(re.compile(r"tag=topic-17"))
    await expect_listed(page, {"Batch number 1"})
    await expect(page.get_by_label("Tag", exact=True)).to_have_value("topic-17")
    assert await same_document(page), "the filter should be swapped in by htmx"
    assert not csp_violations(console), console
