"""Deleting through the management API: a thread, a selection of threads, a tag, an application."""

from __future__ import annotations

from io import BytesIO

import pytest
from quart.datastructures import FileStorage

from app.models import Application, Attachment, Feedback, Tag
from app.services.attachments import store_uploads
from app.services.deletion import ADMINISTRATORS_ONLY, MAX_SELECTED
from app.services.files import IncomingFile
from app.services.storage import Storage, storage_for
from tests.api.conftest import ON_DISK_AND_IN_A_BUCKET
from tests.factories import (
    application_row,
    body_json,
    body_text,
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_token,
    make_user,
)


@pytest.fixture
async def user(db: str):
    return await make_user(plan="team")


@pytest.fixture
async def token(user) -> str:
    return await make_token(user)


@pytest.fixture
async def application(user):
    return await make_application(user)


@pytest.fixture
async def intruder_token(db: str) -> str:
    """A read and write token of a second user, who has an application of their own."""
    intruder = await make_user()
    await make_application(intruder)
    return await make_token(intruder)


@pytest.fixture
async def team(db: str):
    """An organization's application, its owner's token and an agent's token."""
    owner, agent = await make_user(), await make_user()
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)
    return application, await make_token(owner), await make_token(agent)


PNG = b"\x89PNG\r\n\x1a\n" + bytes(32)


async def thread_with_a_file(storage: Storage, application) -> int:
    """A thread of the application with one attachment; its id."""
    [upload] = await store_uploads(storage, application, [IncomingFile("steps.txt", b"steps")], 10**6)
    return (await make_thread(application, attachments=[upload])).id


async def thread_ids(application_id: int) -> list[int]:
    return sorted(await Feedback.filter(application_id=application_id).values_list("id", flat=True))


# --- DELETE /applications/{id}/feedback/{id} ---------------------------------------------------


async def test_deleting_a_thread_answers_204_without_a_body(api, token, application):
    thread = await make_thread(application)

    response = await api.delete(f"/applications/{application.id}/feedback/{thread.id}", token)

    assert response.status_code == 204
    assert await body_text(response) == ""
    assert await thread_ids(application.id) == []


async def test_deleting_a_thread_moves_the_counters(api, token, user, application):
    kept = await make_thread(application, tags=["billing"])
    doomed = await make_thread(application, tags=["billing"])
    await make_reply(user, application, doomed)

    await api.delete(f"/applications/{application.id}/feedback/{doomed.id}", token)

    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads, stored.reply_count) == (1, 0, 0)
    assert (await Tag.get(application_id=application.id)).open_count == 1
    assert await thread_ids(application.id) == [kept.id]


