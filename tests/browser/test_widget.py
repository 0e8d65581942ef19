"""The feedback widget in a real browser, embedded in a page of ANOTHER origin, as customers use it."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser.conftest import PASSWORD, sign_in
from tests.browser.live import LiveSite

# The README's screenshot is rewritten only on request, so that a test run leaves the checkout clean:
# EARFUL_WRITE_SCREENSHOTS=1 .venv/bin/pytest tests/browser/test_widget.py -k another_origin
README_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "widget.png"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A static web server on a second local port: the customer's site. Yields its URL and folder."""
    folder = tmp_path_factory.mktemp("host-site")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def owner(site: LiveSite) -> dict[str, Any]:
    """An agent with a token and an application that accepts uploads."""
    token = site.create_agent("widget-owner@example.com", "Wendy Widget", PASSWORD)
    application = site.create_application(token, name="Acme Shop", url="https://shop.example.com")
    return {"token": token, "application": application}


@pytest.fixture
def host_page(host: tuple[str, Path], site: LiveSite, owner: dict[str, Any]) -> Callable[..., str]:
    """Write a page of the customer's site embedding the snippet; returns its address."""
    url, folder = host

    def write(name: str, lang: str = "en", head: str = "", body: str = "", **attributes: str) -> str:
        application = owner["application"]
        data = {"app": str(application["id"]), "key": application["keys"]["javascript"], **attributes}
        rendered = " ".join(f'data-{k}="{v}"' for k, v in data.items())
        (folder / name).write_text(
            f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme Shop</title>'
            f"{head}</head><body>{body or '<h1>Acme Shop</h1><p>Our products.</p>'}"
            f'<script src="{site.base_url}/widget.js" {rendered} async></script></body></html>'
        )
        return f"{url}/{name}"

    return write


IDENTIFY = (
    "<script>window.Earful=window.Earful||function(){(Earful.q=Earful.q||[]).push(arguments)};"
    "Earful('identify',{email:'jo@example.com',name:'Jo Customer',"
    "properties:{plan:'pro',account_id:42},tags:['beta']});</script>"
)


# A plausible customer page, so that the README's screenshot shows the widget in context.
SHOP_STYLE = (
    "<style>body{margin:0;font:16px/1.5 Georgia,serif;color:#222;background:#faf7f2}"
    "header{padding:18px 40px;background:#2d2a26;color:#faf7f2;font-size:22px;letter-spacing:.04em}"
    "main{padding:32px 40px;max-width:720px}.item{display:flex;justify-content:space-between;"
    "padding:14px 0;border-bottom:1px solid #e5ded3}.pay{margin-top:24px;padding:12px 28px;"
    "background:#b5552d;color:#fff;border:0;border-radius:4px;font-size:16px}</style>"
)
SHOP = (
    "<header>ACME SHOP</header><main><h1>Your cart</h1>"
    "<div class='item'><span>Ceramic mug, sand</span><span>$18.00</span></div>"
    "<div class='item'><span>Pour-over kettle</span><span>$64.00</span></div>"
    "<div class='item'><strong>Total</strong><strong>$82.00</strong></div>"
    "<button class='pay'>Pay now</button></main>"
)


def threads(site: LiveSite, owner: dict[str, Any]) -> list[dict[str, Any]]:
    return site.api_get(owner["token"], f"/applications/{owner['application']['id']}/feedback")["data"]


