"""Admin work in a real browser: applications, key rotation, access tokens, and tenant isolation.

Every action is checked on the page and through the API that its effect was stored (or refused).
"""

from __future__ import annotations

import re
import struct
import zlib
from typing import Any

import pytest
from playwright.async_api import Dialog, expect

from tests.browser.conftest import PASSWORD, csp_violations, sign_in, watch_console
from tests.browser.live import LiveSite

ADMIN_EMAIL = "admin-owner@example.com"
OUTSIDER_EMAIL = "admin-outsider@example.com"
SECRET_MESSAGE = "Our secret launch date is the fourteenth, keep it quiet."


def tiny_png() -> bytes:
    """A valid 2 by 2 PNG, good enough for a logo upload."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x3e\x63\xdd" * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def admin_token(site: LiveSite) -> str:
    return site.create_agent(ADMIN_EMAIL, "Ada Admin", PASSWORD, plan="team")


@pytest.fixture(scope="module")
def secret(site: LiveSite, admin_token: str) -> tuple[dict[str, Any], int]:
    """The admin's application with one thread the outsider must never see."""
    application = site.create_application(admin_token, name="Secret Garden", url="https://garden.test")
    site.submit(application, name="Gina Gardener", email="gina@garden.test", message=SECRET_MESSAGE)
    threads = site.api_get(admin_token, f"/applications/{application['id']}/feedback")["data"]
    return application, threads[0]["id"]


@pytest.fixture(scope="module")
def outsider_token(site: LiveSite) -> str:
    return site.create_agent(OUTSIDER_EMAIL, "Otto Outsider", PASSWORD, plan="team")


def open_form(site: LiveSite, application_id: int, key: str) -> int:
    """Status of a capture API call made with ``key``."""
    response = site.http.post(f"{site.base_url}/applications/{application_id}/open", params={"key": key})
    return response.status_code


# --- applications --------------------------------------------------------------------------------


async def test_agent_creates_an_application_through_the_form(page, site, admin_token):
    console = watch_console(page)
    await sign_in(page, site, ADMIN_EMAIL)
    await page.goto(f"{site.base_url}/app/applications")

    await page.get_by_role(
        "link", name=re.compile(r"^(New application|Create your first application)$")
    ).click()
    await page.get_by_label("Name").fill("Bakery Orders")
    await page.get_by_label("Website").fill("https://bakery.test")
    await page.get_by_label("Logo").set_input_files(
        {"name": "logo.png", "mimeType": "image/png", "buffer": tiny_png()}
    )
    await page.get_by_role("spinbutton", name="Target first-reply time").fill("4")
    await page.get_by_label("Unit").select_option("hours")
    await page.get_by_role("button", name="Create application").click()

    await expect(page.get_by_role("heading", level=1, name="Bakery Orders")).to_be_visible()
    await expect(page.get_by_role("status")).to_have_text(
        "Bakery Orders is ready. Add the widget to your website below."
    )
    await expect(page.get_by_role("img", name="Current logo of Bakery Orders")).to_be_visible()
    created = [a for a in site.api_get(admin_token, "/applications")["data"] if a["name"] == "Bakery Orders"]
    assert len(created) == 1
    assert created[0]["url"] == "https://bakery.test"
    assert created[0]["target_average_first_reply_time"] == 4 * 3600
    assert created[0]["uploads_enabled"] is True
    assert created[0]["logo"]
    # The settings page shows the stored keys, the intake address and the snippet.
    await expect(page.get_by_label("JavaScript key")).to_have_value(created[0]["keys"]["javascript"])
    await expect(page.get_by_label("E-mail intake address")).to_have_value(created[0]["keys"]["email"])
    await expect(page.locator("#widget-snippet-code")).to_contain_text(created[0]["keys"]["javascript"])

    await page.get_by_role("link", name="Applications", exact=True).first.click()
    await expect(page.get_by_role("heading", level=2, name="Bakery Orders")).to_be_visible()
    assert not csp_violations(console), console


async def test_creating_an_application_without_a_name_shows_the_error(page, site, admin_token):
    before = len(site.api_get(admin_token, "/applications")["data"])
    await sign_in(page, site, ADMIN_EMAIL)
    await page.goto(f"{site.base_url}/app/applications/new")

    await page.get_by_label("Website").fill("https://nameless.test")
    await page.get_by_role("button", name="Create application").click()

    await expect(page.get_by_role("alert")).to_have_text("Check the highlighted fields.")
    await expect(page.get_by_text("Enter a name.")).to_be_visible()
    await expect(page.get_by_label("Website")).to_have_value("https://nameless.test")
    assert len(site.api_get(admin_token, "/applications")["data"]) == before


