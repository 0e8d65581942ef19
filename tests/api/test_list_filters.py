"""Filters of the management API's lists: the feedback list takes the inbox's filters and a
``before`` cursor, the replies list a type and a thread."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.db import atomic
from app.models import Feedback, Member, Reply, Tag
from app.services.feedback import set_archived
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_reply,
    make_thread,
    make_token,
    make_user,
)


@pytest.fixture
async def team_agent(db):
    return await make_user(plan="team")


@pytest.fixture
async def team_token(team_agent):
    return await make_token(team_agent)


@pytest.fixture
async def team_application(team_agent):
    return await make_application(team_agent)


async def listed(api, token, application, query: str) -> dict:
    response = await api.get(f"/applications/{application.id}/feedback?{query}", token)
    assert response.status_code == 200, await body_text(response)
    return await body_json(response)


async def listed_ids(api, token, application, query: str) -> list[int]:
    return [thread["id"] for thread in (await listed(api, token, application, query))["data"]]


async def created_at(thread, moment: datetime) -> None:
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=moment))


async def row_counts() -> tuple[int, ...]:
    return tuple([await model.all().count() for model in (Feedback, Member, Tag, Reply)])


async def assert_error(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == message


# --- The feedback list ---------------------------------------------------------------------------


async def test_without_new_parameters_the_pagination_is_as_before(api, token, application):
    await make_thread(application)

    body = await listed(api, token, application, "limit=5&offset=0&archived=0")

    assert body["pagination"] == {"total": 1, "limit": 5, "offset": 0}


async def test_sentiment_keeps_threads_of_that_sentiment(api, token, application):
    wanted = await make_thread(application, sentiment="negative")
    await make_thread(application, sentiment="positive")

    assert await listed_ids(api, token, application, "sentiment=negative") == [wanted.id]


async def test_tag_keeps_threads_with_that_tag(api, token, application):
    wanted = await make_thread(application, tags=["billing", "ui"])
    await make_thread(application, tags=["ui"])

    body = await listed(api, token, application, "tag=Billing")

    assert [thread["id"] for thread in body["data"]] == [wanted.id]
    assert body["pagination"]["total"] == 1


async def test_an_unknown_tag_lists_nothing(api, token, application):
    await make_thread(application, tags=["billing"])

    body = await listed(api, token, application, "tag=nope")

    assert body["data"] == [] and body["pagination"]["total"] == 0


async def test_q_searches_the_message_and_the_sender(api, token, application):
    by_message = await make_thread(application, message="Please refund my order")
    by_sender = await make_thread(application, email="refund.desk@example.org", message="Hello there")
    await make_thread(application, message="Nothing to see")

    assert await listed_ids(api, token, application, "q=REFUND") == [by_sender.id, by_message.id]


async def test_since_is_inclusive_and_until_exclusive(api, token, application):
    before_noon, noon, after = [await make_thread(application) for _ in range(3)]
    await created_at(before_noon, datetime(2026, 3, 1, 11, 59, 59, tzinfo=UTC))
    await created_at(noon, datetime(2026, 3, 1, 12, tzinfo=UTC))
    await created_at(after, datetime(2026, 3, 2, tzinfo=UTC))
    noon_timestamp = int(datetime(2026, 3, 1, 12, tzinfo=UTC).timestamp())

    assert await listed_ids(api, token, application, f"since={noon_timestamp}") == [after.id, noon.id]
    assert await listed_ids(api, token, application, f"until={noon_timestamp}") == [before_noon.id]
    assert await listed_ids(
        api, token, application, f"since={noon_timestamp}&until={noon_timestamp + 1}"
    ) == [noon.id]


@pytest.mark.parametrize(("value", "answered"), [("true", True), ("1", True), ("false", False), ("0", False)])
async def test_replied_tells_threads_answered_publicly_from_the_others(
    api, team_agent, team_token, team_application, value, answered
):
    replied = await make_thread(team_application)
    noted = await make_thread(team_application)
    await make_reply(team_agent, team_application, replied)
    await make_reply(team_agent, team_application, noted, "internal", type="note")

    expected = [replied.id] if answered else [noted.id]
    assert await listed_ids(api, team_token, team_application, f"replied={value}") == expected


async def test_nps_min_and_max_are_inclusive(api, token, application):
    six, seven, nine, ten = [await make_thread(application, nps=score) for score in (6, 7, 9, 10)]
    await make_thread(application)

    assert await listed_ids(api, token, application, "nps_min=7&nps_max=9") == [nine.id, seven.id]
    assert await listed_ids(api, token, application, "nps_max=6") == [six.id]
    assert await listed_ids(api, token, application, "nps_min=10") == [ten.id]


async def test_filters_apply_to_the_archived_list(api, token, application):
    archived = await make_thread(application, sentiment="negative")
    await set_archived(application, archived, True)
    await make_thread(application, sentiment="negative")

    assert await listed_ids(api, token, application, "archived=1&sentiment=negative") == [archived.id]


async def test_before_pages_by_id_and_gives_the_next_cursor(api, token, application):
    threads = [await make_thread(application) for _ in range(5)]
    newest_first = [thread.id for thread in reversed(threads)]

    first = await listed(api, token, application, f"before={newest_first[0] + 1}&limit=2")
    second = await listed(api, token, application, f"before={first['pagination']['next_before']}&limit=2")
    last = await listed(api, token, application, f"before={second['pagination']['next_before']}&limit=2")

    assert [t["id"] for t in first["data"] + second["data"] + last["data"]] == newest_first
    assert first["pagination"] == {
        "total": 5,
        "limit": 2,
        "offset": 0,
        "total_exact": True,
        "next_before": newest_first[1],
    }
    assert last["pagination"]["next_before"] is None


async def test_offset_pages_filtered_threads_and_total_counts_every_match(api, token, application):
    matching = [await make_thread(application, sentiment="neutral") for _ in range(4)]
    await make_thread(application, sentiment="positive")

    body = await listed(api, token, application, "sentiment=neutral&limit=2&offset=1")

    assert [t["id"] for t in body["data"]] == [matching[2].id, matching[1].id]
    assert body["pagination"] == {
        "total": 4,
        "limit": 2,
        "offset": 1,
        "total_exact": True,
        "next_before": matching[1].id,
    }


async def test_filtered_threads_have_the_full_representation(api, token, application):
    thread = await make_thread(application, tags=["billing"], sentiment="negative")

    [item] = (await listed(api, token, application, "sentiment=negative"))["data"]
    [plain] = (await listed(api, token, application, ""))["data"]

    assert item == plain and item["id"] == thread.id and item["tags"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sentiment=angry", "The sentiment field must be one of positive, neutral, negative."),
        ("since=yesterday", "The since field must be an integer."),
        ("until=12.5", "The until field must be an integer."),
        ("since=-5", "The since field must be between 0 and 253402300799."),
        ("replied=maybe", "The replied field must be true or false."),
        ("nps_min=11", "The nps_min field must be between 0 and 10."),
        ("nps_max=-1", "The nps_max field must be between 0 and 10."),
        ("nps_min=ten", "The nps_min field must be an integer."),
        ("before=0", "The before field must be a thread id (1 to 2147483647)."),
        ("before=x", "The before field must be a thread id (1 to 2147483647)."),
        ("q=" + "x" * 201, "The q field must not be greater than 200 characters."),
        ("sentiment=positive&limit=501", "The limit field must not be greater than 500."),
        ("sentiment=positive&offset=-1", "The offset field must be at least 0."),
    ],
)
async def test_invalid_filters_are_a_400_that_writes_nothing(api, token, application, query, message):
    await make_thread(application, tags=["billing"])
    before = await row_counts()

    response = await api.get(f"/applications/{application.id}/feedback?{query}", token)

    await assert_error(response, 400, message)
    assert await row_counts() == before


async def test_another_users_application_is_not_found_whatever_the_filters(api, application):
    await make_thread(application, sentiment="negative", tags=["billing"])
    stranger = await make_token(await make_user())

    response = await api.get(
        f"/applications/{application.id}/feedback?sentiment=negative&tag=billing", stranger
    )

    await assert_error(response, 404, "Invalid application")


async def test_filtered_list_runs_a_fixed_number_of_statements(api, queries):
    async def statements(count: int) -> int:
        user = await make_user()
        application, token = await make_application(user), await make_token(user)
        for _ in range(count):
            thread = await make_thread(application, sentiment="negative", tags=["billing", "ui"], nps=9)
            await make_reply(user, application, thread)
        queries.statements.clear()
        query = "sentiment=negative&tag=billing&nps_min=5&replied=1&q=export&before=2147483647"
        response = await api.get(f"/applications/{application.id}/feedback?{query}", token)
        assert response.status_code == 200
        return queries.count

    few, many = await statements(2), await statements(10)

    assert few == many
    # token, its last use, application, the tag, the search's window, the page, its tags, the
    # look-up of the count (senders, messages: SQLite first indexes what is new), the count,
    # replies, attachments
    assert many <= 20


# --- The replies list ---------------------------------------------------------------------------


async def replies_of(api, token, application, query: str) -> dict:
    response = await api.get(f"/applications/{application.id}/replies?{query}", token)
    assert response.status_code == 200, await body_text(response)
    return await body_json(response)


async def test_replies_type_keeps_replies_or_notes_and_total_counts_them(
    api, team_agent, team_token, team_application
):
    thread = await make_thread(team_application)
    replies = [await make_reply(team_agent, team_application, thread) for _ in range(3)]
    note = await make_reply(team_agent, team_application, thread, "internal", type="note")

    only_replies = await replies_of(api, team_token, team_application, "type=reply&limit=2")
    only_notes = await replies_of(api, team_token, team_application, "type=note")

    assert [item["id"] for item in only_replies["data"]] == [replies[2].id, replies[1].id]
    assert only_replies["pagination"] == {"total": 3, "limit": 2, "offset": 0}
    assert [item["id"] for item in only_notes["data"]] == [note.id]
    assert only_notes["pagination"]["total"] == 1


async def test_replies_feedback_id_keeps_one_threads_replies(api, agent, token, application):
    first, second = await make_thread(application), await make_thread(application)
    wanted = await make_reply(agent, application, first)
    await make_reply(agent, application, second)

    body = await replies_of(api, token, application, f"feedback_id={first.id}")

    assert [item["id"] for item in body["data"]] == [wanted.id]
    assert body["pagination"]["total"] == 1


async def test_replies_filters_combine_with_the_date(api, agent, token, application):
    thread = await make_thread(application)
    today = await make_reply(agent, application, thread)
    old = await make_reply(agent, application, thread)
    await atomic(lambda: Reply.filter(id=old.id).update(created_at=datetime(2024, 3, 1, tzinfo=UTC)))
    day = datetime.now(UTC).date().isoformat()

    body = await replies_of(api, token, application, f"date={day}&type=reply&feedback_id={thread.id}")

    assert [item["id"] for item in body["data"]] == [today.id]
    assert body["pagination"]["total"] == 1


@pytest.mark.parametrize("feedback_id", ["999999", "-1", "2147483648"])
async def test_replies_of_an_unknown_thread_are_not_found(api, token, application, feedback_id):
    response = await api.get(f"/applications/{application.id}/replies?feedback_id={feedback_id}", token)

    await assert_error(response, 404, "Invalid feedback")


async def test_replies_of_another_applications_thread_are_not_found(api, agent, token, application):
    other = await make_application(agent)
    thread = await make_thread(other)
    await make_reply(agent, other, thread)

    response = await api.get(f"/applications/{application.id}/replies?feedback_id={thread.id}", token)

    await assert_error(response, 404, "Invalid feedback")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("type=comment", "The type field must be reply or note."),
        ("feedback_id=abc", "The feedback_id field must be an integer."),
    ],
)
async def test_invalid_replies_filters_are_a_400_that_writes_nothing(api, token, application, query, message):
    await make_thread(application)
    before = await row_counts()

    response = await api.get(f"/applications/{application.id}/replies?{query}", token)

    await assert_error(response, 400, message)
    assert await row_counts() == before


async def test_replies_filters_of_another_users_application_are_not_found(api, agent, application):
    thread = await make_thread(application)
    await make_reply(agent, application, thread)
    stranger = await make_token(await make_user())

    response = await api.get(
        f"/applications/{application.id}/replies?type=reply&feedback_id={thread.id}", stranger
    )

    await assert_error(response, 404, "Invalid application")


async def test_a_nul_in_the_search_text_is_dropped_not_sent_to_the_database(api, token, application):
    thread = await make_thread(application, message="Refund please")

    assert await listed_ids(api, token, application, "q=Ref%00und&tag=x%00") == []
    assert await listed_ids(api, token, application, "q=Ref%00und") == [thread.id]
