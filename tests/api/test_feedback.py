"""Feedback threads of the management API: list, show, and archive or unarchive (PATCH)."""

from __future__ import annotations

import pytest

from app.models import Feedback
from app.services.attachments import store_uploads
from app.services.feedback import set_archived
from app.services.files import IncomingFile
from app.services.storage import storage_for
from tests.api.shapes import REPLY_FIELDS
from tests.conftest import BASE_URL
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_reply,
    make_thread,
    make_token,
    make_user,
)

THREAD_FIELDS = {
    # the seed's fields
    "id",
    "email",
    "avatar",
    "message",
    "permalink",
    "sentiment",
    "member",
    "attachments",
    "is_anonymous",
    "can_reply",
    "archived",
    "first_reply_time",
    "last_reply_time",
    "ip_address",
    "user_agent",
    "properties",
    "created_at",
    "updated_at",
    "replies",
    # additive fields of the contract
    "application_id",
    "name",
    "tags",
    "nps",
    "url",
    "language",
    "assignee",
}


def feedback_path(application, thread=None) -> str:
    path = f"/applications/{application.id}/feedback"
    return path if thread is None else f"{path}/{thread.id}"


async def archived_thread(application, **body):
    thread = await make_thread(application, **body)
    return await set_archived(application, thread, True)


async def listed_ids(api, token, application, query: str = "") -> list[int]:
    response = await api.get(f"{feedback_path(application)}{query}", token)
    assert response.status_code == 200
    return [thread["id"] for thread in (await body_json(response))["data"]]


async def shown_thread(api, token, application, thread) -> dict:
    response = await api.get(feedback_path(application, thread), token)
    assert response.status_code == 200
    return (await body_json(response))["data"]


async def assert_error(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == message


# --- GET /applications/{id}/feedback ---------------------------------------------------------


async def test_feedback_list_returns_threads_newest_first(api, token, application):
    first = await make_thread(application)
    second = await make_thread(application)
    third = await make_thread(application)

    assert await listed_ids(api, token, application) == [third.id, second.id, first.id]


async def test_feedback_list_without_archived_lists_only_threads_that_are_not_archived(
    api, token, application
):
    open_thread = await make_thread(application)
    await archived_thread(application)

    assert await listed_ids(api, token, application) == [open_thread.id]


@pytest.mark.parametrize("value", ["true", "1"])
async def test_feedback_list_with_archived_true_lists_archived_threads(api, token, application, value):
    await make_thread(application)
    archived = await archived_thread(application)

    assert await listed_ids(api, token, application, f"?archived={value}") == [archived.id]


@pytest.mark.parametrize("value", ["false", "0"])
async def test_feedback_list_with_archived_false_lists_open_threads(api, token, application, value):
    open_thread = await make_thread(application)
    await archived_thread(application)

    assert await listed_ids(api, token, application, f"?archived={value}") == [open_thread.id]


async def test_feedback_list_with_invalid_archived_is_rejected(api, token, application):
    response = await api.get(f"{feedback_path(application)}?archived=maybe", token)

    await assert_error(response, 400, "The archived field must be true or false.")


async def test_feedback_list_returns_at_most_50_threads_by_default(api, token, application):
    threads = [await make_thread(application, sentiment="neutral") for _ in range(51)]

    response = await api.get(feedback_path(application), token)

    assert response.status_code == 200
    body = await body_json(response)
    assert [thread["id"] for thread in body["data"]] == [t.id for t in reversed(threads)][:50]
    assert body["pagination"] == {"total": 51, "limit": 50, "offset": 0}


async def test_feedback_list_limit_and_offset_select_a_page(api, token, application):
    threads = [await make_thread(application) for _ in range(5)]
    newest_first = [t.id for t in reversed(threads)]

    response = await api.get(f"{feedback_path(application)}?limit=2&offset=1", token)

    assert response.status_code == 200
    body = await body_json(response)
    assert [thread["id"] for thread in body["data"]] == newest_first[1:3]
    assert body["pagination"] == {"total": 5, "limit": 2, "offset": 1}


async def test_feedback_list_offset_past_the_end_returns_an_empty_page(api, token, application):
    await make_thread(application)

    response = await api.get(f"{feedback_path(application)}?offset=5", token)

    assert response.status_code == 200
    assert await body_json(response) == {"data": [], "pagination": {"total": 1, "limit": 50, "offset": 5}}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=ten", "The limit field must be an integer."),
        ("limit=1.5", "The limit field must be an integer."),
        ("offset=ten", "The offset field must be an integer."),
        ("offset=-1", "The offset field must be at least 0."),
        ("limit=0", "The limit field must be at least 1."),
        ("limit=-3", "The limit field must be at least 1."),
        ("limit=501", "The limit field must not be greater than 500."),
    ],
)
async def test_feedback_list_with_invalid_paging_is_rejected(api, token, application, query, message):
    response = await api.get(f"{feedback_path(application)}?{query}", token)

    await assert_error(response, 400, message)


