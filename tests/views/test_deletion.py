"""Deleting in the web app: a thread from its page, the inbox's selection, a tag from the tags
page, and an application once its name is typed."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest

from app.db import atomic
from app.models import Application, Feedback, Tag
from app.repositories.sql import insert_rows, moment
from app.services.tags import color_for
from app.views.tags import PAGE_TAGS
from tests.factories import (
    application_row,
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_user,
    sign_in,
)

HX = {"HX-Request": "true"}
PAGE_BUDGET = 100 * 1024


@pytest.fixture
async def csrf(client, agent) -> str:
    """Sign ``agent`` (the application's creator) in on ``client``; its CSRF token."""
    return await sign_in(client, agent)


@pytest.fixture
async def intruder(app, application):
    """A second agent with an application of their own, signed in on a client of its own."""
    other = await make_user(email="eve@example.com")
    await make_application(other)
    client = app.test_client()
    return client, await sign_in(client, other)


@pytest.fixture
async def team(app, db):
    """An organization's application, and a client signed in as an agent (not an owner) there."""
    owner, member = await make_user(), await make_user()
    organization = await make_organization(member, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)
    client = app.test_client()
    return application, client, await sign_in(client, member)


async def html(client, path: str, status: int = 200, **kwargs) -> str:
    response = await client.get(path, **kwargs)
    assert response.status_code == status, path
    return await response.get_data(as_text=True)


async def thread_ids(application_id: int) -> list[int]:
    return sorted(await Feedback.filter(application_id=application_id).values_list("id", flat=True))


def thread_url(thread, suffix: str = "") -> str:
    return f"/app/applications/{thread.application_id}/feedback/{thread.id}{suffix}"


def inbox_url(application_id: int) -> str:
    return f"/app/applications/{application_id}/feedback"


# --- the thread page ---------------------------------------------------------------------------


async def test_the_thread_page_has_a_delete_button_that_asks_first(client, csrf, application):
    thread = await make_thread(application)

    body = await html(client, thread_url(thread))

    assert f'action="{thread_url(thread, "/delete")}"' in body
    assert f'hx-post="{thread_url(thread, "/delete")}"' in body
    assert "hx-confirm=" in body


async def test_without_javascript_the_delete_button_opens_a_confirmation_page(client, csrf, application):
    thread = await make_thread(application, message="<b>Export broken</b>")

    body = await html(client, thread_url(thread, "/delete"))

    assert re.search(rf'<form method="post" action="{re.escape(thread_url(thread, "/delete"))}"', body)
    assert 'name="csrf_token"' in body
    assert "&lt;b&gt;Export broken&lt;/b&gt;" in body and "<b>Export broken" not in body
    assert await thread_ids(application.id) == [thread.id]


async def test_deleting_a_thread_goes_back_to_the_inbox_with_a_flash(client, csrf, agent, application):
    kept = await make_thread(application, tags=["billing"])
    thread = await make_thread(application, tags=["billing"])
    await make_reply(agent, application, thread)

    response = await client.post(thread_url(thread, "/delete"), form={"csrf_token": csrf})

    assert response.status_code == 303
    assert response.headers["Location"] == inbox_url(application.id)
    assert "Thread deleted." in await html(client, inbox_url(application.id))
    assert await thread_ids(application.id) == [kept.id]
    stored = await application_row(application.id)
    assert (stored.open_threads, stored.reply_count) == (1, 0)
    assert (await Tag.get(application_id=application.id)).open_count == 1


async def test_deleting_a_thread_keeps_the_inbox_filters(client, csrf, application):
    thread = await make_thread(application)

    response = await client.post(thread_url(thread, "/delete?status=archived"), form={"csrf_token": csrf})

    assert response.headers["Location"] == inbox_url(application.id) + "?status=archived"


async def test_htmx_deletes_a_thread_and_redirects_by_header(client, csrf, application):
    thread = await make_thread(application)

    response = await client.post(thread_url(thread, "/delete"), headers={**HX, "X-CSRF-Token": csrf})

    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == inbox_url(application.id)
    assert await thread_ids(application.id) == []


async def test_deleting_a_thread_needs_the_csrf_token(client, csrf, application):
    thread = await make_thread(application)

    response = await client.post(thread_url(thread, "/delete"), form={})

    assert response.status_code == 400
    assert await thread_ids(application.id) == [thread.id]


async def test_another_agent_cannot_delete_a_thread(intruder, application):
    other, token = intruder
    thread = await make_thread(application)

    confirm = await other.get(thread_url(thread, "/delete"))
    response = await other.post(thread_url(thread, "/delete"), form={"csrf_token": token})

    assert (confirm.status_code, response.status_code) == (404, 404)
    assert await thread_ids(application.id) == [thread.id]
    assert (await application_row(application.id)).open_threads == 1


async def test_an_organization_agent_may_delete_a_thread(team):
    application, client, token = team
    thread = await make_thread(application)

    response = await client.post(thread_url(thread, "/delete"), form={"csrf_token": token})

    assert response.status_code == 303
    assert await thread_ids(application.id) == []


# --- the inbox's selection (its bulk action "delete": tests/views/test_bulk.py has the others) ---


def selection_url(application_id: int, query: str = "") -> str:
    return f"/app/applications/{application_id}/feedback/bulk{query}"


async def post_selection(client, application_id: int, csrf: str, ids: list[int], confirmed: bool = True):
    """Post the inbox's form: a repeated ``feedback_ids`` field (the test client's ``form`` keeps
    one value per name)."""
    pairs = [("csrf_token", csrf), ("action", "delete"), *(("feedback_ids", str(number)) for number in ids)]
    if confirmed:
        pairs.append(("confirmed", "1"))
    return await client.post(
        selection_url(application_id),
        data=urlencode(pairs),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


async def test_the_inbox_is_a_form_with_a_checkbox_per_thread(client, csrf, application):
    threads = [await make_thread(application) for _ in range(2)]

    body = await html(client, inbox_url(application.id))

    assert f'<form id="inbox-selection" method="post" action="{selection_url(application.id)}"' in body
    for thread in threads:
        assert f'name="feedback_ids" value="{thread.id}"' in body
    assert "Delete selected" in body


async def test_without_confirmation_the_selection_gets_a_confirmation_page(client, csrf, application):
    threads = [await make_thread(application) for _ in range(2)]

    response = await post_selection(client, application.id, csrf, [t.id for t in threads], confirmed=False)

    assert response.status_code == 200
    body = await response.get_data(as_text=True)
    assert "Delete 2 threads?" in body
    assert 'name="confirmed" value="1"' in body
    for thread in threads:
        assert f'name="feedback_ids" value="{thread.id}"' in body
    assert len(await thread_ids(application.id)) == 2


async def test_the_confirmed_selection_is_deleted_with_a_flash(client, csrf, application):
    first, second, kept = [await make_thread(application, tags=["ui"]) for _ in range(3)]

    response = await post_selection(client, application.id, csrf, [first.id, second.id])

    assert response.status_code == 303
    assert response.headers["Location"] == inbox_url(application.id)
    assert "2 threads deleted." in await html(client, inbox_url(application.id))
    assert await thread_ids(application.id) == [kept.id]
    assert (await application_row(application.id)).open_threads == 1
    assert (await Tag.get(application_id=application.id)).open_count == 1


async def test_htmx_deletes_the_selection_and_redirects_by_header(client, csrf, application):
    thread = await make_thread(application)

    response = await client.post(
        selection_url(application.id, "?status=archived"),
        form={"confirmed": "1", "action": "delete", "feedback_ids": str(thread.id)},
        headers={**HX, "X-CSRF-Token": csrf},
    )

    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == inbox_url(application.id) + "?status=archived"
    assert "1 thread deleted." in await html(client, inbox_url(application.id))


async def test_an_empty_selection_is_refused(client, csrf, application):
    thread = await make_thread(application)

    response = await client.post(
        selection_url(application.id), form={"csrf_token": csrf, "confirmed": "1", "action": "delete"}
    )

    assert response.status_code == 400
    assert "Select at least one thread." in await response.get_data(as_text=True)
    assert await thread_ids(application.id) == [thread.id]


async def test_a_selection_of_something_else_than_ids_is_refused(client, csrf, application):
    thread = await make_thread(application)

    response = await client.post(
        selection_url(application.id),
        form={"csrf_token": csrf, "confirmed": "1", "action": "delete", "feedback_ids": "x"},
    )

    assert response.status_code == 400
    assert "The feedback ids field must hold thread ids." in await response.get_data(as_text=True)
    assert await thread_ids(application.id) == [thread.id]


async def test_the_selection_ignores_threads_of_other_applications(client, csrf, agent, application):
    mine = await make_thread(application)
    other = await make_application(agent)
    theirs = await make_thread(other)

    await post_selection(client, application.id, csrf, [mine.id, theirs.id])

    assert await thread_ids(application.id) == []
    assert await thread_ids(other.id) == [theirs.id]


async def test_another_agent_cannot_delete_a_selection(intruder, application):
    other, token = intruder
    thread = await make_thread(application)

    response = await other.post(
        selection_url(application.id),
        form={"csrf_token": token, "confirmed": "1", "action": "delete", "feedback_ids": str(thread.id)},
    )

    assert response.status_code == 404
    assert await thread_ids(application.id) == [thread.id]


# --- the application ---------------------------------------------------------------------------


def delete_url(application_id: int) -> str:
    return f"/app/applications/{application_id}/delete"


async def test_the_settings_page_has_a_danger_zone_for_the_creator(client, csrf, application):
    body = await html(client, f"/app/applications/{application.id}")

    assert f'href="{delete_url(application.id)}"' in body


async def test_an_organization_agent_sees_no_danger_zone_and_may_not_delete(team):
    application, client, token = team

    body = await html(client, f"/app/applications/{application.id}")
    page = await client.get(delete_url(application.id))
    post = await client.post(delete_url(application.id), form={"csrf_token": token, "name": application.name})

    assert delete_url(application.id) not in body
    assert (page.status_code, post.status_code) == (403, 403)
    assert await Application.filter(id=application.id).exists()


async def test_the_delete_page_explains_and_asks_for_the_name(client, csrf, application):
    await make_thread(application)

    body = await html(client, delete_url(application.id))

    assert f"Delete {application.name}?" in body
    assert "1 open and 0 archived thread" in body
    assert 'name="name"' in body and 'name="csrf_token"' in body


async def test_a_wrong_name_deletes_nothing(client, csrf, application):
    thread = await make_thread(application)

    response = await client.post(delete_url(application.id), form={"csrf_token": csrf, "name": "something"})

    assert response.status_code == 400
    assert "Type the application&#39;s name to confirm." in await response.get_data(as_text=True)
    assert await Application.filter(id=application.id).exists()
    assert await thread_ids(application.id) == [thread.id]


async def test_the_right_name_deletes_the_application(client, csrf, agent, application):
    await make_thread(application)
    kept = await make_application(agent, name="Kept")

    response = await client.post(
        delete_url(application.id), form={"csrf_token": csrf, "name": f" {application.name} "}
    )

    assert response.status_code == 303
    assert response.headers["Location"] == "/app/applications"
    listing = await html(client, "/app/applications")
    assert f"{application.name} was deleted with its 1 thread." in listing
    assert not await Application.filter(id=application.id).exists()
    assert await thread_ids(application.id) == []
    assert await Application.filter(id=kept.id).exists()


async def test_another_agent_cannot_delete_an_application(intruder, application):
    other, token = intruder

    page = await other.get(delete_url(application.id))
    post = await other.post(delete_url(application.id), form={"csrf_token": token, "name": application.name})

    assert (page.status_code, post.status_code) == (404, 404)
    assert await Application.filter(id=application.id).exists()


# --- the tags page -----------------------------------------------------------------------------


def tags_url(application_id: int, suffix: str = "") -> str:
    return f"/app/applications/{application_id}/tags{suffix}"


async def add_tags(application_id: int, names: list[str]) -> None:
    now = moment(datetime.now(UTC))
    rows = [(application_id, name, color_for(name), 0, 0, now) for name in names]
    await atomic(
        lambda: insert_rows(
            "tags", ("application_id", "name", "color", "open_count", "archived_count", "created_at"), rows
        )
    )


async def test_the_application_header_links_the_tags_page(client, csrf, application):
    body = await html(client, inbox_url(application.id))

    assert f'href="{tags_url(application.id)}"' in body


async def test_the_tags_page_lists_tags_with_their_counts(client, csrf, application):
    await make_thread(application, tags=["billing", "ui"])
    await make_thread(application, tags=["billing"])
    billing = await Tag.get(application_id=application.id, name="billing")

    body = await html(client, tags_url(application.id))

    row = body[body.index("billing</span>") :]
    assert re.match(r"billing</span></td>\s*<td>2</td>\s*<td>0</td>", row)
    assert f'action="{tags_url(application.id, f"/{billing.id}/delete")}"' in body


async def test_the_tags_page_shows_the_first_tags_and_a_search_with_ten_thousand(client, csrf, application):
    await add_tags(application.id, [f"tag number {n:05d}" for n in range(10_000)])

    body = await html(client, tags_url(application.id))

    assert len(body.encode()) < PAGE_BUDGET, len(body.encode())
    assert body.count("<tr>") == PAGE_TAGS + 1  # and the head's
    assert "tag number 00000" in body and f"tag number {PAGE_TAGS:05d}" not in body
    assert 'type="search" name="q"' in body


async def test_the_tags_page_searches(client, csrf, application):
    await make_thread(application, tags=["billing", "ui"])

    body = await html(client, tags_url(application.id, "?q=bil"))
    fragment = await html(client, tags_url(application.id, "?q=ui"), headers=HX)

    assert "billing" in body and ">ui<" not in body
    assert fragment.lstrip().startswith("{#") is False and 'id="tag-list"' in fragment
    assert "<html" not in fragment and "billing" not in fragment


async def test_the_tags_page_escapes_tag_names(client, csrf, application):
    await make_thread(application, tags=["<i>x</i>"])

    body = await html(client, tags_url(application.id))

    assert "<i>x</i>" not in body and "&lt;i&gt;x&lt;/i&gt;" in body


async def test_deleting_a_tag_untags_its_threads_with_a_flash(client, csrf, application):
    thread = await make_thread(application, tags=["billing", "ui"])
    billing = await Tag.get(application_id=application.id, name="billing")

    response = await client.post(
        tags_url(application.id, f"/{billing.id}/delete?q=b"), form={"csrf_token": csrf}
    )

    assert response.status_code == 303
    assert response.headers["Location"] == tags_url(application.id, "?q=b")
    assert "Tag deleted." in await html(client, tags_url(application.id))
    assert await Tag.filter(application_id=application.id).values_list("name", flat=True) == ["ui"]
    assert await thread_ids(application.id) == [thread.id]


async def test_htmx_deletes_a_tag_and_gets_the_list_back(client, csrf, application):
    await make_thread(application, tags=["billing", "ui"])
    billing = await Tag.get(application_id=application.id, name="billing")

    response = await client.post(
        tags_url(application.id, f"/{billing.id}/delete"), headers={**HX, "X-CSRF-Token": csrf}
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert 'id="tag-list"' in body and "Tag deleted." in body
    assert "billing" not in body and "ui" in body


async def test_deleting_an_unknown_tag_is_not_found(client, csrf, agent, application):
    other = await make_application(agent)
    await make_thread(other, tags=["billing"])
    tag = await Tag.get(application_id=other.id)

    response = await client.post(tags_url(application.id, f"/{tag.id}/delete"), form={"csrf_token": csrf})

    assert response.status_code == 404
    assert await Tag.filter(id=tag.id).exists()


async def test_an_organization_agent_sees_the_tags_but_may_not_delete_them(team):
    application, client, token = team
    await make_thread(application, tags=["billing"])
    tag = await Tag.get(application_id=application.id)

    body = await html(client, tags_url(application.id))
    response = await client.post(tags_url(application.id, f"/{tag.id}/delete"), form={"csrf_token": token})

    assert "billing" in body and "/delete" not in body
    assert response.status_code == 403
    assert await Tag.filter(id=tag.id).exists()


async def test_another_agent_sees_no_tags_and_deletes_none(intruder, application):
    other, token = intruder
    await make_thread(application, tags=["billing"])
    tag = await Tag.get(application_id=application.id)

    page = await other.get(tags_url(application.id))
    post = await other.post(tags_url(application.id, f"/{tag.id}/delete"), form={"csrf_token": token})

    assert (page.status_code, post.status_code) == (404, 404)
    assert "billing" not in await page.get_data(as_text=True)
    assert await Tag.filter(id=tag.id).exists()
