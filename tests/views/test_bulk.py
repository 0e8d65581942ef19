"""The inbox's selection and bulk actions, and its Mine / Unassigned filter, in the web app
(deleting a selection is tests/views/test_deletion.py)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from app.models import BlockedSender, Feedback, FeedbackTag
from app.services import feedback
from app.services.organizations import remove_member
from app.views import inbox as inbox_views
from tests.factories import (
    application_row,
    make_application,
    make_organization,
    make_thread,
    make_user,
    sign_in,
)
from tests.integrity import counter_mismatches

HTMX = {"HX-Request": "true"}


@pytest.fixture
async def team(app, db):
    """An organization's application; Andy (an agent of it) signed in on a client of his own."""
    olga = await make_user(email="olga@example.com", name="Olga Owner")
    andy = await make_user(email="andy@example.com", name="Andy Agent")
    organization = await make_organization(andy, owners=(olga,), name="Acme")
    application = await make_application(olga, organization_id=organization.id)
    client = app.test_client()
    csrf = await sign_in(client, andy)
    return olga, andy, organization, application, client, csrf


def inbox(application, query: str = "") -> str:
    return f"/app/applications/{application.id}/feedback{query}"


def bulk_url(application, query: str = "") -> str:
    return f"/app/applications/{application.id}/feedback/bulk{query}"


async def post(client, url: str, csrf: str, pairs: list[tuple[str, str]], headers=None):
    """Post the inbox's form (repeated fields, as a browser sends them)."""
    return await client.post(
        url,
        data=urlencode([("csrf_token", csrf), *pairs]),
        headers={"Content-Type": "application/x-www-form-urlencoded", **(headers or {})},
    )


def ids(*threads) -> list[tuple[str, str]]:
    return [("feedback_ids", str(thread.id)) for thread in threads]


async def text(client, path: str) -> str:
    response = await client.get(path)
    assert response.status_code == 200, path
    return await response.get_data(as_text=True)


async def test_the_inbox_offers_the_bulk_actions_and_the_agents(team):
    olga, _, _, application, client, _ = team
    await make_thread(application)

    body = await text(client, inbox(application))

    assert f'<form id="inbox-selection" method="post" action="{bulk_url(application)}"' in body
    for action in ("archive", "tag", "untag", "assign", "spam", "delete"):
        assert f'name="action" value="{action}"' in body, action
    assert f'<option value="{olga.id}">Olga Owner</option>' in body
    assert "Andy Agent (me)" in body
    assert "data-assign-dialog" in body and "data-me=" in body
    assert (
        "<kbd>x</kbd> select" in body
        and "<kbd>a</kbd> assign" in body
        and "<kbd>i</kbd> assign to me" in body
    )
    assert "Select all" not in body  # one page: nothing beyond it


async def test_select_all_matching_is_offered_when_more_than_a_page_matches(team, monkeypatch):
    monkeypatch.setattr(inbox_views, "PAGE_SIZE", 2)
    _, _, _, application, client, _ = team
    for _ in range(3):
        await make_thread(application, tags=["billing"])
    await make_thread(application)

    everything = await text(client, inbox(application))
    billing = await text(client, inbox(application, "?tag=billing"))

    assert "Select all 4 threads matching this view" in everything
    assert "Select all 3 threads matching these filters" in billing
    assert 'name="scope" value="matching"' in billing


async def test_archive_the_ticked_threads(team):
    _, _, _, application, client, csrf = team
    first, second, kept = [await make_thread(application, tags=["ui"]) for _ in range(3)]

    response = await post(
        client, bulk_url(application, "?q=x"), csrf, [("action", "archive"), *ids(first, second)]
    )

    assert response.status_code == 303
    assert response.headers["Location"] == inbox(application, "?q=x")
    assert "2 threads archived." in await text(client, inbox(application))
    assert sorted(await Feedback.filter(archived=True).values_list("id", flat=True)) == [first.id, second.id]
    assert await counter_mismatches() == []
    assert kept


async def test_archive_everything_matching_across_pages(team, monkeypatch):
    monkeypatch.setattr(inbox_views, "PAGE_SIZE", 2)
    _, _, _, application, client, csrf = team
    billing = [await make_thread(application, tags=["billing"]) for _ in range(5)]
    other = await make_thread(application)

    response = await post(
        client,
        bulk_url(application, f"?tag=billing&before={billing[-2].id}"),
        csrf,
        [("action", "archive"), ("scope", "matching"), *ids(billing[0])],
    )

    assert response.status_code == 303
    assert response.headers["Location"] == inbox(application, "?tag=billing")
    assert "5 threads archived." in await text(client, inbox(application))
    assert (await application_row(application.id)).archived_threads == 5
    assert not (await Feedback.get(id=other.id)).archived
    assert await counter_mismatches() == []


async def test_tag_untag_and_assign_say_what_they_did(team):
    olga, andy, _, application, client, csrf = team
    tagged, plain = await make_thread(application, tags=["billing"]), await make_thread(application)

    await post(
        client, bulk_url(application), csrf, [("action", "tag"), ("tag", " Billing "), *ids(tagged, plain)]
    )
    tag_notice = await text(client, inbox(application))
    await post(client, bulk_url(application), csrf, [("action", "untag"), ("tag", "billing"), *ids(plain)])
    untag_notice = await text(client, inbox(application))
    await post(
        client,
        bulk_url(application),
        csrf,
        [("action", "assign"), ("assignee_id", str(olga.id)), *ids(tagged, plain)],
    )
    assign_notice = await text(client, inbox(application))
    await post(
        client,
        bulk_url(application),
        csrf,
        [("action", "assign"), ("assignee_id", str(andy.id)), *ids(plain)],
    )
    mine_notice = await text(client, inbox(application))

    assert "1 thread tagged billing. 1 left as they were." in tag_notice
    assert "1 thread untagged billing." in untag_notice
    assert "2 threads assigned to Olga Owner." in assign_notice
    assert "1 thread assigned to you." in mine_notice
    assert list(await FeedbackTag.all().values_list("feedback_id", flat=True)) == [tagged.id]