async def test_feedback_sent_from_another_origin_reaches_the_management_api(
    page, site, owner, host_page, tmp_path
):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sent: dict[str, Any] = {}
    page.on("request", lambda request: sent.setdefault(request.url.split("?")[0].rsplit("/", 1)[-1], request))
    url = host_page("checkout.html", head=SHOP_STYLE + IDENTIFY, body=SHOP, nps="true", uploads="true")
    await page.goto(url)

    await page.get_by_role("button", name="Feedback").click()
    dialog = page.get_by_role("dialog", name="Send feedback")
    await expect(dialog).to_be_visible()
    await expect(dialog.get_by_label("E-mail")).to_have_value("jo@example.com")
    await expect(dialog.get_by_label("Name")).to_have_value("Jo Customer")
    await dialog.get_by_label("Message").fill("The checkout button does nothing on my phone.")
    await dialog.get_by_label("Attach files").set_input_files(
        files=[{"name": "steps.txt", "mimeType": "text/plain", "buffer": b"1. open cart\n2. tap pay\n"}]
    )
    await expect(dialog.get_by_text("steps.txt")).to_be_visible()
    await dialog.get_by_role("radio", name="Unhappy").check()
    await dialog.get_by_role("radio", name="3", exact=True).check()
    write_readme = os.environ.get("EARFUL_WRITE_SCREENSHOTS") == "1"
    await page.screenshot(path=README_SCREENSHOT if write_readme else tmp_path / "widget.png")
    await dialog.get_by_role("button", name="Send").click()

    await expect(dialog.get_by_role("status")).to_have_text("Feedback sent!")
    assert errors == []
    assert set(sent) >= {"open", "upload", "submit"}
    assert sent["upload"].headers["content-type"].startswith("multipart/form-data")
    assert sent["submit"].headers["content-type"].startswith("text/plain")  # no CORS preflight
    assert json.loads(sent["submit"].post_data)["language"] == "en"
    [summary] = threads(site, owner)
    thread = site.api_get(
        owner["token"], f"/applications/{owner['application']['id']}/feedback/{summary['id']}"
    )["data"]
    assert thread["message"] == "The checkout button does nothing on my phone."
    assert thread["email"] == "jo@example.com"
    assert thread["name"] == "Jo Customer"
    assert thread["url"] == url
    assert thread["properties"] == {"plan": "pro", "account_id": 42}
    assert thread["tags"] == ["beta"]
    assert thread["sentiment"] == "negative"
    assert thread["nps"] == 3
    [attachment] = thread["attachments"]
    assert attachment["name"] == "steps.txt"
    assert site.http.get(attachment["url"]).content == b"1. open cart\n2. tap pay\n"


async def test_spanish_widget_shows_the_server_error_inline_and_keeps_the_text(page, site, owner, host_page):
    await page.goto(host_page("es.html", language="es", nps="true"))

    await page.get_by_role("button", name="Opinión").click()
    dialog = page.get_by_role("dialog", name="Envíanos tu opinión")
    await expect(dialog.get_by_role("radio", name="Satisfecho", exact=True)).to_be_attached()
    await expect(dialog.get_by_text("¿Qué probabilidad hay de que nos recomiendes")).to_be_visible()
    await dialog.get_by_label("Correo electrónico").fill("ana@example.org")
    await dialog.get_by_label("Nombre").fill("Ana")
    await dialog.get_by_label("Mensaje").fill("ok")
    await dialog.get_by_role("button", name="Enviar").click()

    await expect(dialog.get_by_role("alert")).to_have_text("Tu mensaje es demasiado corto")
    await expect(dialog.get_by_label("Mensaje")).to_have_value("ok")
    await expect(dialog.get_by_label("Correo electrónico")).to_have_value("ana@example.org")
    await expect(dialog.get_by_label("Nombre")).to_have_value("Ana")
    assert not [t for t in threads(site, owner) if t["email"] == "ana@example.org"]


async def test_language_follows_the_page_lang_in_portuguese(page, host_page):
    await page.goto(host_page("pt.html", lang="pt-BR"))

    await page.get_by_role("button", name="Opinião").click()

    await expect(page.get_by_role("dialog", name="Envie sua opinião")).to_be_visible()
    await expect(page.get_by_label("Mensagem")).to_be_focused()


async def test_escape_closes_the_dialog_and_returns_focus_to_the_button(page, host_page):
    await page.goto(host_page("keyboard.html"))
    button = page.get_by_role("button", name="Feedback")

    await button.focus()
    await page.keyboard.press("Enter")
    await expect(button).to_have_attribute("aria-expanded", "true")
    await expect(page.get_by_label("Message")).to_be_focused()
    await page.keyboard.press("Escape")

    await expect(page.get_by_role("dialog")).to_be_hidden()
    await expect(button).to_have_attribute("aria-expanded", "false")
    await expect(button).to_be_focused()


