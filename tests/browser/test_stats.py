"""The statistics page in a real browser, where only layout and scripts can go wrong."""

from __future__ import annotations

from playwright.async_api import Browser, expect

from tests.browser.conftest import PASSWORD, sign_in
from tests.browser.live import LiveSite

EMAIL = "stats-owner@example.com"


async def test_chart_on_a_phone_starts_at_the_latest_day(browser: Browser, site: LiveSite):
    token = site.create_agent(EMAIL, "Stella Stats", PASSWORD, plan="team")
    application = site.create_application(token, name="Phone Charts")
    site.submit(application, email="pat@example.com", message="The new export is great, thank you!")
    context = await browser.new_context(viewport={"width": 375, "height": 700}, is_mobile=True)
    page = await context.new_page()
    try:
        await sign_in(page, site, EMAIL)
        await page.goto(f"{site.base_url}/app/applications/{application['id']}/stats?period=90")
        chart = page.locator(".chart-scroll")
        await expect(chart).to_be_visible()

        scroll = await chart.evaluate("el => [el.scrollLeft, el.clientWidth, el.scrollWidth]")
    finally:
        await context.close()

    left, visible, total = scroll
    assert total > visible, "the 90-day chart is wider than a phone screen"
    assert left + visible >= total - 1