async def test_rotating_a_key_replaces_it_and_the_old_key_is_refused(page, site, admin_token):
    application = site.create_application(admin_token, name="Rotation Station")
    old_keys = application["keys"]
    console = watch_console(page)
    await sign_in(page, site, ADMIN_EMAIL)
    await page.goto(f"{site.base_url}/app/applications/{application['id']}")
    key = page.get_by_label("JavaScript key")
    await expect(key).to_have_value(old_keys["javascript"])

    row = page.locator("#key-javascript")
    await row.get_by_text("Rotate…").click()
    await row.get_by_role("button", name="Rotate the JavaScript key").click()

    await expect(page.get_by_role("status")).to_have_text("New JavaScript key. The old one no longer works.")
    await expect(key).not_to_have_value(old_keys["javascript"])
    new_key = await key.input_value()
    stored = site.api_get(admin_token, f"/applications/{application['id']}")["data"]["keys"]
    assert stored["javascript"] == new_key
    assert stored["ios"] == old_keys["ios"], "only the rotated key changes"
    await expect(page.locator("#widget-snippet-code")).to_contain_text(new_key)
    assert open_form(site, application["id"], old_keys["javascript"]) == 403
    assert open_form(site, application["id"], new_key) == 201
    assert not csp_violations(console), console


# --- personal access tokens ----------------------------------------------------------------------


async def test_agent_creates_a_token_shown_once_then_revokes_it(page, site, admin_token):
    console = watch_console(page)
    await sign_in(page, site, ADMIN_EMAIL)
    await page.get_by_role("link", name="Account").click()

    await page.get_by_label("Token name").fill("CI export")
    await expect(page.get_by_role("checkbox", name=re.compile(r"^Read"))).to_be_checked()
    await page.get_by_role("button", name="Create token").click()

    await expect(page.get_by_text("Token “CI export” created.")).to_be_visible()
    raw = await page.get_by_label("New token").input_value()
    assert raw.startswith("ea_")
    me = site.http.get(f"{site.base_url}/users/me", headers={"Authorization": f"Bearer {raw}"})
    assert me.status_code == 200
    assert me.json()["data"]["email"] == ADMIN_EMAIL

    await page.reload()
    await expect(page.get_by_label("New token")).to_have_count(0)
    assert raw not in await page.content()
    row = page.get_by_role("row").filter(has_text="CI export")
    await expect(row).to_contain_text("read")
    await expect(row).not_to_contain_text("never")  # its use above is shown as "last used"

    questions: list[str] = []

    async def accept(dialog: Dialog) -> None:
        questions.append(dialog.message)
        await dialog.accept()

    page.on("dialog", accept)
    await row.get_by_role("button", name="Revoke CI export").click()

    await expect(page.get_by_role("row").filter(has_text="CI export")).to_have_count(0)
    assert questions == ["Revoke the token “CI export”? Scripts using it will stop working at once."]
    me = site.http.get(f"{site.base_url}/users/me", headers={"Authorization": f"Bearer {raw}"})
    assert me.status_code == 401
    assert not csp_violations(console), console


# --- a second agent ------------------------------------------------------------------------------


async def test_second_agent_sees_none_of_the_first_agents_data(page, site, secret, outsider_token):
    application, feedback_id = secret
    base = f"{site.base_url}/app/applications/{application['id']}"
    await sign_in(page, site, OUTSIDER_EMAIL)

    await page.goto(f"{site.base_url}/app/applications")
    await expect(page.get_by_role("heading", level=1, name="Applications")).to_be_visible()
    await expect(page.get_by_text("Secret Garden")).to_have_count(0)

    for url in (
        f"{base}/feedback",
        f"{base}/feedback?status=archived",
        f"{base}/feedback/{feedback_id}",
        base,
        f"{base}/stats",
    ):
        response = await page.goto(url)
        assert response is not None and response.status == 404, url
        await expect(page.get_by_role("heading", level=1, name="Not found")).to_be_visible()
        content = await page.content()
        for leaked in ("Secret Garden", SECRET_MESSAGE, "Gina", application["keys"]["javascript"]):
            assert leaked not in content, (url, leaked)

    assert [a["name"] for a in site.api_get(outsider_token, "/applications")["data"]] == []


async def test_second_agent_cannot_change_the_first_agents_thread_or_keys(
    page, site, admin_token, secret, outsider_token
):
    application, feedback_id = secret
    base = f"/app/applications/{application['id']}"
    await sign_in(page, site, OUTSIDER_EMAIL)
    await page.goto(f"{site.base_url}/app/account")
    csrf = await page.locator("input[name=csrf_token]").first.input_value()

    for path, form in (
        (f"{base}/feedback/{feedback_id}/replies", {"message": "Hijacked", "type": "reply"}),
        (f"{base}/feedback/{feedback_id}/archive", {}),
        (f"{base}/feedback/{feedback_id}/tags", {"name": "hijacked"}),
        (f"{base}/keys/javascript/rotate", {}),
        (base, {"name": "Hijacked", "target_value": "1", "target_unit": "hours"}),
    ):
        response = await page.request.post(site.base_url + path, form={"csrf_token": csrf, **form})
        assert response.status == 404, path
        assert SECRET_MESSAGE not in await response.text()

    thread = site.api_get(admin_token, f"/applications/{application['id']}/feedback/{feedback_id}")["data"]
    assert (thread["replies"], thread["archived"], thread["tags"]) == ([], False, [])
    stored = site.api_get(admin_token, f"/applications/{application['id']}")["data"]
    assert stored["name"] == "Secret Garden"
    assert stored["keys"]["javascript"] == application["keys"]["javascript"]