async def test_deleting_an_unknown_thread_is_not_found(api, token, application):
    thread = await make_thread(application)
    await api.delete(f"/applications/{application.id}/feedback/{thread.id}", token)

    response = await api.delete(f"/applications/{application.id}/feedback/{thread.id}", token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid feedback"


async def test_a_thread_of_another_application_is_not_deleted_through_this_one(api, token, user, application):
    other = await make_application(user)
    thread = await make_thread(other)

    response = await api.delete(f"/applications/{application.id}/feedback/{thread.id}", token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid feedback"
    assert await thread_ids(other.id) == [thread.id]


async def test_another_users_thread_is_not_deleted(api, intruder_token, application):
    thread = await make_thread(application)

    response = await api.delete(f"/applications/{application.id}/feedback/{thread.id}", intruder_token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"
    assert await thread_ids(application.id) == [thread.id]
    assert (await application_row(application.id)).open_threads == 1


async def test_an_organization_agent_may_delete_a_thread(api, team):
    application, _, agent_token = team
    thread = await make_thread(application)

    response = await api.delete(f"/applications/{application.id}/feedback/{thread.id}", agent_token)

    assert response.status_code == 204
    assert await thread_ids(application.id) == []


async def test_deleting_a_thread_needs_the_write_scope(api, user, application):
    thread = await make_thread(application)

    response = await api.delete(
        f"/applications/{application.id}/feedback/{thread.id}", await make_token(user, "read")
    )

    assert response.status_code == 403
    assert await body_text(response) == "Insufficient scope"
    assert await thread_ids(application.id) == [thread.id]


# --- POST /applications/{id}/feedback/delete ---------------------------------------------------


def selection(application_id: int) -> str:
    return f"/applications/{application_id}/feedback/delete"


async def test_deleting_a_selection_answers_how_many_went(api, token, application):
    first, second, kept = [await make_thread(application) for _ in range(3)]

    response = await api.post(
        selection(application.id), token, json={"feedback_ids": [first.id, second.id, first.id]}
    )

    assert response.status_code == 200
    assert await body_json(response) == {"data": {"deleted": 2}}
    assert await thread_ids(application.id) == [kept.id]


async def test_deleting_a_selection_moves_the_counters(api, token, application):
    threads = [await make_thread(application, tags=["ui"]) for _ in range(3)]

    await api.post(selection(application.id), token, json={"feedback_ids": [t.id for t in threads[:2]]})

    assert (await application_row(application.id)).open_threads == 1
    assert (await Tag.get(application_id=application.id)).open_count == 1


async def test_a_selection_ignores_threads_of_other_applications(api, token, user, application):
    mine = await make_thread(application)
    other = await make_application(user)
    theirs = await make_thread(other)

    response = await api.post(selection(application.id), token, json={"feedback_ids": [mine.id, theirs.id]})

    assert await body_json(response) == {"data": {"deleted": 1}}
    assert await thread_ids(other.id) == [theirs.id]


async def test_another_user_cannot_delete_a_selection(api, intruder_token, application):
    thread = await make_thread(application)

    response = await api.post(selection(application.id), intruder_token, json={"feedback_ids": [thread.id]})

    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"
    assert await thread_ids(application.id) == [thread.id]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "The feedback ids field is required."),
        ({"feedback_ids": []}, "Select at least one thread."),
        ({"feedback_ids": "1,2"}, "The feedback ids field must hold thread ids."),
        ({"feedback_ids": [1, "x"]}, "The feedback ids field must hold thread ids."),
        ({"feedback_ids": [0]}, "The feedback ids field must hold thread ids."),
        (
            {"feedback_ids": list(range(1, MAX_SELECTED + 2))},
            f"Select at most {MAX_SELECTED} threads at once.",
        ),
    ],
)
async def test_a_bad_selection_is_refused_and_deletes_nothing(api, token, application, body, message):
    thread = await make_thread(application)

    response = await api.post(selection(application.id), token, json=body)

    assert response.status_code == 400
    assert await body_text(response) == message
    assert await thread_ids(application.id) == [thread.id]


async def test_a_selection_must_be_a_json_object(api, token, application):
    response = await api.post(selection(application.id), token, json=[1, 2])

    assert response.status_code == 400
    assert await body_text(response) == "The request body must be a JSON object."


# --- DELETE /applications/{id}/tags/{id} -------------------------------------------------------


async def test_deleting_a_tag_untags_its_threads(api, token, application):
    thread = await make_thread(application, tags=["billing", "ui"])
    billing = await Tag.get(application_id=application.id, name="billing")

    response = await api.delete(f"/applications/{application.id}/tags/{billing.id}", token)

    assert response.status_code == 204
    assert await body_text(response) == ""
    listed = await body_json(await api.get(f"/applications/{application.id}/tags", token))
    assert [tag["name"] for tag in listed["data"]] == ["ui"]
    assert await thread_ids(application.id) == [thread.id]
    assert (await application_row(application.id)).open_threads == 1