async def test_feedback_list_accepts_the_largest_limit(api, token, application):
    thread = await make_thread(application)

    response = await api.get(f"{feedback_path(application)}?limit=500", token)

    assert response.status_code == 200
    body = await body_json(response)
    assert [t["id"] for t in body["data"]] == [thread.id]
    assert body["pagination"] == {"total": 1, "limit": 500, "offset": 0}


async def test_feedback_list_total_counts_every_matching_thread_not_only_the_page(api, token, application):
    for _ in range(3):
        await make_thread(application)
    for _ in range(2):
        await archived_thread(application)

    open_page = await body_json(await api.get(f"{feedback_path(application)}?limit=1", token))
    archived_page = await body_json(await api.get(f"{feedback_path(application)}?limit=1&archived=1", token))

    assert len(open_page["data"]) == 1
    assert open_page["pagination"]["total"] == 3
    assert len(archived_page["data"]) == 1
    assert archived_page["pagination"]["total"] == 2


async def test_feedback_list_total_follows_archiving_and_unarchiving(api, token, application):
    first = await make_thread(application)
    await make_thread(application)
    await api.patch(feedback_path(application, first), token, json={"archived": True})

    open_total = (await body_json(await api.get(feedback_path(application), token)))["pagination"]["total"]
    archived_response = await api.get(f"{feedback_path(application)}?archived=true", token)
    archived_total = (await body_json(archived_response))["pagination"]["total"]

    assert (open_total, archived_total) == (1, 1)


async def test_feedback_list_shows_only_threads_of_that_application(api, agent, token, application):
    other_application = await make_application(agent)
    thread = await make_thread(application)
    await make_thread(other_application)

    assert await listed_ids(api, token, application) == [thread.id]


async def test_feedback_list_of_an_unknown_application_is_not_found(api, token):
    response = await api.get("/applications/999999/feedback", token)

    await assert_error(response, 404, "Invalid application")


async def test_feedback_list_of_another_users_application_is_not_found(api, token):
    stranger_application = await make_application(await make_user())
    await make_thread(stranger_application)

    response = await api.get(feedback_path(stranger_application), token)

    await assert_error(response, 404, "Invalid application")


# --- Thread representation -------------------------------------------------------------------


