"""The statistics page in a real browser, where only layout and scripts can go wrong."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from tests.browser.conftest import PASSWORD, sign_in
from tests.browser.live import LiveSite

EMAIL = "stats-owner@example.com"


@pytest.mark.parametrize("javascript", [True, False], ids=["with JavaScript", "without JavaScript"])
async def test_chart_on_a_phone_starts_at_the_latest_day(browser: Browser, site: LiveSite, javascript: bool):
    email = f"{'js' if javascript else 'nojs'}-{EMAIL}"
    token = site.create_agent(email, "Stella Stats", PASSWORD, plan="team")
    application = site.create_application(token, name="Phone Charts")
    site.submit(application, email="pat@example.com", message="The new export is great, thank you!")
    context = await browser.new_context(
        viewport={"width": 375, "height": 700}, is_mobile=True, java_script_enabled=javascript
    )
    page = await context.new_page()
    try:
        await sign_in(page, site, email)
        await page.goto(f"{site.base_url}/app/applications/{application['id']}/stats?period=90")
        chart = page.locator(".chart-scroll")
        await expect(chart).to_be_visible()

        box = await chart.bounding_box()
        sizes = await chart.evaluate("el => [el.clientWidth, el.scrollWidth]")
        bars = page.locator(".chart__bar .chart__hit")
        newest, oldest = await bars.last.bounding_box(), await bars.first.bounding_box()
        width = await page.evaluate("document.documentElement.scrollWidth")
    finally:
        await context.close()

    visible, total = sizes
    assert total > visible, "the 90-day chart is wider than a phone screen"
    assert box is not None and newest is not None and oldest is not None
    assert box["x"] <= newest["x"] and newest["x"] + newest["width"] <= box["x"] + box["width"] + 1
    assert oldest["x"] + oldest["width"] < box["x"], "the oldest day is scrolled out of view"
    assert width <= 375
