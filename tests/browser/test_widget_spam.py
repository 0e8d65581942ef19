"""Spam controls through the real widget, embedded in a page of another origin: the allowed
origins, the honeypot and the minimum fill time (the live site here keeps the 2 s default)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.browser.conftest import PASSWORD
from tests.browser.live import LiveSite, live_site
from tests.browser.test_widget import host

__all__ = ["host"]  # the customer's site, a fixture of the widget's tests

MINIMUM_SECONDS = 2


@pytest.fixture(scope="module")
def strict_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    """A live site with the default minimum fill time (the shared one has none)."""
    with live_site(
        tmp_path_factory.mktemp("strict") / "data", EARFUL_MIN_FILL_SECONDS=str(MINIMUM_SECONDS)
    ) as running:
        yield running


@pytest.fixture(scope="module")
def token(strict_site: LiveSite) -> str:
    return strict_site.create_agent("spam-owner@example.com", "Sam Spam", PASSWORD)


@pytest.fixture
def embed(host: tuple[str, Path], strict_site: LiveSite) -> Callable[[str, dict[str, Any]], str]:
    """Write a page of the customer's site embedding an application's widget; returns its address."""
    url, folder = host

    def write(name: str, application: dict[str, Any]) -> str:
        (folder / name).write_text(
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>'
            "<body><h1>Shop</h1>"
            f'<script src="{strict_site.base_url}/widget.js" data-app="{application["id"]}" '
            f'data-key="{application["keys"]["javascript"]}" async></script></body></html>'
        )
        return f"{url}/{name}"

    return write


def stored(site: LiveSite, token: str, application: dict[str, Any]) -> list[str]:
    threads = site.api_get(token, f"/applications/{application['id']}/feedback")["data"]
    return sorted(thread["email"] for thread in threads)


async def fill_and_send(page: Page, email: str, wait: float = 0, trap: str | None = None) -> None:
    await page.get_by_role("button", name="Feedback").click()
    dialog = page.get_by_role("dialog", name="Send feedback")
    await dialog.get_by_label("Message").fill("The checkout button does nothing.")
    await dialog.get_by_label("E-mail").fill(email)
    if trap is not None:  # as a bot does: every input of the form, seen or not
        await page.locator("earful-widget input[name=website]").fill(trap, force=True)
    await asyncio.sleep(wait)
    await dialog.get_by_role("button", name="Send").click()


async def test_the_widget_works_from_an_allowed_origin_only(page, strict_site, token, host, embed):
    origin, _ = host
    allowed = strict_site.create_application(token, name="Locked shop", allowed_origins=origin)
    elsewhere = strict_site.create_application(
        token, name="Other shop", allowed_origins="https://shop.example.com"
    )

    await page.goto(embed("locked.html", elsewhere))
    await fill_and_send(page, "copied@example.com", wait=MINIMUM_SECONDS + 0.2)
    await expect(page.get_by_role("alert")).to_have_text("Origin not allowed")
    assert stored(strict_site, token, elsewhere) == []

    await page.goto(embed("allowed.html", allowed))
    await fill_and_send(page, "jane@example.com", wait=MINIMUM_SECONDS + 0.2)
    await expect(page.get_by_role("status")).to_have_text("Feedback sent!")
    assert stored(strict_site, token, allowed) == ["jane@example.com"]


async def test_the_honeypot_is_out_of_sight_and_out_of_the_tab_order(page, strict_site, token, embed):
    application = strict_site.create_application(token, name="Honeypot shop")
    await page.goto(embed("hidden.html", application))
    await page.get_by_role("button", name="Feedback").click()
    trap = page.locator("earful-widget input[name=website]")

    assert await trap.get_attribute("tabindex") == "-1"
    assert await trap.get_attribute("autocomplete") == "off"
    assert await trap.evaluate("(t) => t.parentElement.getAttribute('aria-hidden')") == "true"
    box = await trap.bounding_box()
    assert box is None or box["x"] + box["width"] <= 0
    await expect(page.get_by_role("textbox", name="Website")).to_have_count(0)


async def test_a_bot_filling_the_honeypot_sees_the_success_and_nothing_is_stored(
    page, strict_site, token, embed
):
    application = strict_site.create_application(token, name="Bot shop")
    await page.goto(embed("bot.html", application))
    sent: list[str] = []
    page.on(
        "request", lambda request: sent.append(request.post_data or "") if "/submit" in request.url else None
    )

    await fill_and_send(page, "bot@spam.example", wait=MINIMUM_SECONDS + 0.2, trap="http://cheap.example")

    await expect(page.get_by_role("status")).to_have_text("Feedback sent!")
    assert '"honeypot":"http://cheap.example"' in sent[0]
    assert stored(strict_site, token, application) == []


async def test_a_form_sent_too_soon_sees_the_success_and_nothing_is_stored(page, strict_site, token, embed):
    application = strict_site.create_application(token, name="Hasty shop")
    await page.goto(embed("hasty.html", application))

    await fill_and_send(page, "hasty@spam.example")

    await expect(page.get_by_role("status")).to_have_text("Feedback sent!")
    assert stored(strict_site, token, application) == []


async def test_a_person_who_takes_their_time_is_stored(page, strict_site, token, embed):
    application = strict_site.create_application(token, name="Human shop")
    await page.goto(embed("human.html", application))
    sent: list[str] = []
    page.on(
        "request", lambda request: sent.append(request.post_data or "") if "/submit" in request.url else None
    )

    await fill_and_send(page, "jane@example.com", wait=MINIMUM_SECONDS + 0.2)

    await expect(page.get_by_role("status")).to_have_text("Feedback sent!")
    assert '"honeypot":""' in sent[0] and '"fill_time_ms":' in sent[0]
    assert stored(strict_site, token, application) == ["jane@example.com"]
