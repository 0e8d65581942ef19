"""Live pages in a real browser: a thread submitted through the capture API appears in an open inbox
within 2 s without a reload, on SQLite (one process) and on PostgreSQL (two worker processes,
through LISTEN/NOTIFY); a reply appears in an open thread page and "is writing" shows to another
agent; a reconnect (the server reloading its workers) neither loses nor duplicates a row.

Each database gets a server of its own: the reload test signals it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import time
from collections.abc import Iterator

import httpx
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
from tests.browser.live import Agent, LiveSite, live_site
from tests.conftest import POSTGRES_ENV, create_postgres_database, drop_postgres_database

APPEARS_WITHIN_MS = 2000
_serial = itertools.count(1)

# Counts the streams' "ready" events: one per connect and reconnect.
COUNT_READY = "window.__ready = 0; document.addEventListener('earful:ready', () => { window.__ready += 1; });"


@pytest.fixture(scope="module")
def sqlite_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    with live_site(tmp_path_factory.mktemp("live-sqlite") / "data") as running:
        yield running


@pytest.fixture(scope="module")
def postgres_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    """Two worker processes on a throwaway PostgreSQL database: a page's stream and a submit
    are often served by different processes, which only LISTEN/NOTIFY connects."""
    if not os.environ.get(POSTGRES_ENV):
        pytest.skip(f"PostgreSQL browser test skipped: {POSTGRES_ENV} is not set")
    url = asyncio.run(create_postgres_database("earful_live_browser"))
    try:
        with live_site(
            tmp_path_factory.mktemp("live-postgres") / "data", workers=2, EARFUL_DATABASE_URL=url
        ) as running:
            yield running
    finally:
        asyncio.run(drop_postgres_database(url))


@pytest.fixture(params=["sqlite", "postgres"])
def any_site(request: pytest.FixtureRequest) -> LiveSite:
    return request.getfixturevalue(f"{request.param}_site")


def make_agent(site: LiveSite, name: str = "Live Agent") -> Agent:
    email = f"live{next(_serial)}@example.com"
    token = site.create_agent(email, name, PASSWORD, plan="team")
    application = site.create_application(token, name=f"Live {next(_serial)}")
    return Agent(email, token, application)


def submit_on_a_new_connection(site: LiveSite, agent: Agent, message: str) -> None:
    """A capture submit on a connection of its own, so that any worker may take it."""
    with httpx.Client(timeout=30) as http:
        response = http.post(
            f"{site.base_url}/applications/{agent.application['id']}/submit",
            params={"key": agent.application["keys"]["javascript"]},
            json={"email": f"customer{next(_serial)}@example.org", "name": "Rita Live", "message": message},
        )
    assert response.status_code == 201, response.text


async def connected(page: Page, times: int, seconds: float) -> None:
    """Wait until the page's stream has connected ``times`` times (the CSP forbids the eval that
    wait_for_function needs)."""
    deadline = time.monotonic() + seconds
    while await page.evaluate("window.__ready") < times:
        assert time.monotonic() < deadline, f"the stream did not connect {times} times in {seconds} s"
        await asyncio.sleep(0.1)


async def open_live(page: Page, site: LiveSite, agent: Agent, path: str) -> None:
    """Sign in, open ``path`` and wait until its stream is connected."""
    await page.add_init_script(COUNT_READY)
    await sign_in(page, site, agent.email)
    await page.goto(site.base_url + path)
    await connected(page, 1, 10)
    await mark_document(page)


async def test_a_submitted_thread_appears_in_an_open_inbox_within_two_seconds(page: Page, any_site: LiveSite):
    site = any_site
    agent = make_agent(site)
    site.submit(agent.application, email="first@example.org", message="Already here before the page opened.")
    console = watch_console(page)
    await open_live(page, site, agent, agent.inbox)
    rows = page.locator("li.thread-row")
    await expect(rows).to_have_count(1)

    for number in range(3):
        message = f"Live thread number {number} about the export button"
        submit_on_a_new_connection(site, agent, message)
        submitted = time.monotonic()
        await expect(page.locator("li.thread-row", has_text=message)).to_be_visible(timeout=APPEARS_WITHIN_MS)
        assert time.monotonic() - submitted < APPEARS_WITHIN_MS / 1000

    await expect(rows).to_have_count(4)
    assert await rows.first.get_by_text("Live thread number 2").is_visible()  # newest first
    assert await same_document(page)
    assert csp_violations(console) == []


async def test_an_empty_inbox_shows_its_first_thread_without_a_reload(page: Page, sqlite_site: LiveSite):
    agent = make_agent(sqlite_site)
    await open_live(page, sqlite_site, agent, agent.inbox)
    await expect(page.get_by_text("Inbox zero.")).to_be_visible()

    submit_on_a_new_connection(sqlite_site, agent, "The very first feedback")

    await expect(page.locator("li.thread-row", has_text="The very first feedback")).to_be_visible(
        timeout=APPEARS_WITHIN_MS
    )
    assert await same_document(page)


async def test_a_filtered_inbox_adds_only_the_threads_its_filter_shows(page: Page, sqlite_site: LiveSite):
    agent = make_agent(sqlite_site)
    sqlite_site.submit(agent.application, email="a@example.org", message="Invoices are wrong")
    await open_live(page, sqlite_site, agent, agent.inbox + "?q=invoice")

    submit_on_a_new_connection(sqlite_site, agent, "Nothing to do with it")
    submit_on_a_new_connection(sqlite_site, agent, "Another invoice question")

    await expect(page.locator("li.thread-row", has_text="Another invoice question")).to_be_visible(
        timeout=APPEARS_WITHIN_MS
    )
    await expect(page.locator("li.thread-row")).to_have_count(2)


async def test_a_reconnect_neither_loses_nor_duplicates_rows(page: Page, sqlite_site: LiveSite):
    agent = make_agent(sqlite_site)
    await open_live(page, sqlite_site, agent, agent.inbox)
    submit_on_a_new_connection(sqlite_site, agent, "Before the reload")
    await expect(page.locator("li.thread-row", has_text="Before the reload")).to_be_visible(
        timeout=APPEARS_WITHIN_MS
    )

    assert sqlite_site.server is not None
    os.kill(sqlite_site.server.pid, signal.SIGHUP)  # new workers; the old ones end their streams
    submit_on_a_new_connection(sqlite_site, agent, "During the reload")
    await connected(page, 2, 20)
    submit_on_a_new_connection(sqlite_site, agent, "After the reload")

    await expect(page.locator("li.thread-row", has_text="After the reload")).to_be_visible(
        timeout=APPEARS_WITHIN_MS
    )
    await expect(page.locator("li.thread-row", has_text="During the reload")).to_be_visible(
        timeout=APPEARS_WITHIN_MS
    )
    await expect(page.locator("li.thread-row")).to_have_count(3)
    # The same events again (as a second reconnect's catch-up would bring them) add nothing.
    ids = await page.locator("li.thread-row").evaluate_all("rows => rows.map(r => r.id.slice(7)).join(' ')")
    await page.evaluate(
        """ids => {
            const source = document.querySelector('[data-live=inbox]');
            source.dispatchEvent(new CustomEvent('earful:threads', {bubbles: true, detail: {data: ids}}));
            source.dispatchEvent(new CustomEvent('earful:ready', {bubbles: true}));
        }""",
        ids,
    )
    await page.wait_for_timeout(500)
    await expect(page.locator("li.thread-row")).to_have_count(3)
    assert await same_document(page)


async def test_a_reply_and_another_agents_typing_appear_on_an_open_thread(
    browser: Browser, any_site: LiveSite
):
    site = any_site
    ann = make_agent(site, name="Ann Writer")
    site.submit(ann.application, email="rita@example.org", name="Rita", message="Where is my refund?")
    thread = site.api_get(ann.token, f"/applications/{ann.application['id']}/feedback")["data"][0]
    bob_email = f"bob{next(_serial)}@example.com"
    bob_token = site.create_agent(bob_email, "Bob Reader", PASSWORD, plan="team")
    share_with(site, ann, bob_email)
    path = f"/app/applications/{ann.application['id']}/feedback/{thread['id']}"
    contexts = [await browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(2)]
    try:
        ann_page, bob_page = [await context.new_page() for context in contexts]
        await open_live(ann_page, site, ann, path)
        await open_live(bob_page, site, Agent(bob_email, bob_token, ann.application), path)

        site.reply(ann.token, ann.application["id"], thread["id"], "Your refund left today.")
        await expect(bob_page.locator("li.reply", has_text="Your refund left today.")).to_be_visible(
            timeout=APPEARS_WITHIN_MS
        )
        await expect(bob_page.locator("#conversation [data-live-count]")).to_have_text("1")

        await ann_page.locator("#reply-message").press_sequentially("Also, ")
        await expect(bob_page.locator("#typing-line")).to_have_text("Ann Writer is writing…", timeout=3000)
        await expect(ann_page.locator("#typing-line")).to_have_text("")
        await expect(bob_page.locator("#typing-line")).to_have_text("", timeout=10_000)  # it expires
        assert await same_document(bob_page)
    finally:
        for context in contexts:
            await context.close()


def share_with(site: LiveSite, owner: Agent, email: str) -> None:
    """An organization of the owner with the user as its agent, and the owner's application in it."""
    organization = json.loads(
        site.cli(
            "org", "create", "--name", f"Live Inc {next(_serial)}", "--owner", owner.email, "--member", email
        )
    )
    moved = site.http.put(
        f"{site.base_url}/applications/{owner.application['id']}",
        headers={"Authorization": f"Bearer {owner.token}"},
        data={"organization_id": str(organization["id"])},
    )
    moved.raise_for_status()
