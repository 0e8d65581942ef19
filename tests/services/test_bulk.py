"""Bulk actions: each action on a selection by ids or by filter, in batches, with exact counters
and one webhook event per changed thread."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from app.db import atomic
from app.errors import ValidationError
from app.models import BlockedSender, Feedback, FeedbackTag, OutboundEmail, Tag, WebhookEvent
from app.services import bulk, feedback, notifications, tags
from app.services.deployment import use_settings
from app.services.mail.outbox import deliver_due
from app.services.thread_filters import UNASSIGNED, ThreadFilters
from tests.factories import (
    application_row,
    make_application,
    make_organization,
    make_thread,
    make_user,
    make_webhook,
)
from tests.integrity import counter_mismatches

HOOK = "http://127.0.0.1:9/hooks"


@pytest.fixture
async def team(db):
    olga = await make_user(email="olga@example.com", name="Olga Owner")
    andy = await make_user(email="andy@example.com", name="Andy Agent")
    organization = await make_organization(andy, owners=(olga,), name="Acme")
    application = await make_application(olga, organization_id=organization.id)
    return olga, andy, application


async def run(actor, application, action, selection, tmp_path, **extra):
    return await bulk.run(actor, await application_row(application.id), action, selection, tmp_path, **extra)


async def hooked(settings, owner, application):
    """Webhooks on: an endpoint of the application that hears every event; the events so far go."""
    hooks = dataclasses.replace(settings, webhook_allow_private=True)
    use_settings(hooks)
    await make_webhook(owner, application, HOOK, hooks)
    await atomic(lambda: WebhookEvent.all().delete())


async def announced() -> list[tuple[str, int]]:
    return sorted((e.type, json.loads(e.payload)["data"]["id"]) for e in await WebhookEvent.all())


async def test_archive_by_ids_moves_every_counter_and_announces_each_changed_thread(team, settings, tmp_path):
    olga, _, application = team
    first = await make_thread(application, tags=["billing", "ui"])
    second = await make_thread(application, tags=["billing"])
    kept = await make_thread(application, tags=["billing"])
    await feedback.set_archived(application, second, True)
    await hooked(settings, olga, application)

    done = await run(olga, application, "archive", bulk.Selection.of_ids([first.id, second.id]), tmp_path)

    assert (done.action, done.selected, done.changed, done.next_before) == ("archive", 2, 1, None)
    assert await announced() == [("feedback.updated", first.id)]
    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (1, 2)
    billing = await Tag.get(application_id=application.id, name="billing")
    assert (billing.open_count, billing.archived_count) == (1, 2)
    assert not (await Feedback.get(id=kept.id)).archived
    assert await counter_mismatches() == []


async def test_unarchive_moves_them_back(team, settings, tmp_path):
    olga, _, application = team
    threads = [await make_thread(application, tags=["ui"]) for _ in range(3)]
    for thread in threads:
        await feedback.set_archived(application, thread, True)

    done = await run(olga, application, "unarchive", bulk.Selection.of_ids([t.id for t in threads]), tmp_path)

    assert done.changed == 3
    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (3, 0)
    assert await counter_mismatches() == []


async def test_ids_of_other_applications_are_neither_selected_nor_changed(team, settings, tmp_path):
    olga, _, application = team
    mine = await make_thread(application)
    other = await make_application(olga)
    theirs = await make_thread(other)

    for action in ("archive", "delete"):
        done = await run(olga, application, action, bulk.Selection.of_ids([mine.id, theirs.id]), tmp_path)
        assert (done.selected, done.changed) == (1, 1), action

    assert await Feedback.filter(id=theirs.id, archived=False).exists()


async def test_tag_creates_the_tag_and_counts_each_new_link(team, settings, tmp_path):
    olga, _, application = team
    tagged = await make_thread(application, tags=["billing"])
    archived = await make_thread(application)
    plain = await make_thread(application)
    await feedback.set_archived(application, archived, True)
    await hooked(settings, olga, application)

    done = await run(
        olga,
        application,
        "tag",
        bulk.Selection.of_ids([tagged.id, archived.id, plain.id]),
        tmp_path,
        tag="  Billing ",
    )

    assert (done.selected, done.changed) == (3, 2)
    billing = await Tag.get(application_id=application.id, name="billing")
    assert (billing.open_count, billing.archived_count) == (2, 1)
    assert await announced() == sorted([("feedback.updated", archived.id), ("feedback.updated", plain.id)])
    assert await counter_mismatches() == []


async def test_tag_leaves_out_threads_that_have_the_most_tags(team, settings, tmp_path):
    olga, _, application = team
    full = await make_thread(application)
    for number in range(20):
        await tags.add_tag_to_thread(application, full, f"t{number}")
    room = await make_thread(application)

    done = await run(olga, application, "tag", bulk.Selection.of_ids([full.id, room.id]), tmp_path, tag="new")

    assert done.changed == 1
    assert await FeedbackTag.filter(feedback_id=full.id).count() == 20
    assert await counter_mismatches() == []


async def test_tag_respects_the_applications_quota_of_tags(team, settings, tmp_path):
    olga, _, application = team
    thread = await make_thread(application, tags=["one", "two"])

    with pytest.raises(ValidationError, match="has 2 tags, the most it may have"):
        await run(
            olga, application, "tag", bulk.Selection.of_ids([thread.id]), tmp_path, tag="three", most_tags=2
        )
    done = await run(
        olga, application, "tag", bulk.Selection.of_ids([thread.id]), tmp_path, tag="two", most_tags=2
    )

    assert done.changed == 0
    assert not await Tag.exists(name="three")


@pytest.mark.parametrize("tag", [None, "", "   ", 5, "x" * 65])
async def test_tag_and_untag_need_a_tag_name(team, settings, tmp_path, tag):
    olga, _, application = team
    thread = await make_thread(application)

    for action in ("tag", "untag"):
        with pytest.raises(ValidationError, match="tag name"):
            await run(olga, application, action, bulk.Selection.of_ids([thread.id]), tmp_path, tag=tag)


async def test_untag_removes_the_links_and_their_counts(team, settings, tmp_path):
    olga, _, application = team
    threads = [await make_thread(application, tags=["billing", "ui"]) for _ in range(3)]
    await feedback.set_archived(application, threads[0], True)

    done = await run(
        olga, application, "untag", bulk.Selection.of_ids([t.id for t in threads]), tmp_path, tag="billing"
    )
    nothing = await run(
        olga, application, "untag", bulk.Selection.of_ids([threads[0].id]), tmp_path, tag="unknown"
    )

    assert (done.changed, nothing.changed) == (3, 0)
    billing = await Tag.get(application_id=application.id, name="billing")
    assert (billing.open_count, billing.archived_count) == (0, 0)
    assert await counter_mismatches() == []


async def test_assign_assigns_and_e_mails_the_assignee_once_per_batch(team, mail_settings, relay, tmp_path):
    olga, andy, application = team
    await notifications.set_mode(andy, application, "instant")
    threads = [await make_thread(application) for _ in range(3)]
    await atomic(lambda: OutboundEmail.all().delete())

    done = await run(
        olga,
        application,
        "assign",
        bulk.Selection.of_ids([t.id for t in threads]),
        tmp_path,
        assignee_id=andy.id,
    )

    assert done.changed == 3
    assert set(
        await Feedback.filter(application_id=application.id).values_list("assignee_id", flat=True)
    ) == {andy.id}
    assert await deliver_due(mail_settings) == 1
    [message] = relay.messages
    assert message["Subject"] == f"Olga Owner assigned you 3 threads in {application.name}"
    text = message.get_body(("plain",)).get_content()
    assert all(f"/feedback/{thread.id}" in text for thread in threads)
    assert "customer" not in text  # links only: nothing of the customers


async def test_assign_refuses_someone_who_is_no_agent_and_unassigns_with_none(team, settings, tmp_path):
    olga, andy, application = team
    thread = await make_thread(application)
    stranger = await make_user()

    with pytest.raises(ValidationError, match=re.escape("The assignee must be an agent of the application.")):
        await run(
            olga, application, "assign", bulk.Selection.of_ids([thread.id]), tmp_path, assignee_id=stranger.id
        )
    await run(olga, application, "assign", bulk.Selection.of_ids([thread.id]), tmp_path, assignee_id=andy.id)
    done = await run(
        olga, application, "assign", bulk.Selection.of_ids([thread.id]), tmp_path, assignee_id=None
    )

    assert done.changed == 1
    assert (await Feedback.get(id=thread.id)).assignee_id is None


async def test_spam_blocks_each_sender_once_and_deletes_the_threads(team, settings, tmp_path):
    olga, _, application = team
    spam = [
        await make_thread(application, email="Spammer@Example.net", tags=["x"]),
        await make_thread(application, email="spammer@example.net"),
        await make_thread(application, email="other@example.net"),
    ]
    kept = await make_thread(application, email="customer@example.org")
    await hooked(settings, olga, application)

    done = await run(olga, application, "spam", bulk.Selection.of_ids([t.id for t in spam]), tmp_path)

    assert (done.selected, done.changed) == (3, 3)
    blocked = sorted(
        await BlockedSender.filter(application_id=application.id).values_list("value", flat=True)
    )
    assert blocked == ["other@example.net", "spammer@example.net"]
    assert list(await Feedback.filter(application_id=application.id).values_list("id", flat=True)) == [
        kept.id
    ]
    assert await announced() == sorted(("feedback.deleted", t.id) for t in spam)
    assert await counter_mismatches() == []


async def test_delete_deletes_and_moves_the_counters(team, settings, tmp_path):
    olga, _, application = team
    threads = [await make_thread(application, tags=["ui"]) for _ in range(4)]

    done = await run(
        olga, application, "delete", bulk.Selection.of_ids([t.id for t in threads[:3]]), tmp_path
    )

    assert done.changed == 3
    assert (await application_row(application.id)).open_threads == 1
    assert await counter_mismatches() == []


async def test_a_filter_selects_every_match_across_batches_and_pages(team, settings, tmp_path, monkeypatch):
    monkeypatch.setattr(bulk, "BATCH", 3)
    olga, andy, application = team
    billing = [await make_thread(application, tags=["billing"]) for _ in range(7)]
    other = await make_thread(application, tags=["ui"])
    await feedback.assign(olga, application, billing[0], andy.id)

    done = await run(
        olga, application, "archive", bulk.Selection.matching(ThreadFilters(tag="billing")), tmp_path
    )
    unassigned = await run(
        olga,
        application,
        "assign",
        bulk.Selection.matching(ThreadFilters(archived=True, assignee=UNASSIGNED)),
        tmp_path,
        assignee_id=olga.id,
    )

    assert (done.selected, done.changed, done.next_before) == (7, 7, None)
    assert (unassigned.selected, unassigned.changed) == (6, 6)
    assert not (await Feedback.get(id=other.id)).archived
    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (1, 7)
    assert await counter_mismatches() == []


async def test_a_filter_stops_at_the_most_one_request_takes_and_says_where_to_go_on(
    team, settings, tmp_path, monkeypatch
):
    monkeypatch.setattr(bulk, "BATCH", 2)
    monkeypatch.setattr(bulk, "MAX_BY_FILTER", 5)
    olga, _, application = team
    threads = [await make_thread(application) for _ in range(8)]
    newest_first = sorted((t.id for t in threads), reverse=True)

    first = await run(
        olga, application, "tag", bulk.Selection.matching(ThreadFilters()), tmp_path, tag="seen"
    )
    rest = await run(
        olga,
        application,
        "tag",
        bulk.Selection.matching(ThreadFilters(before=first.next_before)),
        tmp_path,
        tag="seen",
    )

    assert (first.selected, first.changed, first.next_before) == (5, 5, newest_first[4])
    assert (rest.selected, rest.changed, rest.next_before) == (3, 3, None)
    assert await counter_mismatches() == []


async def test_a_text_filter_selects_through_the_search(team, settings, tmp_path):
    olga, _, application = team
    match = await make_thread(application, message="The export button does nothing")
    await make_thread(application, message="Love the new colours")

    done = await run(
        olga, application, "archive", bulk.Selection.matching(ThreadFilters(query="export")), tmp_path
    )

    assert done.changed == 1
    assert (await Feedback.get(id=match.id)).archived


async def test_too_many_ids_are_refused(team, settings, tmp_path):
    olga, _, application = team

    with pytest.raises(ValidationError, match=re.escape("Select at most 500 threads at once.")):
        await run(olga, application, "archive", bulk.Selection.of_ids(range(1, 502)), tmp_path)


def test_an_unknown_action_is_refused():
    with pytest.raises(ValidationError, match="The action field must be one of archive, unarchive"):
        bulk.check_action("explode")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "The action field must be one of"),
        ({"action": "archive"}, "Send either feedback_ids or filters."),
        ({"action": "archive", "feedback_ids": [1], "filters": {}}, "Send either feedback_ids or filters."),
        ({"action": "archive", "feedback_ids": "1"}, "The feedback ids field must hold thread ids."),
        ({"action": "archive", "feedback_ids": []}, "Select at least one thread."),
        ({"action": "archive", "filters": []}, "The filters field must be an object"),
        ({"action": "archive", "filters": {"colour": "red"}}, "The filters field must be an object"),
        ({"action": "archive", "filters": {"tag": ["a"]}}, "The filters field must be an object"),
        ({"action": "archive", "filters": {"sentiment": "angry"}}, "The sentiment field must be one of"),
        ({"action": "assign", "feedback_ids": [1]}, "The assignee id field is required."),
        ({"action": "assign", "feedback_ids": [1], "assignee_id": "x"}, "The assignee id field must be"),
    ],
)
def test_a_malformed_request_is_refused(body, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        bulk.read_request(body, user_id=7)


def test_a_request_reads_the_filters_as_the_list_does():
    asked = bulk.read_request(
        {
            "action": "assign",
            "filters": {"archived": True, "assignee": "me", "nps_min": 9, "q": None, "before": "100"},
            "assignee_id": None,
        },
        user_id=7,
    )

    assert asked.selection.filters == ThreadFilters(archived=True, assignee=7, nps_min=9, before=100)
    assert (asked.action, asked.assignee_id) == ("assign", None)
