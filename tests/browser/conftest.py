"""Browser tests: Debian's Chromium driven by Playwright against a live ``earful serve`` (SQLite).

They run once (not per database backend): what they check is what only a browser shows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from tests.browser.live import CHROMIUM, CHROMIUM_ARGS, LiveSite, live_site

PASSWORD = "browser-test-password"

# How long an expectation waits for the page to get there. Playwright's 5 s ran out once on a
# loaded two-core machine, the suite's other worker busy beside Chromium: the API reference's
# heading appeared just after it, while Swagger UI's bundle (1.7 MB of script) was still being
# run. A page that never gets there still fails, later.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    with live_site(tmp_path_factory.mktemp("live") / "data") as running:
        yield running


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        await launched.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A fresh browser context (no cookies) per test."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    opened = await context.new_page()
    yield opened
    await context.close()


async def sign_in(page: Page, site: LiveSite, email: str, password: str = PASSWORD) -> None:
    """Sign in through the real form."""
    await page.goto(f"{site.base_url}/app/login")
    await page.get_by_label("E-mail").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(lambda url: "/app/login" not in url)


def watch_console(page: Page) -> list[str]:
    """Collect the page's console messages and uncaught errors from now on."""
    messages: list[str] = []
    page.on("console", lambda message: messages.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: messages.append(f"pageerror: {error}"))
    return messages


def csp_violations(messages: list[str]) -> list[str]:
    """The console messages that report a Content-Security-Policy violation."""
    return [message for message in messages if "Content Security Policy" in message]


async def mark_document(page: Page) -> None:
    """Tag the current document, so that a later check tells an htmx swap from a page load."""
    await page.evaluate("window.__earfulMark = 'same document'")


async def same_document(page: Page) -> bool:
    """Whether the document tagged by mark_document is still the one shown (no navigation)."""
    return await page.evaluate("window.__earfulMark === 'same document'")