async def test_listed_thread_has_every_field_with_the_specified_type(api, token, application):
    thread = await make_thread(
        application,
        email="Carla@Example.org",
        name="Carla Customer",
        message="The export button does nothing at all.",
        sentiment="negative",
        url="https://shop.example.org/cart",
        tags="Billing,export",
        nps=7,
        language="es",
        ip="198.51.100.4",
    )
    stored = await Feedback.get(id=thread.id).select_related("member")

    response = await api.get(feedback_path(application), token)

    assert response.status_code == 200
    item = (await body_json(response))["data"][0]
    assert set(item) == THREAD_FIELDS
    assert item["id"] == thread.id
    assert item["application_id"] == application.id
    assert item["email"] == "carla@example.org"
    assert item["name"] == "Carla Customer"
    assert isinstance(item["avatar"], str) and item["avatar"].startswith(BASE_URL + "/")
    assert item["message"] == "The export button does nothing at all."
    assert isinstance(item["permalink"], str) and item["permalink"].startswith(BASE_URL + "/")
    assert item["permalink"] != f"{BASE_URL}{feedback_path(application, thread)}"
    assert item["sentiment"] == "negative"
    assert item["member"] == {
        "id": stored.member.id,
        "email": "carla@example.org",
        "name": "Carla Customer",
        "created_at": int(stored.member.created_at.timestamp()),
        "updated_at": int(stored.member.updated_at.timestamp()),
    }
    assert item["attachments"] == []
    assert item["is_anonymous"] is False
    assert item["can_reply"] is True
    assert item["archived"] is False
    assert item["first_reply_time"] is None
    assert item["ip_address"] == "198.51.100.4"
    assert item["user_agent"] == "pytest-factory/1.0"
    assert item["properties"] == []
    assert item["tags"] == ["billing", "export"]
    assert item["nps"] == 7
    assert item["url"] == "https://shop.example.org/cart"
    assert item["language"] == "es"
    assert item["assignee"] is None
    assert item["created_at"] == int(stored.created_at.timestamp())
    assert item["updated_at"] == int(stored.updated_at.timestamp())
    assert item["replies"] == []


async def test_thread_timestamps_are_integers(api, token, application):
    thread = await make_thread(application)

    item = await shown_thread(api, token, application, thread)

    for name in ("created_at", "updated_at", "last_reply_time"):
        assert type(item[name]) is int, name
    for name in ("created_at", "updated_at"):
        assert type(item["member"][name]) is int, name


async def test_thread_without_replies_has_last_reply_time_of_its_creation(api, token, application):
    thread = await make_thread(application)

    item = await shown_thread(api, token, application, thread)

    assert item["last_reply_time"] == item["created_at"]


async def test_thread_first_reply_time_is_null_before_a_reply(api, token, application):
    thread = await make_thread(application)

    assert (await shown_thread(api, token, application, thread))["first_reply_time"] is None


async def test_thread_first_reply_time_is_an_integer_after_a_reply(api, agent, token, application):
    thread = await make_thread(application)
    await make_reply(agent, application, thread)

    first_reply_time = (await shown_thread(api, token, application, thread))["first_reply_time"]

    assert type(first_reply_time) is int
    assert first_reply_time >= 0


@pytest.mark.parametrize(
    "properties",
    [
        {"plan": "pro", "seats": 3, "beta": True, "nested": {"a": [1, 2]}},
        ["first", 2, None],
        # Tortoise switches its JSON fields to orjson when it is installed, and orjson refuses
        # integers beyond 64 bits: this case fails if it ever is.
        {"account": 2**70, "name": "Zoë ✓"},
    ],
    ids=["object", "list", "beyond 64 bits and unicode"],
)
async def test_thread_properties_are_returned_as_submitted(api, token, application, properties):
    thread = await make_thread(application, properties=properties)

    assert (await shown_thread(api, token, application, thread))["properties"] == properties


async def test_thread_properties_submitted_as_a_json_string_are_returned_as_its_value(
    api, token, application
):
    thread = await make_thread(application, properties='{"plan": "pro", "seats": 3}')

    assert (await shown_thread(api, token, application, thread))["properties"] == {"plan": "pro", "seats": 3}


async def test_thread_without_properties_has_an_empty_list(api, token, application):
    thread = await make_thread(application)

    assert (await shown_thread(api, token, application, thread))["properties"] == []


async def test_thread_attachments_are_listed_with_their_details(api, token, application, settings):
    [attachment_id] = await store_uploads(
        storage_for(settings),
        application,
        [IncomingFile("notes.txt", b"hello there")],
        settings.max_upload_bytes,
    )
    thread = await make_thread(application, attachments=[attachment_id])

    attachments = (await shown_thread(api, token, application, thread))["attachments"]

    assert len(attachments) == 1
    assert set(attachments[0]) == {"id", "name", "mime_type", "size", "url"}
    assert attachments[0]["id"] == attachment_id
    assert attachments[0]["name"] == "notes.txt"
    assert attachments[0]["size"] == 11
    assert isinstance(attachments[0]["mime_type"], str)
    assert attachments[0]["url"].startswith(BASE_URL + "/")


