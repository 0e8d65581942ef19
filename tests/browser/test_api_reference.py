"""The API reference page (/docs): Swagger UI renders /openapi.json under the strict content policy."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.browser.conftest import watch_console
from tests.browser.live import LiveSite


async def test_reference_renders_every_api_section_without_console_errors(page: Page, site: LiveSite):
    console = watch_console(page)

    await page.goto(f"{site.base_url}/docs")

    await expect(page.locator(".swagger-ui .info .title")).to_contain_text("Earful API")
    for section in ("Management API", "Capture API", "E-mail intake"):
        await expect(page.locator(".opblock-tag", has_text=section).first).to_be_visible()
    assert console == [], console


async def test_reference_shows_an_operations_documented_errors(page: Page, site: LiveSite):
    await page.goto(f"{site.base_url}/docs")

    await page.locator("#operations-Capture_API-submitFeedback").click()

    responses = page.locator("#operations-Capture_API-submitFeedback .responses-table")
    await expect(responses).to_contain_text("Feedback sent!")
    await expect(responses).to_contain_text("404")