async def test_spam_asks_first_without_javascript(team):
    _, _, _, application, client, csrf = team
    spam = [await make_thread(application, email=f"spammer{n}@example.net") for n in range(2)]

    asked = await post(client, bulk_url(application), csrf, [("action", "spam"), *ids(*spam)])
    page = await asked.get_data(as_text=True)
    done = await post(
        client, bulk_url(application), csrf, [("action", "spam"), ("confirmed", "1"), *ids(*spam)]
    )

    assert asked.status_code == 200
    assert "Mark 2 threads as spam?" in page and 'name="confirmed" value="1"' in page
    assert done.status_code == 303
    assert "2 threads marked as spam and deleted (their senders are blocked)." in await text(
        client, inbox(application)
    )
    assert await BlockedSender.filter(application_id=application.id).count() == 2
    assert not await Feedback.filter(application_id=application.id).exists()


async def test_deleting_everything_matching_asks_with_the_count(team):
    _, _, _, application, client, csrf = team
    for _ in range(3):
        await make_thread(application, tags=["junk"])
    kept = await make_thread(application)

    asked = await post(
        client, bulk_url(application, "?tag=junk"), csrf, [("action", "delete"), ("scope", "matching")]
    )
    page = await asked.get_data(as_text=True)
    done = await post(
        client,
        bulk_url(application, "?tag=junk"),
        csrf,
        [("action", "delete"), ("scope", "matching"), ("confirmed", "1")],
    )

    assert "Delete 3 threads?" in page and "Every thread matching the inbox's filters goes" in page
    assert 'name="scope" value="matching"' in page
    assert done.status_code == 303
    assert list(await Feedback.filter(application_id=application.id).values_list("id", flat=True)) == [
        kept.id
    ]


async def test_htmx_runs_a_confirmed_action_and_redirects_by_header(team):
    _, _, _, application, client, csrf = team
    thread = await make_thread(application)

    response = await post(
        client,
        bulk_url(application, "?status=archived"),
        csrf,
        [("action", "spam"), ("confirmed", "1"), *ids(thread)],
        headers=HTMX,
    )

    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == inbox(application, "?status=archived")


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([("action", "archive")], "Select at least one thread."),
        ([("action", "explode"), ("feedback_ids", "1")], "The action field must be one of"),
        ([("action", "tag"), ("feedback_ids", "1")], "Enter a tag name."),
        (
            [("action", "assign"), ("assignee_id", "abc"), ("feedback_ids", "1")],
            "The assignee id field must be",
        ),
    ],
)
async def test_a_refused_action_says_why(team, pairs, message):
    _, _, _, application, client, csrf = team
    thread = await make_thread(application)
    pairs = [
        (name, str(thread.id) if value == "1" and name == "feedback_ids" else value) for name, value in pairs
    ]

    response = await post(client, bulk_url(application), csrf, pairs)
    with_htmx = await post(client, bulk_url(application), csrf, pairs, headers=HTMX)

    assert response.status_code == 400
    assert message in await response.get_data(as_text=True)
    assert with_htmx.headers["HX-Redirect"] == inbox(application)
    assert message in await text(client, inbox(application))
    assert not (await Feedback.get(id=thread.id)).archived


async def test_mine_and_unassigned_filter_the_inbox_and_rows_show_the_assignee(app, team):
    olga, andy, organization, application, client, _ = team
    mine = await make_thread(application, message="For Andy")
    theirs = await make_thread(application, message="For Olga")
    await make_thread(application, message="For nobody")
    await feedback.assign(olga, application, mine, andy.id)
    await feedback.assign(olga, application, theirs, olga.id)

    everything = await text(client, inbox(application))
    only_mine = await text(client, inbox(application, "?assignee=mine"))
    unassigned = await text(client, inbox(application, "?assignee=unassigned"))

    assert "For Andy" in everything and "→ Andy Agent" in everything and "→ Olga Owner" in everything
    assert "For Andy" in only_mine and "For Olga" not in only_mine and "For nobody" not in only_mine
    assert "For nobody" in unassigned and "For Andy" not in unassigned
    assert '<option value="mine" selected>Mine</option>' in only_mine
    assert f"/feedback/{mine.id}?assignee=mine" in only_mine  # the thread page keeps the filter
    await remove_member(olga, organization, andy.id)
    olga_client = app.test_client()
    await sign_in(olga_client, olga)
    assert "→ Andy Agent (left)" in await text(olga_client, inbox(application))


async def test_another_agent_can_run_no_bulk_action_on_the_application(app, team):
    _, _, _, application, _, _ = team
    thread = await make_thread(application)
    bob = await make_user(email="bob@example.com")
    await make_application(bob)
    other = app.test_client()
    csrf = await sign_in(other, bob)

    response = await post(
        other, bulk_url(application), csrf, [("action", "delete"), ("confirmed", "1"), *ids(thread)]
    )
    matching = await post(other, bulk_url(application), csrf, [("action", "archive"), ("scope", "matching")])

    assert (response.status_code, matching.status_code) == (404, 404)
    assert not (await Feedback.get(id=thread.id)).archived


async def test_the_bulk_form_needs_the_csrf_token(team):
    _, _, _, application, client, _ = team
    thread = await make_thread(application)

    response = await client.post(
        bulk_url(application),
        data=urlencode([("action", "archive"), *ids(thread)]),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )

    assert response.status_code == 400
    assert not (await Feedback.get(id=thread.id)).archived