async def test_deleting_an_unknown_tag_is_not_found(api, token, application):
    await make_thread(application, tags=["billing"])
    tag = await Tag.get(application_id=application.id)
    await api.delete(f"/applications/{application.id}/tags/{tag.id}", token)

    response = await api.delete(f"/applications/{application.id}/tags/{tag.id}", token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid tag"


async def test_a_tag_of_another_application_is_not_deleted_through_this_one(api, token, user, application):
    other = await make_application(user)
    await make_thread(other, tags=["billing"])
    tag = await Tag.get(application_id=other.id)

    response = await api.delete(f"/applications/{application.id}/tags/{tag.id}", token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid tag"
    assert await Tag.filter(id=tag.id).exists()


async def test_another_user_cannot_delete_a_tag(api, intruder_token, application):
    await make_thread(application, tags=["billing"])
    tag = await Tag.get(application_id=application.id)

    response = await api.delete(f"/applications/{application.id}/tags/{tag.id}", intruder_token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"
    assert await Tag.filter(id=tag.id).exists()


async def test_an_organization_agent_may_not_delete_a_tag(api, team):
    application, owner_token, agent_token = team
    await make_thread(application, tags=["billing"])
    tag = await Tag.get(application_id=application.id)

    refused = await api.delete(f"/applications/{application.id}/tags/{tag.id}", agent_token)
    assert refused.status_code == 403
    assert await body_text(refused) == ADMINISTRATORS_ONLY
    assert await Tag.filter(id=tag.id).exists()

    allowed = await api.delete(f"/applications/{application.id}/tags/{tag.id}", owner_token)
    assert allowed.status_code == 204


@ON_DISK_AND_IN_A_BUCKET
async def test_deleting_a_thread_removes_its_files(api, token, user, settings):
    storage = storage_for(settings)
    application = await make_application(user, uploads_enabled=True)
    doomed, kept = (
        await thread_with_a_file(storage, application),
        await thread_with_a_file(storage, application),
    )
    assert len(await storage.keys("uploads")) == 2

    response = await api.delete(f"/applications/{application.id}/feedback/{doomed}", token)

    assert response.status_code == 204
    kept_file = await Attachment.get(feedback_id=kept)
    assert await storage.keys("uploads") == [f"uploads/{application.id}/{kept_file.storage_name}"]


# --- DELETE /applications/{id} -----------------------------------------------------------------


async def test_deleting_an_application_takes_its_threads(api, token, user, application):
    await make_thread(application, tags=["billing"])
    kept = await make_application(user)
    await make_thread(kept)

    response = await api.delete(f"/applications/{application.id}", token)

    assert response.status_code == 204
    assert await body_text(response) == ""
    assert not await Application.filter(id=application.id).exists()
    assert await thread_ids(application.id) == []
    assert (await api.get(f"/applications/{application.id}", token)).status_code == 404
    assert await Application.filter(owner_id=user.id).values_list("id", flat=True) == [kept.id]
    assert (await application_row(kept.id)).open_threads == 1


@ON_DISK_AND_IN_A_BUCKET
async def test_deleting_an_application_removes_its_files_and_its_logo(api, token, settings):
    storage = storage_for(settings)
    created = await api.post(
        "/applications",
        token,
        form={"name": "Doomed", "uploads_enabled": "true"},
        files={"logo": FileStorage(BytesIO(PNG), filename="logo.png")},
    )
    application_id = (await body_json(created))["data"]["id"]
    await thread_with_a_file(storage, await application_row(application_id))
    assert len(await storage.keys("uploads")) == 1
    assert len(await storage.keys("logos")) == 1

    response = await api.delete(f"/applications/{application_id}", token)

    assert response.status_code == 204
    assert await storage.keys("uploads") == []
    assert await storage.keys("logos") == []


async def test_deleting_an_unknown_application_is_not_found(api, token, application):
    await api.delete(f"/applications/{application.id}", token)

    response = await api.delete(f"/applications/{application.id}", token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"


async def test_another_user_cannot_delete_an_application(api, intruder_token, application):
    thread = await make_thread(application)

    response = await api.delete(f"/applications/{application.id}", intruder_token)

    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"
    assert await Application.filter(id=application.id).exists()
    assert await thread_ids(application.id) == [thread.id]


async def test_an_organization_agent_may_not_delete_an_application(api, team):
    application, owner_token, agent_token = team
    thread = await make_thread(application)

    refused = await api.delete(f"/applications/{application.id}", agent_token)
    assert refused.status_code == 403
    assert await body_text(refused) == ADMINISTRATORS_ONLY
    assert await thread_ids(application.id) == [thread.id]

    allowed = await api.delete(f"/applications/{application.id}", owner_token)
    assert allowed.status_code == 204
    assert not await Application.filter(id=application.id).exists()


async def test_deleting_an_application_needs_the_write_scope(api, user, application):
    response = await api.delete(f"/applications/{application.id}", await make_token(user, "read"))

    assert response.status_code == 403
    assert await body_text(response) == "Insufficient scope"
    assert await Application.filter(id=application.id).exists()
