"""Phones: at 375 px wide the inbox, a thread, the settings and the statistics (and the saved
replies) never scroll sideways, even with long unbroken text, and every page of an application
has the same header, whose current tab shows."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Page

from tests.browser.conftest import PASSWORD, sign_in
from tests.browser.live import LiveSite

WIDTH = 375
EMAIL = "phone-agent@example.com"
LONG = "Supercalifragilisticexpialidocious" * 4
PAGES = {
    "inbox": "/feedback",
    "thread": "/feedback/{thread}",
    "settings": "",
    "statistics": "/stats",
    "saved replies": "/saved-replies",
}


@pytest.fixture(scope="module")
def phone_data(site: LiveSite) -> dict[str, int]:
    token = site.create_agent(EMAIL, "Pat Phone", PASSWORD, plan="team")
    application = site.create_application(
        token, name="A rather long application name " + LONG[:40], url=f"https://{LONG.lower()[:60]}.example/"
    )
    site.submit(
        application,
        email=f"{LONG.lower()[:50]}@example.org",
        name=f"Customer {LONG}",
        message=f"Look at https://shop.example/{LONG}/{LONG} and {LONG}",
        tags=[LONG[:40].lower(), "billing"],
        url=f"https://shop.example/{LONG}",
        properties={LONG[:30]: LONG},
        nps=4,
    )
    thread = site.api_get(token, f"/applications/{application['id']}/feedback")["data"][0]
    site.reply(token, application["id"], thread["id"], f"We are on it: {LONG}")
    site.http.post(
        f"{site.base_url}/applications/{application['id']}/saved-replies",
        headers={"Authorization": f"Bearer {token}"},
        json={"title": f"Answer {LONG[:80]}", "text": f"Hi {{name}}, {LONG}"},
    ).raise_for_status()
    return {"application": application["id"], "thread": thread["id"]}


@pytest.fixture
async def phone(browser: Browser, site: LiveSite):
    context = await browser.new_context(viewport={"width": WIDTH, "height": 812}, is_mobile=True)
    page = await context.new_page()
    await sign_in(page, site, EMAIL)
    yield page
    await context.close()


def address(site: LiveSite, data: dict[str, int], name: str) -> str:
    return f"{site.base_url}/app/applications/{data['application']}" + PAGES[name].format(**data)


async def header_of(page: Page) -> dict[str, object]:
    """What the application's header looks like: the name's font size, and where the current tab is."""
    return await page.evaluate(
        """() => {
            const name = document.querySelector('.app-header__title h1, .app-header__name');
            const tab = document.querySelector('.app-tabs a[aria-current="page"]').getBoundingClientRect();
            return {size: getComputedStyle(name).fontSize, weight: getComputedStyle(name).fontWeight,
                    tabLeft: tab.left, tabRight: tab.right};
        }"""
    )


@pytest.mark.parametrize("name", list(PAGES))
async def test_no_page_scrolls_sideways_at_375_px(phone: Page, site: LiveSite, phone_data, name):
    await phone.goto(address(site, phone_data, name))

    width = await phone.evaluate("document.documentElement.scrollWidth")

    assert width <= WIDTH, f"the {name} page is {width} px wide"


async def test_every_page_has_the_same_header_with_its_tab_in_view(phone: Page, site: LiveSite, phone_data):
    headers = {}
    for name in PAGES:
        await phone.goto(address(site, phone_data, name))
        headers[name] = await header_of(phone)

    assert len({(header["size"], header["weight"]) for header in headers.values()}) == 1, headers
    for name, header in headers.items():
        assert header["tabLeft"] >= 0, f"the current tab of {name} is hidden"
        assert header["tabRight"] <= WIDTH, f"the current tab of {name} is hidden"


async def test_the_main_links_and_sign_out_fit_the_screen(phone: Page, site: LiveSite, phone_data):
    await phone.goto(address(site, phone_data, "inbox"))

    boxes = await phone.locator(".topbar a, .topbar button").evaluate_all(
        "elements => elements.map(e => e.getBoundingClientRect().right)"
    )

    assert boxes and max(boxes) <= WIDTH
