"""Files served by Earful: attachments behind capability URLs (from the data dir and from a
bucket), and self-hosted avatars."""

from __future__ import annotations

from io import BytesIO
from urllib.parse import urlsplit

import pytest
from werkzeug.datastructures import FileStorage

from app.services.storage import storage_for
from tests.api.conftest import ON_DISK_AND_IN_A_BUCKET
from tests.conftest import BASE_URL
from tests.factories import body_json, body_text

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
TEXT = b"line one\nline two\n\x00\xff binary tail"
HTML_NAME = "<img src=x onerror=alert(1)>.html"


def local(url: str) -> str:
    """The path and query of one of our absolute URLs, for the test client."""
    assert url.startswith(f"{BASE_URL}/"), url
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


async def submitted_thread(api, token, application, *files: tuple[str, bytes], **body: object) -> dict:
    """Upload ``files`` and submit a thread with them through the capture API; its JSON."""
    key = application.key_api
    attachments: list[int] = []
    if files:
        upload = await api.post(
            f"/applications/{application.id}/upload?key={key}",
            files={
                f"file{index}": FileStorage(BytesIO(content), filename=name)
                for index, (name, content) in enumerate(files)
            },
        )
        assert upload.status_code == 201, await body_text(upload)
        attachments = await body_json(upload)
    body = {"email": "ann.lee@example.org", "message": "Here is what I see.", **body}
    if attachments:
        body["attachments"] = attachments
    response = await api.post(f"/applications/{application.id}/submit?key={key}", json=body)
    assert response.status_code == 201, await body_text(response)
    listed = await api.get(f"/applications/{application.id}/feedback", token)
    (thread,) = (await body_json(listed))["data"]
    return thread


async def only_attachment_url(api, token, application, name: str, content: bytes) -> str:
    thread = await submitted_thread(api, token, application, (name, content))
    (attachment,) = thread["attachments"]
    return attachment["url"]


# --- attachments ----------------------------------------------------------------------------


@ON_DISK_AND_IN_A_BUCKET
async def test_attachment_url_downloads_the_exact_bytes(api, token, application):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)

    response = await api.get(local(url))

    assert response.status_code == 200
    assert await response.get_data() == TEXT


@ON_DISK_AND_IN_A_BUCKET
async def test_attachment_download_forbids_content_sniffing(api, token, application):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)

    response = await api.get(local(url))

    assert response.headers["X-Content-Type-Options"] == "nosniff"


@ON_DISK_AND_IN_A_BUCKET
async def test_attachment_that_is_not_an_image_downloads_as_an_attachment(api, token, application):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)

    response = await api.get(local(url))

    assert response.mimetype == "text/plain"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment")
    assert "notes.txt" in disposition


@ON_DISK_AND_IN_A_BUCKET
async def test_png_attachment_is_shown_inline(api, token, application):
    url = await only_attachment_url(api, token, application, "screenshot.png", PNG)

    response = await api.get(local(url))

    assert response.status_code == 200
    assert response.mimetype == "image/png"
    assert await response.get_data() == PNG
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("inline")
    assert "screenshot.png" in disposition
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@ON_DISK_AND_IN_A_BUCKET
async def test_attachment_url_with_a_wrong_token_is_not_found(api, token, application):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)
    prefix, attachment_id, secret, name = local(url).rsplit("/", 3)
    forged = "0" * len(secret) if secret != "0" * len(secret) else "1" * len(secret)

    response = await api.get(f"{prefix}/{attachment_id}/{forged}/{name}")

    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await response.get_data() != TEXT


async def test_attachment_url_of_another_attachment_id_is_not_found(api, token, application):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)
    prefix, attachment_id, secret, name = local(url).rsplit("/", 3)

    response = await api.get(f"{prefix}/{int(attachment_id) + 1}/{secret}/{name}")

    assert response.status_code == 404
    assert response.mimetype == "text/plain"