async def test_tab_stays_inside_the_open_dialog(page, host_page):
    await page.goto(host_page("trap.html"))
    await page.get_by_role("button", name="Feedback").click()
    dialog = page.get_by_role("dialog")

    for _ in range(12):
        await page.keyboard.press("Tab")
        assert await dialog.evaluate("(d) => d.contains(d.getRootNode().activeElement)")
    await page.keyboard.press("Shift+Tab")
    assert await dialog.evaluate("(d) => d.contains(d.getRootNode().activeElement)")


async def test_network_failure_is_retried_once_then_reported_without_losing_text(page, host_page):
    await page.goto(host_page("offline.html"))
    attempts: list[str] = []

    async def fail(route):
        attempts.append(route.request.url)
        await route.abort()

    await page.route("**/submit?*", fail)
    await page.get_by_role("button", name="Feedback").click()
    await page.get_by_label("Message").fill("Hello from a train tunnel")
    await page.get_by_label("E-mail").fill("tunnel@example.com")
    await page.get_by_role("button", name="Send").click()

    await expect(page.get_by_role("alert")).to_have_text(
        "We could not reach the server. Check your connection and try again."
    )
    assert len(attempts) == 2
    await expect(page.get_by_label("Message")).to_have_value("Hello from a train tunnel")


async def test_phone_screen_shows_a_full_width_sheet(browser, host_page):
    context = await browser.new_context(
        viewport={"width": 375, "height": 700}, is_mobile=True, has_touch=True, reduced_motion="reduce"
    )
    page = await context.new_page()
    try:
        await page.goto(host_page("phone.html"))
        await page.get_by_role("button", name="Feedback").click()
        box = await page.get_by_role("dialog").bounding_box()
    finally:
        await context.close()

    assert box["x"] == 0 and box["width"] == 375
    assert box["y"] + box["height"] == pytest.approx(700, abs=1)


async def test_options_apply_theme_position_and_a_valid_colour_only(page, host_page):
    await page.goto(host_page("dark.html", theme="dark", position="bottom-left", color="#ff0000"))
    button = page.get_by_role("button", name="Feedback")
    await expect(button).to_be_visible()

    box = await button.bounding_box()
    colour = await button.evaluate("(b) => getComputedStyle(b).backgroundColor")
    await button.click()
    panel = await page.get_by_role("dialog").evaluate("(d) => getComputedStyle(d).backgroundColor")
    await page.goto(host_page("bad-colour.html", color="red;}*{display:none"))
    fallback = await page.get_by_role("button", name="Feedback").evaluate(
        "(b) => getComputedStyle(b).backgroundColor"
    )

    assert box["x"] < 100
    assert colour == "rgb(255, 0, 0)"
    assert panel == "rgb(28, 30, 34)"
    assert fallback == "rgb(62, 99, 221)"


async def test_demo_page_runs_the_widget_under_the_strict_csp(page, site, owner):
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    application = owner["application"]
    await sign_in(page, site, "widget-owner@example.com")

    await page.goto(f"{site.base_url}/app/applications/{application['id']}/demo?apply=1&nps=true&language=pt")
    await page.get_by_role("button", name="Open the widget").click()
    dialog = page.get_by_role("dialog", name="Envie sua opinião")
    await expect(dialog.get_by_label("E-mail")).to_have_value("widget-owner@example.com")
    await dialog.get_by_label("Mensagem").fill("Trying the widget from the demo page.")
    await dialog.get_by_role("button", name="Enviar").click()

    await expect(dialog.get_by_role("status")).to_have_text("Feedback enviado!")
    assert not [m for m in messages if "Content Security Policy" in m or "Refused" in m]
    [thread] = [t for t in threads(site, owner) if t["email"] == "widget-owner@example.com"]
    details = site.api_get(owner["token"], f"/applications/{application['id']}/feedback/{thread['id']}")
    assert json.dumps(details["data"]["properties"]) == '{"source": "Earful widget demo"}'
    assert details["data"]["tags"] == ["demo"]
