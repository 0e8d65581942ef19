"""The inbox's Export button in a real browser: the download holds exactly the filtered threads."""

from __future__ import annotations

import csv
import io

import pytest
from playwright.async_api import expect

from tests.browser.conftest import PASSWORD, csp_violations, sign_in, watch_console
from tests.browser.live import LiveSite

EMAIL = "export-agent@example.com"
THREADS = [
    # name, e-mail, message, sentiment, tags
    ("Ana Ruiz", "ana@example.org", '=HYPERLINK("http://evil") refund me', "negative", "billing"),
    ("Bo Chen", "bo@example.org", "Refund took a week", "negative", ""),
    ("Cy Dunn", "cy@example.org", "Refund was quick, thanks", "positive", "billing"),
    ("Di Evans", "di@example.org", "Charged twice, refund?", "negative", "billing"),
]


@pytest.fixture(scope="module")
def shop(site: LiveSite) -> tuple[str, dict]:
    token = site.create_agent(EMAIL, "Exa Porter", PASSWORD)
    application = site.create_application(token, name="Export Shop")
    for name, email, message, sentiment, tags in THREADS:
        site.submit(application, name=name, email=email, message=message, sentiment=sentiment, tags=tags)
    return token, application


async def test_the_export_downloads_exactly_the_threads_the_inbox_filters_show(page, site, shop):
    token, application = shop
    console = watch_console(page)
    await sign_in(page, site, EMAIL)
    await page.goto(f"{site.base_url}/app/applications/{application['id']}/feedback")

    await page.get_by_label("Sentiment").select_option("negative")
    await page.get_by_label("Tag", exact=True).fill("bill")
    await page.locator('[data-tag-pick="billing"]').click()
    results = page.get_by_role("region", name="Feedback threads").locator(".thread-row__excerpt")
    await expect(results).to_have_count(2)
    async with page.expect_download() as waiting:
        await page.get_by_role("link", name="Export CSV").click()
    download = await waiting.value
    text = (await download.path()).read_bytes().decode("utf-8-sig")

    expected = site.api_get(
        token, f"/applications/{application['id']}/feedback?sentiment=negative&tag=billing"
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [int(row["id"]) for row in rows] == [thread["id"] for thread in expected["data"]]
    assert len(rows) == 2
    assert all(row["sentiment"] == "negative" and "billing" in row["tags"] for row in rows)
    assert download.suggested_filename.startswith(f"earful-application-{application['id']}-")
    assert [row["message"] for row in rows if "HYPERLINK" in row["message"]] == [
        '\'=HYPERLINK("http://evil") refund me'
    ]
    assert csp_violations(console) == []
