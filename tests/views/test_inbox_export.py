"""The inbox's Export button: a download of every thread the page's filters show."""

from __future__ import annotations

import csv
import html
import io
import re

import pytest

from app.services.feedback import set_archived
from tests.factories import make_thread, make_user, sign_in


@pytest.fixture
async def signed_in(client, agent):
    await sign_in(client, agent)
    return client


def inbox(application, query: str = "") -> str:
    return f"/app/applications/{application.id}/feedback{query}"


async def export_link(client, path: str) -> str:
    response = await client.get(path)
    assert response.status_code == 200
    match = re.search(
        r'<a class="button button--quiet" href="([^"]+)" download data-export>',
        await response.get_data(as_text=True),
    )
    assert match, "no Export button"
    return html.unescape(match.group(1))


async def exported_ids(client, path: str) -> list[int]:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="earful-application-')
    text = (await response.get_data()).decode("utf-8-sig")
    return [int(row["id"]) for row in csv.DictReader(io.StringIO(text))]


async def test_the_export_button_keeps_the_inbox_filters(signed_in, application):
    link = await export_link(
        signed_in, inbox(application, "?status=archived&sentiment=negative&tag=billing&q=refund&before=99")
    )

    assert link.startswith(f"/app/applications/{application.id}/feedback/export?")
    for part in ("status=archived", "sentiment=negative", "tag=billing", "q=refund"):
        assert part in link
    assert "before" not in link


async def test_the_htmx_results_carry_the_button_with_the_new_filters(signed_in, application):
    response = await signed_in.get(inbox(application, "?sentiment=positive"), headers={"HX-Request": "true"})

    assert "feedback/export?sentiment=positive" in await response.get_data(as_text=True)


async def test_the_export_holds_exactly_the_filtered_threads(signed_in, application):
    wanted = await make_thread(application, sentiment="negative", tags=["billing"], message="Refund me")
    await make_thread(application, sentiment="positive", tags=["billing"], message="Refund me")
    await make_thread(application, sentiment="negative", message="Refund me")
    archived = await make_thread(application, sentiment="negative", tags=["billing"], message="Refund me")
    await set_archived(application, archived, True)

    link = await export_link(signed_in, inbox(application, "?sentiment=negative&tag=billing&q=refund"))

    assert await exported_ids(signed_in, link) == [wanted.id]
    assert await exported_ids(signed_in, link + "&status=archived") == [archived.id]


async def test_the_web_apps_csv_starts_with_a_byte_order_mark_for_spreadsheets(signed_in, application):
    response = await signed_in.get(f"/app/applications/{application.id}/feedback/export")

    assert (await response.get_data()).startswith(b"\xef\xbb\xbfid,")


async def test_another_agent_exports_nothing_of_the_application(app, application):
    await make_thread(application, message="Secret feedback")
    other = app.test_client()
    await sign_in(other, await make_user(email="eve@example.com"))

    response = await other.get(f"/app/applications/{application.id}/feedback/export")

    assert response.status_code == 404
    assert "Secret feedback" not in await response.get_data(as_text=True)


async def test_the_export_requires_sign_in(client, application):
    response = await client.get(f"/app/applications/{application.id}/feedback/export")

    assert response.status_code == 302
    assert response.headers["Location"].startswith("/app/login")
