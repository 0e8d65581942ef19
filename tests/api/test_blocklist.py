"""The blocklist through the management API, and marking a thread as spam."""

from __future__ import annotations

import pytest

from app.models import BlockedSender, Feedback
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_thread,
    make_token,
    make_user,
)


@pytest.fixture
async def intruder_token(db: str) -> str:
    """A read and write token of a second user, who has an application of their own."""
    intruder = await make_user()
    await make_application(intruder)
    return await make_token(intruder)


def blocklist_path(application_id: int, entry_id: int | None = None) -> str:
    return f"/applications/{application_id}/blocklist" + (f"/{entry_id}" if entry_id else "")


async def add(api, token, application_id: int, value: object):
    return await api.post(blocklist_path(application_id), token, json={"value": value})


async def test_adding_an_entry_answers_201_with_it_normalized(api, token, application):
    response = await add(api, token, application.id, "@Spam.Example")
    assert response.status_code == 201
    entry = (await body_json(response))["data"]
    assert entry["kind"] == "domain"
    assert entry["value"] == "spam.example"
    assert isinstance(entry["id"], int) and isinstance(entry["created_at"], int)


async def test_adding_an_entry_the_list_has_answers_200_with_it(api, token, application):
    first = (await body_json(await add(api, token, application.id, "203.0.113.9/24")))["data"]
    response = await add(api, token, application.id, "203.0.113.0/24")
    assert response.status_code == 200
    assert (await body_json(response))["data"] == first


async def test_the_list_holds_every_entry_newest_first(api, token, application):
    await add(api, token, application.id, "bot@example.com")
    await add(api, token, application.id, "2001:db8::/32")
    response = await api.get(blocklist_path(application.id), token)
    assert response.status_code == 200
    data = (await body_json(response))["data"]
    assert [(e["kind"], e["value"]) for e in data] == [
        ("network", "2001:db8::/32"),
        ("email", "bot@example.com"),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "The value field is required."),
        ("", "The value field is required."),
        (["a@b.example"], "The value field must be a string."),
        ("not a thing", "The value field must be an e-mail address"),
        ("0.0.0.0/0", "The value field must not be a network wider than /8"),
    ],
)
async def test_a_bad_value_is_400_and_writes_nothing(api, token, application, value, message):
    response = await add(api, token, application.id, value)
    assert response.status_code == 400
    assert (await body_text(response)).startswith(message)
    assert await BlockedSender.all().count() == 0


async def test_removing_an_entry_answers_204_and_unblocks(api, token, application):
    entry = (await body_json(await add(api, token, application.id, "bot@example.com")))["data"]
    response = await api.delete(blocklist_path(application.id, entry["id"]), token)
    assert response.status_code == 204
    assert await body_text(response) == ""
    assert await BlockedSender.all().count() == 0


async def test_removing_an_unknown_entry_is_invalid_entry(api, token, application):
    response = await api.delete(blocklist_path(application.id, 999_999), token)
    assert response.status_code == 404
    assert await body_text(response) == "Invalid entry"


async def test_a_read_token_lists_but_cannot_change_the_list(api, agent, application):
    read = await make_token(agent, "read")
    assert (await api.get(blocklist_path(application.id), read)).status_code == 200
    response = await add(api, read, application.id, "bot@example.com")
    assert response.status_code == 403
    assert await BlockedSender.all().count() == 0


async def test_an_agent_of_the_organization_manages_the_list(api, db):
    owner, member = await make_user(), await make_user()
    organization = await make_organization(member, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)
    response = await add(api, await make_token(member), application.id, "bot@example.com")
    assert response.status_code == 201


async def test_another_user_sees_and_changes_nothing_of_the_list(api, token, application, intruder_token):
    entry = (await body_json(await add(api, token, application.id, "bot@example.com")))["data"]
    for response in (
        await api.get(blocklist_path(application.id), intruder_token),
        await add(api, intruder_token, application.id, "victim@example.com"),
        await api.delete(blocklist_path(application.id, entry["id"]), intruder_token),
    ):
        assert response.status_code == 404
        assert await body_text(response) == "Invalid application"
    assert await BlockedSender.all().values_list("value", flat=True) == ["bot@example.com"]


async def test_another_user_cannot_remove_an_entry_through_their_own_application(api, token, application, db):
    entry = (await body_json(await add(api, token, application.id, "bot@example.com")))["data"]
    intruder = await make_user()
    theirs = await make_application(intruder)
    response = await api.delete(blocklist_path(theirs.id, entry["id"]), await make_token(intruder))
    assert response.status_code == 404
    assert await body_text(response) == "Invalid entry"
    assert await BlockedSender.all().count() == 1


# --- spam -------------------------------------------------------------------------------------------


def spam_path(application_id: int, feedback_id: int) -> str:
    return f"/applications/{application_id}/feedback/{feedback_id}/spam"


async def test_marking_spam_blocks_the_sender_and_deletes_the_thread(api, token, application):
    thread = await make_thread(application, email="Bot@Spam.example")
    kept = await make_thread(application, email="jane@example.com")
    response = await api.post(spam_path(application.id, thread.id), token)
    assert response.status_code == 200
    data = (await body_json(response))["data"]
    assert data["deleted"] == 1
    assert (data["blocked"]["kind"], data["blocked"]["value"]) == ("email", "bot@spam.example")
    assert await Feedback.all().values_list("id", flat=True) == [kept.id]
    listed = (await body_json(await api.get(blocklist_path(application.id), token)))["data"]
    assert listed == [data["blocked"]]


async def test_marking_an_unknown_thread_as_spam_is_invalid_feedback(api, token, application):
    response = await api.post(spam_path(application.id, 999_999), token)
    assert response.status_code == 404
    assert await body_text(response) == "Invalid feedback"
    assert await BlockedSender.all().count() == 0


async def test_another_user_cannot_mark_a_thread_as_spam(api, application, intruder_token):
    thread = await make_thread(application)
    response = await api.post(spam_path(application.id, thread.id), intruder_token)
    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"
    assert await Feedback.filter(id=thread.id).exists()
    assert await BlockedSender.all().count() == 0