@ON_DISK_AND_IN_A_BUCKET
async def test_uploaded_html_is_downloaded_not_rendered(api, token, application):
    url = await only_attachment_url(
        api, token, application, "page.html", b"<html><script>alert(1)</script></html>"
    )

    response = await api.get(local(url))

    assert response.status_code == 200
    assert response.mimetype != "text/html"
    assert response.headers["Content-Disposition"].startswith("attachment")


async def test_html_in_an_uploaded_file_name_is_not_reflected_raw_in_its_url(api, token, application):
    thread = await submitted_thread(api, token, application, (HTML_NAME, b"<b>hi</b>"))

    (attachment,) = thread["attachments"]
    assert "<" not in attachment["url"] and ">" not in attachment["url"]
    assert " " not in attachment["url"]


async def test_html_in_an_uploaded_file_name_is_not_served_as_html(api, token, application):
    thread = await submitted_thread(api, token, application, (HTML_NAME, b"<b>hi</b>"))
    (attachment,) = thread["attachments"]

    response = await api.get(local(attachment["url"]))

    assert response.status_code == 200
    assert response.mimetype != "text/html"
    assert await response.get_data() == b"<b>hi</b>"
    assert HTML_NAME not in await response.get_data(as_text=True)


@ON_DISK_AND_IN_A_BUCKET
async def test_a_download_carries_the_sandbox_length_and_a_private_cache_rule(api, token, application):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)

    response = await api.get(local(url))

    assert "sandbox" in response.headers["Content-Security-Policy"]
    assert response.headers["Content-Length"] == str(len(TEXT))
    assert response.headers["Cache-Control"] == "private, max-age=31536000, immutable"
    assert response.headers["ETag"]
    assert response.headers["Last-Modified"]


@ON_DISK_AND_IN_A_BUCKET
async def test_an_attachment_whose_file_is_gone_is_not_found(api, token, application, settings):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)
    storage = storage_for(settings)
    await storage.delete(await storage.keys("uploads"))

    response = await api.get(local(url))

    assert response.status_code == 404
    assert await response.get_data(as_text=True) == "Not found"


@pytest.mark.parametrize("settings", ["s3"], indirect=True)
async def test_an_upload_to_a_bucket_writes_nothing_to_the_data_dir(api, token, application, settings):
    url = await only_attachment_url(api, token, application, "notes.txt", TEXT)

    assert len(await storage_for(settings).keys("uploads")) == 1
    assert not (settings.data_dir / "uploads").exists()
    assert await (await api.get(local(url))).get_data() == TEXT


# --- avatars --------------------------------------------------------------------------------


async def test_avatar_url_does_not_contain_the_email_address(api, token, application):
    thread = await submitted_thread(api, token, application, name="Ann Lee")

    assert thread["avatar"].startswith(f"{BASE_URL}/")
    assert "ann.lee" not in thread["avatar"]
    assert "example.org" not in thread["avatar"]


async def test_avatar_is_an_svg_with_the_senders_initials(api, token, application):
    thread = await submitted_thread(api, token, application, name="Ann Lee")

    response = await api.get(local(thread["avatar"]))

    assert response.status_code == 200
    assert response.mimetype == "image/svg+xml"
    svg = await response.get_data(as_text=True)
    assert svg.lstrip().startswith("<svg")
    assert ">AL<" in svg


async def test_avatar_does_not_contain_the_email_address(api, token, application):
    thread = await submitted_thread(api, token, application, name="Ann Lee")

    svg = await (await api.get(local(thread["avatar"]))).get_data(as_text=True)

    assert "ann.lee@example.org" not in svg
    assert "example.org" not in svg


async def test_avatar_of_a_sender_without_a_name_uses_the_address_initial(api, token, application):
    thread = await submitted_thread(api, token, application, email="zoe@example.org")

    response = await api.get(local(thread["avatar"]))

    assert response.mimetype == "image/svg+xml"
    svg = await response.get_data(as_text=True)
    assert ">Z<" in svg
    assert "zoe@example.org" not in svg


async def test_avatar_is_served_without_content_sniffing(api, token, application):
    thread = await submitted_thread(api, token, application, name="Ann Lee")

    response = await api.get(local(thread["avatar"]))

    assert response.headers["X-Content-Type-Options"] == "nosniff"