async def test_thread_replies_include_internal_notes(api):
    agent = await make_user(plan="team")
    token = await make_token(agent, "read")
    application = await make_application(agent)
    thread = await make_thread(application)
    reply = await make_reply(agent, application, thread, "We are looking into it.")
    note = await make_reply(agent, application, thread, "Probably the CSV exporter.", type="note")

    replies = (await shown_thread(api, token, application, thread))["replies"]

    assert [(r["id"], r["type"], r["message"]) for r in replies] == [
        (reply.id, "reply", "We are looking into it."),
        (note.id, "note", "Probably the CSV exporter."),
    ]


async def test_thread_reply_has_every_field_with_its_type(api, agent, token, application):
    thread = await make_thread(application)
    reply = await make_reply(agent, application, thread, "Fixed in 2.1.")

    [item] = (await shown_thread(api, token, application, thread))["replies"]

    assert set(item) == REPLY_FIELDS
    assert item["id"] == reply.id
    assert item["type"] == "reply"
    assert item["message"] == "Fixed in 2.1."
    assert item["email"] == "agent@example.com"
    assert isinstance(item["avatar"], str) and item["avatar"].startswith(BASE_URL + "/")
    assert item["attachments"] == []
    assert item["user"] == {"id": agent.id, "email": "agent@example.com", "name": "Ann Agent"}
    assert item["reply_from_agent"] is True
    assert item["created_at"] == int(reply.created_at.timestamp())


# --- GET /applications/{id}/feedback/{feedback_id} -------------------------------------------


async def test_show_feedback_returns_the_thread(api, token, application):
    thread = await make_thread(application, message="Dark mode please.")

    response = await api.get(feedback_path(application, thread), token)

    assert response.status_code == 200
    body = await body_json(response)
    assert set(body) == {"data"}
    assert set(body["data"]) == THREAD_FIELDS
    assert body["data"]["id"] == thread.id
    assert body["data"]["message"] == "Dark mode please."


async def test_show_feedback_returns_an_archived_thread(api, token, application):
    thread = await archived_thread(application)

    assert (await shown_thread(api, token, application, thread))["archived"] is True


@pytest.mark.parametrize("feedback_id", ["999999", "abc", "99999999999999999999"])
async def test_show_feedback_with_an_unknown_id_is_not_found(api, token, application, feedback_id):
    await make_thread(application)

    response = await api.get(f"{feedback_path(application)}/{feedback_id}", token)

    await assert_error(response, 404, "Invalid feedback")


async def test_show_feedback_of_another_application_of_the_same_user_is_not_found(
    api, agent, token, application
):
    other_application = await make_application(agent)
    thread = await make_thread(other_application)

    response = await api.get(feedback_path(application, thread), token)

    await assert_error(response, 404, "Invalid feedback")


async def test_show_feedback_of_an_unknown_application_is_not_found(api, token, application):
    thread = await make_thread(application)

    response = await api.get(f"/applications/999999/feedback/{thread.id}", token)

    await assert_error(response, 404, "Invalid application")


# --- PATCH /applications/{id}/feedback/{feedback_id} -----------------------------------------


async def test_patch_archived_true_archives_the_thread_and_returns_it(api, token, application):
    thread = await make_thread(application)

    response = await api.patch(feedback_path(application, thread), token, json={"archived": True})

    assert response.status_code == 200
    body = await body_json(response)
    assert set(body) == {"data"}
    assert set(body["data"]) == THREAD_FIELDS
    assert body["data"]["id"] == thread.id
    assert body["data"]["archived"] is True
    assert (await shown_thread(api, token, application, thread))["archived"] is True


async def test_patch_archived_false_unarchives_the_thread_and_returns_it(api, token, application):
    thread = await archived_thread(application)

    response = await api.patch(feedback_path(application, thread), token, json={"archived": False})

    assert response.status_code == 200
    body = await body_json(response)
    assert body["data"]["id"] == thread.id
    assert body["data"]["archived"] is False
    assert (await shown_thread(api, token, application, thread))["archived"] is False


