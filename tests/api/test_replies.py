"""Replies of the management API: POST a reply or note to a thread, reply-time statistics, and
GET /applications/{id}/replies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.db import atomic
from app.models import Feedback, Reply
from app.services.replies import recount_reply_days
from tests.api.shapes import REPLY_FIELDS
from tests.conftest import BASE_URL
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_token,
    make_user,
)

FEEDBACK_SUMMARY_FIELDS = {"id", "email", "message", "sentiment", "archived", "created_at", "updated_at"}


@pytest.fixture
async def thread(application):
    return await make_thread(application)


@pytest.fixture
async def team_agent(db):
    return await make_user(email="team@example.com", name="Tess Team", plan="team")


@pytest.fixture
async def team_token(team_agent):
    return await make_token(team_agent)


@pytest.fixture
async def team_application(team_agent):
    return await make_application(team_agent)


def replies_path(application, thread) -> str:
    return f"/applications/{application.id}/feedback/{thread.id}/replies"


def list_path(application, query: str = "") -> str:
    return f"/applications/{application.id}/replies{query}"


async def post_reply(api, token, application, thread, **body):
    return await api.post(replies_path(application, thread), token, json=body)


async def assert_error(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == message


async def shown_thread(api, token, application, thread) -> dict:
    response = await api.get(f"/applications/{application.id}/feedback/{thread.id}", token)
    assert response.status_code == 200
    return (await body_json(response))["data"]


async def shown_application(api, token, application) -> dict:
    response = await api.get(f"/applications/{application.id}", token)
    assert response.status_code == 200
    return (await body_json(response))["data"]


async def created_seconds_ago(thread, seconds: int) -> int:
    """Move the thread's creation to a whole second ``seconds`` ago; returns that timestamp.

    With a whole-second creation time, the first reply time equals the difference of the two
    integer timestamps exactly.
    """
    created = int(datetime.now(UTC).timestamp()) - seconds
    await atomic(
        lambda: Feedback.filter(id=thread.id).update(created_at=datetime.fromtimestamp(created, UTC))
    )
    return created


async def replied_at(reply_id: int) -> int:
    return int((await Reply.get(id=reply_id)).created_at.timestamp())


async def move_reply(reply, when: datetime) -> None:
    await atomic(lambda: Reply.filter(id=reply.id).update(created_at=when))
    await recount_reply_days(reply.application_id)


# --- POST /applications/{id}/feedback/{feedback_id}/replies ----------------------------------


async def test_reply_returns_the_thread_with_the_reply(api, agent, token, application, thread):
    response = await post_reply(api, token, application, thread, message="  We fixed it in 2.1.  ")

    assert response.status_code == 200
    body = await body_json(response)
    assert set(body) == {"data"}
    assert body["data"]["id"] == thread.id
    [reply] = body["data"]["replies"]
    assert set(reply) == REPLY_FIELDS
    assert type(reply["id"]) is int
    assert reply["type"] == "reply"
    assert reply["message"] == "We fixed it in 2.1."
    assert reply["email"] == "agent@example.com"
    assert isinstance(reply["avatar"], str) and reply["avatar"].startswith(BASE_URL + "/")
    assert reply["attachments"] == []
    assert reply["user"] == {"id": agent.id, "email": "agent@example.com", "name": "Ann Agent"}
    assert reply["reply_from_agent"] is True
    assert reply["created_at"] == await replied_at(reply["id"])


async def test_reply_type_defaults_to_reply(api, token, application, thread):
    response = await post_reply(api, token, application, thread, message="Thanks!")

    assert [r["type"] for r in (await body_json(response))["data"]["replies"]] == ["reply"]


async def test_reply_with_type_reply_is_a_public_reply(api, token, application, thread):
    response = await post_reply(api, token, application, thread, message="Thanks!", type="reply")

    assert response.status_code == 200
    assert [r["type"] for r in (await body_json(response))["data"]["replies"]] == ["reply"]


async def test_reply_is_sent_as_the_user_of_the_token_not_the_owner(api, agent):
    colleague = await make_user(email="bob@example.com", name="Bob Colleague")
    organization = await make_organization(agent, colleague, name="Shared")
    shared = await make_application(agent, organization_id=organization.id)
    thread = await make_thread(shared)

    response = await post_reply(api, await make_token(colleague), shared, thread, message="On it.")

    [reply] = (await body_json(response))["data"]["replies"]
    assert reply["user"] == {"id": colleague.id, "email": "bob@example.com", "name": "Bob Colleague"}
    assert reply["email"] == "bob@example.com"


async def test_replies_are_kept_in_the_thread_oldest_first(api, token, application, thread):
    await post_reply(api, token, application, thread, message="First answer.")
    response = await post_reply(api, token, application, thread, message="Second answer.")

    messages = [r["message"] for r in (await body_json(response))["data"]["replies"]]
    assert messages == ["First answer.", "Second answer."]


@pytest.mark.parametrize(
    "body",
    [{}, {"message": ""}, {"message": "   \n\t "}, {"message": None}, {"type": "reply"}],
    ids=["missing", "empty", "white space", "null", "type only"],
)
async def test_reply_without_message_is_rejected(api, token, application, thread, body):
    response = await api.post(replies_path(application, thread), token, json=body)

    await assert_error(response, 400, "The message field is required.")
    assert await Reply.filter(feedback_id=thread.id).count() == 0


async def test_reply_with_an_empty_body_is_rejected(api, token, application, thread):
    response = await api.post(replies_path(application, thread), token)

    await assert_error(response, 400, "The message field is required.")


async def test_reply_with_a_body_that_is_not_a_json_object_is_rejected(api, token, application, thread):
    response = await api.post(
        replies_path(application, thread),
        token,
        data="{not json",
        headers={"Content-Type": "application/json"},
    )

    await assert_error(response, 400, "The request body must be a JSON object.")


@pytest.mark.parametrize("reply_type", ["internal", "NOTE", "", 1])
async def test_reply_with_an_unknown_type_is_rejected(api, token, application, thread, reply_type):
    response = await post_reply(api, token, application, thread, message="Hello", type=reply_type)

    await assert_error(response, 400, "The selected type is invalid.")
    assert await Reply.filter(feedback_id=thread.id).count() == 0


async def test_note_on_a_free_plan_is_forbidden_and_nothing_is_written(api, token, application, thread):
    response = await post_reply(api, token, application, thread, message="Internal only", type="note")

    await assert_error(response, 403, "Your plan does not include internal notes")
    shown = await shown_thread(api, token, application, thread)
    assert shown["replies"] == []
    assert shown["last_reply_time"] == shown["created_at"]
    listed = await body_json(await api.get(list_path(application), token))
    assert listed["data"] == []
    assert listed["pagination"]["total"] == 0


async def test_note_on_a_team_plan_is_an_internal_note(api, team_agent, team_token, team_application):
    thread = await make_thread(team_application)

    response = await post_reply(api, team_token, team_application, thread, message="Ask QA.", type="note")

    assert response.status_code == 200
    [note] = (await body_json(response))["data"]["replies"]
    assert note["type"] == "note"
    assert note["message"] == "Ask QA."
    assert note["reply_from_agent"] is True
    assert note["user"] == {"id": team_agent.id, "email": "team@example.com", "name": "Tess Team"}


async def test_note_in_an_organization_on_a_team_plan_is_allowed_for_a_free_owner(api, agent, token):
    organization = await make_organization(agent, plan="team")
    application = await make_application(agent, organization_id=organization.id)
    thread = await make_thread(application)

    response = await post_reply(api, token, application, thread, message="Ask QA.", type="note")

    assert response.status_code == 200
    assert [r["type"] for r in (await body_json(response))["data"]["replies"]] == ["note"]


async def test_note_in_an_organization_on_a_free_plan_is_forbidden_for_a_team_owner(
    api, team_agent, team_token
):
    organization = await make_organization(team_agent, plan="free")
    application = await make_application(team_agent, organization_id=organization.id)
    thread = await make_thread(application)

    response = await post_reply(api, team_token, application, thread, message="Ask QA.", type="note")

    await assert_error(response, 403, "Your plan does not include internal notes")
    assert await Reply.filter(feedback_id=thread.id).count() == 0


async def test_reply_to_an_unknown_thread_is_not_found(api, token, application):
    response = await api.post(f"/applications/{application.id}/feedback/999999/replies", token, json={})

    await assert_error(response, 404, "Invalid feedback")


async def test_reply_to_a_thread_of_another_application_is_not_found(api, agent, token, application):
    other_thread = await make_thread(await make_application(agent))

    response = await post_reply(api, token, application, other_thread, message="Hello")

    await assert_error(response, 404, "Invalid feedback")
    assert await Reply.filter(feedback_id=other_thread.id).count() == 0


async def test_reply_in_an_unknown_application_is_not_found(api, token, thread):
    response = await api.post(
        f"/applications/999999/feedback/{thread.id}/replies", token, json={"message": "Hi"}
    )

    await assert_error(response, 404, "Invalid application")


async def test_reply_with_a_read_only_token_is_forbidden(api, agent, application, thread):
    read_only = await make_token(agent, "read")

    response = await post_reply(api, read_only, application, thread, message="Hello")

    await assert_error(response, 403, "Insufficient scope")
    assert await Reply.filter(feedback_id=thread.id).count() == 0


# --- Reply-time statistics --------------------------------------------------------------------


async def test_first_public_reply_sets_the_first_reply_time_in_seconds(api, token, application, thread):
    created = await created_seconds_ago(thread, 100)

    response = await post_reply(api, token, application, thread, message="Hello")

    data = (await body_json(response))["data"]
    [reply] = data["replies"]
    assert type(data["first_reply_time"]) is int
    assert data["first_reply_time"] == reply["created_at"] - created
    assert data["first_reply_time"] >= 100


async def test_a_later_reply_does_not_change_the_first_reply_time(api, token, application, thread):
    await created_seconds_ago(thread, 100)
    first = await body_json(await post_reply(api, token, application, thread, message="Hello"))
    await created_seconds_ago(thread, 5000)

    second = await body_json(await post_reply(api, token, application, thread, message="Again"))

    assert second["data"]["first_reply_time"] == first["data"]["first_reply_time"]
    assert (await shown_thread(api, token, application, thread))["first_reply_time"] == first["data"][
        "first_reply_time"
    ]


async def test_a_note_does_not_set_the_first_reply_time(api, team_token, team_application):
    thread = await make_thread(team_application)
    await created_seconds_ago(thread, 100)

    response = await post_reply(api, team_token, team_application, thread, message="Ask QA.", type="note")

    assert (await body_json(response))["data"]["first_reply_time"] is None


async def test_a_public_reply_after_a_note_sets_the_first_reply_time(api, team_token, team_application):
    thread = await make_thread(team_application)
    created = await created_seconds_ago(thread, 300)
    await post_reply(api, team_token, team_application, thread, message="Ask QA.", type="note")

    response = await post_reply(api, team_token, team_application, thread, message="Fixed.")

    data = (await body_json(response))["data"]
    public = [r for r in data["replies"] if r["type"] == "reply"]
    assert data["first_reply_time"] == public[0]["created_at"] - created


async def test_last_reply_time_is_the_timestamp_of_the_newest_message(api, token, application, thread):
    long_ago = datetime.now(UTC) - timedelta(days=3)
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=long_ago, last_reply_at=long_ago))

    response = await post_reply(api, token, application, thread, message="Hello")

    data = (await body_json(response))["data"]
    assert data["last_reply_time"] == data["replies"][-1]["created_at"]
    assert data["last_reply_time"] > int(long_ago.timestamp())


async def test_last_reply_time_follows_each_new_message(api, token, application, thread):
    first = await body_json(await post_reply(api, token, application, thread, message="Hello"))
    first_reply = first["data"]["replies"][0]
    await atomic(
        lambda: Reply.filter(id=first_reply["id"]).update(created_at=datetime.now(UTC) - timedelta(hours=2))
    )
    await atomic(
        lambda: Feedback.filter(id=thread.id).update(last_reply_at=datetime.now(UTC) - timedelta(hours=2))
    )

    second = await body_json(await post_reply(api, token, application, thread, message="Again"))

    newest = second["data"]["replies"][-1]
    assert newest["message"] == "Again"
    assert second["data"]["last_reply_time"] == newest["created_at"]
    assert (await shown_thread(api, token, application, thread))["last_reply_time"] == newest["created_at"]


async def test_a_note_updates_the_last_reply_time(api, team_token, team_application):
    thread = await make_thread(team_application)
    long_ago = datetime.now(UTC) - timedelta(days=3)
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=long_ago, last_reply_at=long_ago))

    response = await post_reply(api, team_token, team_application, thread, message="Ask QA.", type="note")

    data = (await body_json(response))["data"]
    assert data["last_reply_time"] == data["replies"][-1]["created_at"]


async def test_average_first_reply_time_is_zero_without_replies(api, token, application, thread):
    assert (await shown_application(api, token, application))["average_first_reply_time"] == 0


async def test_average_first_reply_time_ignores_notes(api, team_token, team_application):
    thread = await make_thread(team_application)
    await created_seconds_ago(thread, 100)
    await post_reply(api, team_token, team_application, thread, message="Ask QA.", type="note")

    assert (await shown_application(api, team_token, team_application))["average_first_reply_time"] == 0


async def test_average_first_reply_time_is_the_first_reply_time_of_the_only_answered_thread(
    api, token, application, thread
):
    await created_seconds_ago(thread, 120)
    await make_thread(application)  # unanswered: not part of the average

    data = (await body_json(await post_reply(api, token, application, thread, message="Hi")))["data"]

    average = (await shown_application(api, token, application))["average_first_reply_time"]
    assert average == data["first_reply_time"]


async def test_average_first_reply_time_is_the_rounded_mean_over_answered_threads(api, token, application):
    waits = (100, 200, 400)  # three values: their mean is never exactly half a second
    answered = [await make_thread(application) for _ in waits]
    await make_thread(application)  # unanswered: not part of the average
    for thread, seconds in zip(answered, waits, strict=True):
        await created_seconds_ago(thread, seconds)
    first_reply_times = []
    for thread in answered:
        response = await post_reply(api, token, application, thread, message="Hello")
        first_reply_times.append((await body_json(response))["data"]["first_reply_time"])
    for thread in answered:  # later replies change nothing
        await post_reply(api, token, application, thread, message="Anything else?")

    average = (await shown_application(api, token, application))["average_first_reply_time"]

    assert type(average) is int
    assert average == round(sum(first_reply_times) / 3)
    assert average >= 233  # (100 + 200 + 400) / 3 = 233.3, at the very least


# --- GET /applications/{id}/replies -----------------------------------------------------------


async def test_replies_list_returns_replies_and_notes_newest_first(
    api, team_agent, team_token, team_application
):
    first_thread = await make_thread(team_application)
    second_thread = await make_thread(team_application)
    reply = await make_reply(team_agent, team_application, first_thread, "Public answer.")
    note = await make_reply(team_agent, team_application, second_thread, "Internal.", type="note")
    later = await make_reply(team_agent, team_application, first_thread, "Follow-up.")

    response = await api.get(list_path(team_application), team_token)

    assert response.status_code == 200
    body = await body_json(response)
    assert [(item["id"], item["type"]) for item in body["data"]] == [
        (later.id, "reply"),
        (note.id, "note"),
        (reply.id, "reply"),
    ]


async def test_replies_list_orders_by_creation_time(api, agent, token, application, thread):
    older = await make_reply(agent, application, thread, "Older by date.")
    newer = await make_reply(agent, application, thread, "Newer by date.")
    await move_reply(newer, datetime(2024, 3, 1, 9, tzinfo=UTC))
    await move_reply(older, datetime(2024, 3, 1, 8, tzinfo=UTC))
    newest = await make_reply(agent, application, thread, "Today.")

    response = await api.get(list_path(application), token)

    assert [item["id"] for item in (await body_json(response))["data"]] == [newest.id, newer.id, older.id]


async def test_replies_list_item_has_every_field_with_its_type(api, agent, token, application):
    thread = await make_thread(
        application,
        email="carla@example.org",
        message="The export button does nothing.",
        sentiment="negative",
    )
    reply = await make_reply(agent, application, thread, "Fixed in 2.1.")
    stored = await Feedback.get(id=thread.id)

    response = await api.get(list_path(application), token)

    assert response.status_code == 200
    [item] = (await body_json(response))["data"]
    assert set(item) == REPLY_FIELDS | {"feedback_id", "feedback"}
    assert item["id"] == reply.id
    assert item["type"] == "reply"
    assert item["message"] == "Fixed in 2.1."
    assert item["email"] == "agent@example.com"
    assert isinstance(item["avatar"], str) and item["avatar"].startswith(BASE_URL + "/")
    assert item["attachments"] == []
    assert item["user"] == {"id": agent.id, "email": "agent@example.com", "name": "Ann Agent"}
    assert item["reply_from_agent"] is True
    assert item["created_at"] == await replied_at(reply.id)
    assert item["feedback_id"] == thread.id
    assert item["feedback"] == {
        "id": thread.id,
        "email": "carla@example.org",
        "message": "The export button does nothing.",
        "sentiment": "negative",
        "archived": False,
        "created_at": int(stored.created_at.timestamp()),
        "updated_at": int(stored.updated_at.timestamp()),
    }


async def test_replies_list_feedback_summary_shows_the_archived_state(api, agent, token, application, thread):
    await make_reply(agent, application, thread)
    await api.patch(f"/applications/{application.id}/feedback/{thread.id}", token, json={"archived": True})

    [item] = (await body_json(await api.get(list_path(application), token)))["data"]

    assert item["feedback"]["archived"] is True
    assert set(item["feedback"]) == FEEDBACK_SUMMARY_FIELDS


@pytest.mark.parametrize("length", [199, 200, 201, 202, 5000])
async def test_replies_list_feedback_summary_cuts_a_long_message_after_200_characters(
    api, agent, token, application, length
):
    message = ("Ünïcode-and-a-long-complaint-" * 200)[:length]
    thread = await make_thread(application, message=message)
    await make_reply(agent, application, thread)

    [item] = (await body_json(await api.get(list_path(application), token)))["data"]

    assert item["feedback"]["message"] == (message if length <= 200 else message[:199] + "…")


async def test_replies_list_defaults_to_limit_50_and_offset_0(api, agent, token, application, thread):
    replies = [await make_reply(agent, application, thread, f"Answer {n}") for n in range(51)]

    response = await api.get(list_path(application), token)

    body = await body_json(response)
    assert [item["id"] for item in body["data"]] == [r.id for r in reversed(replies)][:50]
    assert body["pagination"] == {"total": 51, "limit": 50, "offset": 0}


async def test_replies_list_limit_and_offset_select_a_page(api, agent, token, application, thread):
    replies = [await make_reply(agent, application, thread, f"Answer {n}") for n in range(5)]
    newest_first = [r.id for r in reversed(replies)]

    response = await api.get(list_path(application, "?limit=2&offset=1"), token)

    body = await body_json(response)
    assert [item["id"] for item in body["data"]] == newest_first[1:3]
    assert body["pagination"] == {"total": 5, "limit": 2, "offset": 1}


async def test_replies_list_total_counts_every_matching_reply_not_only_the_page(
    api, team_agent, team_token, team_application
):
    thread = await make_thread(team_application)
    for n in range(3):
        await make_reply(team_agent, team_application, thread, f"Answer {n}")
    await make_reply(team_agent, team_application, thread, "Internal.", type="note")

    body = await body_json(await api.get(list_path(team_application, "?limit=1"), team_token))

    assert len(body["data"]) == 1
    assert body["pagination"]["total"] == 4


async def test_replies_list_shows_only_replies_of_that_application(api, agent, token, application, thread):
    other_application = await make_application(agent)
    await make_reply(agent, other_application, await make_thread(other_application))
    reply = await make_reply(agent, application, thread)

    body = await body_json(await api.get(list_path(application), token))

    assert [item["id"] for item in body["data"]] == [reply.id]
    assert body["pagination"]["total"] == 1


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=ten", "The limit field must be an integer."),
        ("offset=ten", "The offset field must be an integer."),
        ("offset=-1", "The offset field must be at least 0."),
        ("limit=0", "The limit field must be at least 1."),
        ("limit=501", "The limit field must not be greater than 500."),
    ],
)
async def test_replies_list_with_invalid_paging_is_rejected(api, token, application, query, message):
    response = await api.get(list_path(application, f"?{query}"), token)

    await assert_error(response, 400, message)


async def test_replies_list_date_lists_only_replies_of_that_utc_day(api, agent, token, application, thread):
    before = await make_reply(agent, application, thread, "Day before")
    start = await make_reply(agent, application, thread, "Start of day")
    end = await make_reply(agent, application, thread, "End of day")
    after = await make_reply(agent, application, thread, "Day after")
    await make_reply(agent, application, thread, "Today")
    await move_reply(before, datetime(2024, 2, 29, 23, 59, 59, tzinfo=UTC))
    await move_reply(start, datetime(2024, 3, 1, 0, 0, 0, tzinfo=UTC))
    await move_reply(end, datetime(2024, 3, 1, 23, 59, 59, tzinfo=UTC))
    await move_reply(after, datetime(2024, 3, 2, 0, 0, 0, tzinfo=UTC))

    response = await api.get(list_path(application, "?date=2024-03-01"), token)

    assert response.status_code == 200
    body = await body_json(response)
    assert [item["id"] for item in body["data"]] == [end.id, start.id]
    assert body["pagination"] == {"total": 2, "limit": 50, "offset": 0}


async def test_replies_list_date_total_counts_every_reply_of_that_day(api, agent, token, application, thread):
    for n in range(3):
        reply = await make_reply(agent, application, thread, f"Answer {n}")
        await move_reply(reply, datetime(2024, 3, 1, 10, n, tzinfo=UTC))
    await make_reply(agent, application, thread, "Today")

    body = await body_json(await api.get(list_path(application, "?date=2024-03-01&limit=1&offset=1"), token))

    assert len(body["data"]) == 1
    assert body["pagination"] == {"total": 3, "limit": 1, "offset": 1}


async def test_replies_list_date_without_replies_is_empty(api, agent, token, application, thread):
    await make_reply(agent, application, thread)

    body = await body_json(await api.get(list_path(application, "?date=2001-01-01"), token))

    assert body == {"data": [], "pagination": {"total": 0, "limit": 50, "offset": 0}}


@pytest.mark.parametrize("value", ["2024-13-01", "yesterday", "2024-02-30", "01-03-2024"])
async def test_replies_list_with_an_invalid_date_is_rejected(api, token, application, value):
    response = await api.get(list_path(application, f"?date={value}"), token)

    await assert_error(response, 400, "The date field must match the format Y-m-d.")


async def test_replies_list_of_an_unknown_application_is_not_found(api, token):
    response = await api.get("/applications/999999/replies", token)

    await assert_error(response, 404, "Invalid application")


async def test_replies_list_of_another_users_application_is_not_found(api, token):
    stranger = await make_user()
    stranger_application = await make_application(stranger)
    await make_reply(stranger, stranger_application, await make_thread(stranger_application))

    response = await api.get(list_path(stranger_application), token)

    await assert_error(response, 404, "Invalid application")
