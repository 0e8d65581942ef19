"""The tag picker: pages no longer carry every tag of an application; a small search answers
as the agent types (the inbox's tag filter, a thread's add tag field)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.db import atomic
from app.repositories.sql import insert_rows, moment
from app.services.tags import SEARCH_LIMIT, color_for
from tests.factories import make_thread, make_user, sign_in

MANY_TAGS = 10_000
PAGE_BUDGET = 100 * 1024


@pytest.fixture
async def signed_in(client, agent):
    await sign_in(client, agent)
    return client


async def add_tags(application_id: int, names: list[str]) -> None:
    """Tags written in bulk, as an application that gathered them before the quota would have."""
    now = moment(datetime.now(UTC))
    rows = [(application_id, name, color_for(name), 0, 0, now) for name in names]
    await atomic(
        lambda: insert_rows(
            "tags", ("application_id", "name", "color", "open_count", "archived_count", "created_at"), rows
        )
    )


def search(application_id: int, query: str) -> str:
    return f"/app/applications/{application_id}/tags/search?q={query}"


async def text(client, path: str) -> str:
    response = await client.get(path)
    assert response.status_code == 200, path
    assert response.mimetype == "text/html"
    return await response.get_data(as_text=True)


async def test_inbox_and_thread_pages_stay_small_with_ten_thousand_tags(signed_in, application):
    thread = await make_thread(application, tags=["billing"])
    await add_tags(application.id, [f"tag number {n:05d}" for n in range(MANY_TAGS)])

    inbox = await text(signed_in, f"/app/applications/{application.id}/feedback")
    shown = await text(signed_in, f"/app/applications/{application.id}/feedback/{thread.id}")

    assert len(inbox.encode()) < PAGE_BUDGET, len(inbox.encode())
    assert len(shown.encode()) < PAGE_BUDGET, len(shown.encode())
    assert "tag number 00001" not in inbox and "tag number 00001" not in shown
    assert "data-tag-picker" in inbox and "data-tag-picker" in shown


async def test_the_search_lists_the_tags_whose_name_contains_the_text(signed_in, application):
    await make_thread(application, tags=["billing", "bug", "ui"])

    body = await text(signed_in, search(application.id, "Bil"))

    assert 'data-tag-pick="billing"' in body
    assert 'data-tag-pick="bug"' not in body and 'data-tag-pick="ui"' not in body


async def test_the_search_reads_the_pickers_field_name_too(signed_in, application):
    await make_thread(application, tags=["billing", "ui"])

    body = await text(signed_in, f"/app/applications/{application.id}/tags/search?tag=ui")

    assert 'data-tag-pick="ui"' in body and "billing" not in body


async def test_the_search_answers_at_most_its_limit_in_name_order(signed_in, application):
    await add_tags(application.id, [f"tag {n:03d}" for n in range(SEARCH_LIMIT * 3)])

    body = await text(signed_in, search(application.id, "tag"))

    assert body.count("data-tag-pick=") == SEARCH_LIMIT
    assert 'data-tag-pick="tag 000"' in body and f'data-tag-pick="tag {SEARCH_LIMIT:03d}"' not in body


async def test_a_search_without_matches_says_so(signed_in, application):
    body = await text(signed_in, search(application.id, "nothing"))

    assert "No tag matches" in body and "data-tag-pick" not in body


async def test_the_search_escapes_tag_names(signed_in, application):
    await make_thread(application, tags="<i>tag</i>")

    body = await text(signed_in, search(application.id, "tag"))

    assert "<i>tag</i>" not in body and "&lt;i&gt;tag&lt;/i&gt;" in body


async def test_another_agents_application_is_not_found(app, application):
    await make_thread(application, tags=["billing"])
    other = app.test_client()
    await sign_in(other, await make_user(email="eve@example.com"))

    response = await other.get(search(application.id, "bil"))

    assert response.status_code == 404
    assert "billing" not in await response.get_data(as_text=True)


async def test_the_search_needs_a_signed_in_agent(client, application):
    response = await client.get(search(application.id, "bil"))

    assert response.status_code in (302, 303)


@pytest.mark.parametrize("query", ["%00", "%ED%A0%80", "x" * 300])
async def test_a_search_for_text_no_tag_can_hold_finds_nothing(signed_in, application, query):
    body = await text(signed_in, search(application.id, query))

    assert "data-tag-pick" not in body
