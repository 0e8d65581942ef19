"""Bulk actions through the management API: POST /applications/{id}/feedback/bulk."""

from __future__ import annotations

import pytest

from app.models import BlockedSender, Feedback, FeedbackTag
from app.services import feedback
from tests.factories import (
    application_row,
    body_json,
    body_text,
    make_application,
    make_thread,
    make_token,
    make_user,
)
from tests.integrity import counter_mismatches


def bulk_path(application) -> str:
    return f"/applications/{application.id}/feedback/bulk"


async def assert_error(response, status: int, message: str) -> None:
    assert (response.status_code, response.mimetype) == (status, "text/plain"), await body_text(response)
    assert await body_text(response) == message


async def test_archive_by_ids_answers_what_was_done(api, token, application):
    threads = [await make_thread(application) for _ in range(3)]
    await feedback.set_archived(application, threads[0], True)

    response = await api.post(
        bulk_path(application), token, json={"action": "archive", "feedback_ids": [t.id for t in threads]}
    )

    assert response.status_code == 200
    assert await body_json(response) == {
        "data": {"action": "archive", "selected": 3, "changed": 2, "next_before": None}
    }
    assert (await application_row(application.id)).archived_threads == 3
    assert await counter_mismatches() == []


async def test_tag_by_filter_takes_the_lists_filters(api, token, application):
    negative = [await make_thread(application, sentiment="negative") for _ in range(2)]
    await make_thread(application, sentiment="positive")

    response = await api.post(
        bulk_path(application),
        token,
        json={"action": "tag", "tag": "Angry", "filters": {"sentiment": "negative", "archived": False}},
    )

    assert (await body_json(response))["data"]["changed"] == 2
    tagged = sorted(await FeedbackTag.filter(tag__name="angry").values_list("feedback_id", flat=True))
    assert tagged == sorted(t.id for t in negative)


async def test_assign_to_me_by_filter_and_unassign_by_ids(api, token, agent, application):
    threads = [await make_thread(application) for _ in range(2)]

    assigned = await api.post(
        bulk_path(application),
        token,
        json={"action": "assign", "filters": {"assignee": "none"}, "assignee_id": agent.id},
    )
    listed = await body_json(await api.get(f"/applications/{application.id}/feedback?assignee=me", token))
    unassigned = await api.post(
        bulk_path(application),
        token,
        json={"action": "assign", "feedback_ids": [threads[0].id], "assignee_id": None},
    )

    assert (await body_json(assigned))["data"]["changed"] == 2
    assert sorted(item["id"] for item in listed["data"]) == sorted(t.id for t in threads)
    assert (await body_json(unassigned))["data"]["changed"] == 1
    assert (await Feedback.get(id=threads[0].id)).assignee_id is None


async def test_spam_blocks_and_deletes(api, token, application):
    spam = await make_thread(application, email="spammer@example.net")
    kept = await make_thread(application)

    response = await api.post(
        bulk_path(application), token, json={"action": "spam", "feedback_ids": [spam.id]}
    )

    assert (await body_json(response))["data"]["changed"] == 1
    assert await BlockedSender.exists(application_id=application.id, value="spammer@example.net")
    assert list(await Feedback.filter(application_id=application.id).values_list("id", flat=True)) == [
        kept.id
    ]


async def test_delete_by_filter_deletes_every_match(api, token, application):
    for _ in range(3):
        await make_thread(application, tags=["junk"])
    kept = await make_thread(application)

    response = await api.post(
        bulk_path(application), token, json={"action": "delete", "filters": {"tag": "junk"}}
    )

    assert (await body_json(response))["data"]["changed"] == 3
    assert list(await Feedback.filter(application_id=application.id).values_list("id", flat=True)) == [
        kept.id
    ]
    assert await counter_mismatches() == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"feedback_ids": [1]},
            "The action field must be one of archive, unarchive, tag, untag, assign, spam, delete.",
        ),
        ({"action": "archive"}, "Send either feedback_ids or filters."),
        ({"action": "archive", "feedback_ids": [1], "filters": {}}, "Send either feedback_ids or filters."),
        ({"action": "archive", "feedback_ids": ["x"]}, "The feedback ids field must hold thread ids."),
        ({"action": "archive", "filters": {"since": "yesterday"}}, "The since field must be an integer."),
        (
            {"action": "archive", "filters": {"page": 2}},
            "The filters field must be an object of the feedback list's filters.",
        ),
        ({"action": "tag", "feedback_ids": [1]}, "Enter a tag name."),
        ({"action": "assign", "feedback_ids": [1]}, "The assignee id field is required."),
        (
            {"action": "assign", "feedback_ids": [1], "assignee_id": 999999},
            "The assignee must be an agent of the application.",
        ),
    ],
)
async def test_a_malformed_request_is_refused(api, token, application, body, message):
    thread = await make_thread(application)

    await assert_error(await api.post(bulk_path(application), token, json=body), 400, message)

    assert not (await Feedback.get(id=thread.id)).archived


async def test_a_read_token_may_not(api, agent, application):
    response = await api.post(
        bulk_path(application), await make_token(agent, "read"), json={"action": "archive", "filters": {}}
    )

    await assert_error(response, 403, "Insufficient scope")


async def test_another_users_application_is_invalid_and_their_threads_are_ignored(api, token, application):
    """Isolation: Bob's request on Alice's application is 404; Alice's ids in a request on Bob's own
    application change nothing of hers."""
    mine = await make_thread(application)
    bob = await make_user(email="bob@example.com")
    bob_app = await make_application(bob)
    bob_token = await make_token(bob)

    foreign = await api.post(bulk_path(application), bob_token, json={"action": "delete", "filters": {}})
    ignored = await api.post(
        bulk_path(bob_app), bob_token, json={"action": "delete", "feedback_ids": [mine.id]}
    )

    await assert_error(foreign, 404, "Invalid application")
    assert (await body_json(ignored))["data"] == {
        "action": "delete",
        "selected": 0,
        "changed": 0,
        "next_before": None,
    }
    assert await Feedback.exists(id=mine.id)