async def test_archiving_moves_the_thread_from_the_open_list_to_the_archived_list(api, token, application):
    thread = await make_thread(application)

    await api.patch(feedback_path(application, thread), token, json={"archived": True})

    assert await listed_ids(api, token, application) == []
    assert await listed_ids(api, token, application, "?archived=true") == [thread.id]


async def test_unarchiving_moves_the_thread_from_the_archived_list_to_the_open_list(api, token, application):
    thread = await archived_thread(application)

    await api.patch(feedback_path(application, thread), token, json={"archived": False})

    assert await listed_ids(api, token, application) == [thread.id]
    assert await listed_ids(api, token, application, "?archived=true") == []


async def test_archiving_an_archived_thread_keeps_it_archived(api, token, application):
    thread = await archived_thread(application)

    response = await api.patch(feedback_path(application, thread), token, json={"archived": True})

    assert response.status_code == 200
    assert (await body_json(response))["data"]["archived"] is True
    assert await listed_ids(api, token, application, "?archived=1") == [thread.id]
    archived_page = await body_json(await api.get(f"{feedback_path(application)}?archived=1", token))
    assert archived_page["pagination"]["total"] == 1


async def test_patch_returns_the_thread_with_its_replies(api, agent, token, application):
    thread = await make_thread(application)
    reply = await make_reply(agent, application, thread)

    response = await api.patch(feedback_path(application, thread), token, json={"archived": True})

    assert [r["id"] for r in (await body_json(response))["data"]["replies"]] == [reply.id]


@pytest.mark.parametrize(
    "request_body",
    [{}, {"json": {}}, {"json": {"other": 1}}],
    ids=["empty body", "empty object", "other field"],
)
async def test_patch_without_archived_is_rejected(api, token, application, request_body):
    thread = await make_thread(application)

    response = await api.patch(feedback_path(application, thread), token, **request_body)

    await assert_error(response, 400, "Nothing sent to update")
    assert (await shown_thread(api, token, application, thread))["archived"] is False


@pytest.mark.parametrize("raw", ["archived=true&", "{not json", "[true]", '"archived"'])
async def test_patch_with_a_body_that_is_not_a_json_object_is_rejected(api, token, application, raw):
    thread = await make_thread(application)

    response = await api.patch(
        feedback_path(application, thread),
        token,
        data=raw,
        headers={"Content-Type": "application/json"},
    )

    await assert_error(response, 400, "The request body must be a JSON object.")


@pytest.mark.parametrize("value", ["yes", None, 2, [True]])
async def test_patch_with_an_archived_value_that_is_not_a_boolean_is_rejected(api, token, application, value):
    thread = await make_thread(application)

    response = await api.patch(feedback_path(application, thread), token, json={"archived": value})

    await assert_error(response, 400, "The archived field must be true or false.")
    assert (await shown_thread(api, token, application, thread))["archived"] is False


async def test_patch_of_an_unknown_thread_is_not_found(api, token, application):
    response = await api.patch(f"{feedback_path(application)}/999999", token, json={"archived": True})

    await assert_error(response, 404, "Invalid feedback")


async def test_patch_of_a_thread_of_another_application_is_not_found(api, agent, token, application):
    thread = await make_thread(await make_application(agent))

    response = await api.patch(feedback_path(application, thread), token, json={"archived": True})

    await assert_error(response, 404, "Invalid feedback")


async def test_patch_of_an_unknown_application_is_not_found(api, token, application):
    thread = await make_thread(application)

    response = await api.patch(f"/applications/999999/feedback/{thread.id}", token, json={"archived": True})

    await assert_error(response, 404, "Invalid application")


async def test_patch_with_a_read_only_token_is_forbidden(api, agent, application):
    thread = await make_thread(application)
    read_only = await make_token(agent, "read")

    response = await api.patch(feedback_path(application, thread), read_only, json={"archived": True})

    await assert_error(response, 403, "Insufficient scope")
    assert (await Feedback.get(id=thread.id)).archived is False
