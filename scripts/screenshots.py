"""Write PNG screenshots of the inbox, a thread, the statistics page and a saved reply being
inserted, and of the inbox, a thread, the settings and the statistics on a phone (375 px wide):
``make screenshots``.

It starts a throw-away server, fills it with realistic feedback through the public APIs, signs
in with Chromium and saves the pages under docs/screenshots/. Pages with a live stream never go
quiet on the network, so each shot waits for the load and a moment, not for network idleness.
"""

from __future__ import annotations

import asyncio
import sqlite3
import struct
import sys
import tempfile
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.async_api import Page, async_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser.live import CHROMIUM, CHROMIUM_ARGS, LiveSite, live_site  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
PASSWORD = "screenshots-password"
PHONE = {"width": 375, "height": 812}
SAVED_REPLIES = [
    (
        "Refund on its way",
        "Hi {name}, thanks for your patience. Your refund for {application} left today; you will get a "
        "confirmation at {email}.",
    ),
    ("Bug acknowledged", "Hi {name}, thanks for the report! We can reproduce it and a fix is on its way."),
    ("Feature request noted", "Thanks {name}, we added your idea to our list for {application}."),
]


def gradient_png(width: int = 320, height: int = 180) -> bytes:
    """A small gradient PNG, made here, to stand for a customer's screenshot."""
    rows = b"".join(
        b"\x00" + bytes(c for x in range(width) for c in (62 + x * 120 // width, 99, 221 - y * 90 // height))
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


FEEDBACK = [
    (
        "Maya Patel",
        "maya@northwind.io",
        "I love the new dashboard, it finally shows what I need at a glance!",
        "ui,dashboard",
        10,
    ),
    (
        "Jonas Weber",
        "jonas@weber.de",
        "Checkout crashes every time I pay with a Visa card. I tried three times.",
        "checkout,bug",
        2,
    ),
    (
        "Ana Souza",
        "ana@souza.com.br",
        "Adorei o aplicativo, muito bom! Só falta modo escuro.",
        "feature request",
        9,
    ),
    ("Luis García", "luis@garcia.es", "La exportación a CSV no incluye las fechas.", "export,bug", 6),
    ("Priya Nair", "priya@acme.co", "Search is slow when I have more than 500 projects.", "performance", 5),
    ("Tom Becker", "tom@becker.dev", "Great support, you answered within the hour. Thanks!", "support", 10),
    (
        "Chloé Martin",
        "chloe@martin.fr",
        "The invoice PDF has the wrong VAT number for my company.",
        "billing,bug",
        3,
    ),
    (
        "Sam Okafor",
        "sam@okafor.ng",
        "Would be nice to have keyboard shortcuts in the editor.",
        "feature request",
        8,
    ),
]


HISTORY = [
    ("Love how fast the new search is.", "positive", 10),
    ("The app logs me out every morning.", "negative", 4),
    ("Could you add an export to Excel?", "neutral", 7),
    ("Checkout was smooth, thanks!", "positive", 9),
    ("Prices changed after I added items to the cart.", "negative", 3),
    ("Dark mode please!", "neutral", 8),
    ("Support solved my issue in minutes.", "positive", 10),
    ("The mobile menu overlaps the search field.", "negative", 5),
]


def backfill_history(site: LiveSite, application: dict) -> None:
    """Older feedback and form opens spread over the last four weeks, for the statistics page.

    The capture API stamps everything with the current time, so the demo database is back-dated
    directly afterwards; this only ever touches the throw-away database of the screenshots.
    """
    for number in range(64):
        message, sentiment, nps = HISTORY[number % len(HISTORY)]
        site.submit(
            application,
            name=f"Customer {number + 1}",
            email=f"customer{number + 1}@example.org",
            message=message,
            sentiment=sentiment,
            nps=nps,
        )
    database = sqlite3.connect(Path(site.env["EARFUL_DATA_DIR"]) / "earful.sqlite3", timeout=30)
    with database:
        ids = [row[0] for row in database.execute("SELECT id FROM feedback ORDER BY id")]
        now = datetime.now(UTC)
        for index, feedback_id in enumerate(ids[:64]):
            when = now - timedelta(days=1, hours=(63 - index) * 10 + (index * 7) % 5)
            database.execute(
                "UPDATE feedback SET created_at = ?, last_reply_at = ? WHERE id = ?",
                (when.isoformat(" "), when.isoformat(" "), feedback_id),
            )
        opens = [row[0] for row in database.execute("SELECT id FROM form_opens ORDER BY id")]
        for index, open_id in enumerate(opens):
            when = now - timedelta(days=index % 29, hours=index % 7)
            database.execute(
                "UPDATE form_opens SET created_at = ? WHERE id = ?", (when.isoformat(" "), open_id)
            )
    database.close()


def age_recent_feedback(site: LiveSite, skip: int) -> None:
    """Spread today's showcase feedback over the last hours, so replies take a realistic time."""
    database = sqlite3.connect(Path(site.env["EARFUL_DATA_DIR"]) / "earful.sqlite3", timeout=30)
    with database:
        ids = [row[0] for row in database.execute("SELECT id FROM feedback ORDER BY id")][skip:]
        now = datetime.now(UTC)
        for position, feedback_id in enumerate(reversed(ids)):
            when = (now - timedelta(minutes=25 + 70 * position)).isoformat(" ")
            database.execute(
                "UPDATE feedback SET created_at = ?, last_reply_at = ? WHERE id = ?",
                (when, when, feedback_id),
            )
    database.close()


def fill(site: LiveSite) -> tuple[dict, int]:
    """Create an agent, an application and a realistic inbox; returns the app and a thread id."""
    token = site.create_agent("alex@acme.co", "Alex Rivera", PASSWORD, plan="team")
    application = site.create_application(token, name="Acme Shop", url="https://shop.acme.co")
    for _ in range(140):
        site.http.post(
            f"{site.base_url}/applications/{application['id']}/open",
            params={"key": application["keys"]["javascript"]},
        )
    backfill_history(site, application)
    screenshot_id = site.upload(application, "checkout-error.png", gradient_png(), "image/png")
    for name, email, message, tags, nps in FEEDBACK:
        extra = {"attachments": [screenshot_id]} if "Visa" in message else {}
        site.submit(
            application,
            name=name,
            email=email,
            message=message,
            tags=tags,
            nps=nps,
            url="https://shop.acme.co/checkout",
            properties='{"plan": "pro", "browser": "Firefox 128", "account_id": 4182}',
            **extra,
        )
    age_recent_feedback(site, skip=64)
    threads = site.api_get(token, f"/applications/{application['id']}/feedback")["data"]
    crash = next(t for t in threads if "Visa" in t["message"])
    site.reply(
        token,
        application["id"],
        crash["id"],
        "Sorry about that, Jonas! We found the bug and a fix ships today.",
    )
    site.reply(
        token, application["id"], crash["id"], "Root cause: 3-D Secure redirect drops the session.", "note"
    )
    for thread in threads[:5]:
        if thread["id"] != crash["id"]:
            site.reply(token, application["id"], thread["id"], "Thanks for telling us!")
    for title, text in SAVED_REPLIES:
        site.http.post(
            f"{site.base_url}/applications/{application['id']}/saved-replies",
            headers={"Authorization": f"Bearer {token}"},
            json={"title": title, "text": text},
        ).raise_for_status()
    return application, crash["id"]


async def settle(page: Page) -> None:
    """Wait for the page and its fonts, then a moment for the live stream's first answers."""
    await page.wait_for_load_state("load")
    await page.wait_for_timeout(600)


async def sign_in(page: Page, site: LiveSite) -> None:
    await page.goto(f"{site.base_url}/app/login")
    await page.get_by_label("E-mail").fill("alex@acme.co")
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(lambda url: "/app/login" not in url)


async def shoot_saved_reply(page: Page, thread_path: str) -> None:
    """The thread's reply box with the saved replies' typeahead open."""
    await page.goto(thread_path)
    await settle(page)
    message = page.locator("#reply-message")
    await message.scroll_into_view_if_needed()
    await message.press_sequentially("/re")
    await page.get_by_role("listbox", name="Saved replies").wait_for()
    box = await page.locator("#conversation").bounding_box()
    assert box is not None
    clip = {
        "x": box["x"] - 16,
        "y": box["y"] + box["height"] - 420,
        "width": box["width"] + 32,
        "height": 436,
    }
    await page.screenshot(path=str(OUT / "saved-replies.png"), clip=clip)
    print(f"wrote {OUT / 'saved-replies.png'}")


async def shoot(site: LiveSite, application: dict, thread_id: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    app_path = f"{site.base_url}/app/applications/{application['id']}"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport={"width": 1280, "height": 860})
        await sign_in(page, site)
        for name, path in (
            ("inbox", f"{app_path}/feedback"),
            ("thread", f"{app_path}/feedback/{thread_id}"),
            ("stats", f"{app_path}/stats"),
        ):
            await page.goto(path)
            await settle(page)
            await page.screenshot(path=str(OUT / f"{name}.png"), full_page=name != "inbox")
            print(f"wrote {OUT / f'{name}.png'}")
        await shoot_saved_reply(page, f"{app_path}/feedback/{thread_id}")
        phone = await browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
        await sign_in(phone, site)
        for name, path in (
            ("inbox", f"{app_path}/feedback"),
            ("thread", f"{app_path}/feedback/{thread_id}"),
            ("settings", app_path),
            ("stats", f"{app_path}/stats"),
        ):
            await phone.goto(path)
            await settle(phone)
            await phone.screenshot(path=str(OUT / f"phone-{name}.png"))
            print(f"wrote {OUT / f'phone-{name}.png'}")
        await browser.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir, live_site(Path(workdir) / "data") as site:
        application, thread_id = fill(site)
        asyncio.run(shoot(site, application, thread_id))


if __name__ == "__main__":
    main()
