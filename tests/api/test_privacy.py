"""POST /people/erase, GET /people/export and GET /audit: privacy requests through the API."""

from __future__ import annotations

import json

from app.models import AuditEntry, Feedback, Member
from app.services.attachments import store_uploads
from app.services.files import IncomingFile
from app.services.storage import storage_for
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_thread,
    make_token,
    make_user,
)
from tests.integrity import counter_mismatches

PERSON = "pat@example.org"


async def test_erase_answers_the_counts(api, agent, token, application, settings):
    [upload] = await store_uploads(storage_for(settings), application, [IncomingFile("a.txt", b"x")], 10**6)
    await make_thread(application, email=PERSON, attachments=[upload])
    await make_thread(application, email="sam@example.org")

    response = await api.post("/people/erase", token, json={"email": "Pat@Example.org"})

    assert response.status_code == 200, await body_text(response)
    assert (await body_json(response))["data"] == {
        "applications": 1, "senders": 1, "threads": 1, "replies": 0, "attachments": 1, "emails": 0,
    }  # fmt: skip
    assert await Feedback.filter(application_id=application.id).count() == 1
    assert await counter_mismatches() == []


async def test_erase_takes_a_form_and_one_application(api, agent, token, application):
    other = await make_application(agent)
    await make_thread(application, email=PERSON)
    await make_thread(other, email=PERSON)

    response = await api.post("/people/erase", token, form={"email": PERSON, "application_id": str(other.id)})

    assert (await body_json(response))["data"]["threads"] == 1
    assert await Member.filter(application_id=application.id, email=PERSON).exists()


async def test_a_second_user_erases_only_in_their_own_applications(api, agent, application):
    await make_thread(application, email=PERSON)
    stranger = await make_user()
    theirs = await make_application(stranger)
    await make_thread(theirs, email=PERSON)

    response = await api.post("/people/erase", await make_token(stranger), json={"email": PERSON})

    assert (await body_json(response))["data"]["threads"] == 1
    assert await Member.filter(application_id=application.id, email=PERSON).exists()
    assert not await Member.filter(application_id=theirs.id).exists()


async def test_erasing_in_someone_elses_application_is_invalid_application(api, application):
    await make_thread(application, email=PERSON)
    stranger_token = await make_token(await make_user())

    response = await api.post(
        "/people/erase", stranger_token, json={"email": PERSON, "application_id": application.id}
    )

    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"
    assert await Member.filter(application_id=application.id, email=PERSON).exists()


async def test_an_agent_of_the_organization_may_not_erase(api, agent, db):
    owner = await make_user()
    organization = await make_organization(agent, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id)
    await make_thread(application, email=PERSON)

    response = await api.post(
        "/people/erase", await make_token(agent), json={"email": PERSON, "application_id": application.id}
    )

    assert response.status_code == 403
    assert "creator" in await body_text(response)
    assert await Member.filter(application_id=application.id, email=PERSON).exists()


async def test_erase_with_a_bad_address_is_400_and_writes_nothing(api, token, application):
    response = await api.post("/people/erase", token, json={"email": "pat at example"})

    assert response.status_code == 400
    assert await body_text(response) == "The email field must be a valid email address."
    assert await AuditEntry.all().count() == 0


async def test_erase_without_an_address_is_400(api, token):
    response = await api.post("/people/erase", token, json={})

    assert response.status_code == 400
    assert await body_text(response) == "The email field is required."


async def test_erase_with_a_bad_application_id_is_400(api, token):
    response = await api.post("/people/erase", token, json={"email": PERSON, "application_id": "first"})

    assert response.status_code == 400
    assert await body_text(response) == "The application id field must be an integer."


async def test_erase_needs_the_write_scope(api, agent):
    response = await api.post("/people/erase", await make_token(agent, "read"), json={"email": PERSON})

    assert response.status_code == 403
    assert await body_text(response) == "Insufficient scope"


async def test_export_answers_the_document(api, token, application):
    thread = await make_thread(application, email=PERSON, message="My words")

    response = await api.get("/people/export", token, query_string={"email": PERSON})

    assert response.status_code == 200, await body_text(response)
    document = (await body_json(response))["data"]
    [held] = document["applications"]
    assert held["id"] == application.id
    assert [(t["id"], t["message"]) for t in held["threads"]] == [(thread.id, "My words")]


async def test_export_gives_the_files_addresses_as_the_api_does(api, token, application, settings):
    [upload] = await store_uploads(storage_for(settings), application, [IncomingFile("a.txt", b"x")], 10**6)
    thread = await make_thread(application, email=PERSON, attachments=[upload])

    document = await body_json(await api.get("/people/export", token, query_string={"email": PERSON}))
    shown = await body_json(await api.get(f"/applications/{application.id}/feedback/{thread.id}", token))

    exported = document["data"]["applications"][0]["threads"][0]["attachments"][0]["url"]
    assert exported == shown["data"]["attachments"][0]["url"]


async def test_a_second_user_exports_nothing_of_the_first_users_applications(api, application):
    await make_thread(application, email=PERSON, message="My words")

    response = await api.get(
        "/people/export", await make_token(await make_user()), query_string={"email": PERSON}
    )

    assert (await body_json(response))["data"]["applications"] == []
    assert "My words" not in await body_text(response)


async def test_export_of_someone_elses_application_is_invalid_application(api, application):
    response = await api.get(
        "/people/export",
        await make_token(await make_user()),
        query_string={"email": PERSON, "application_id": str(application.id)},
    )

    assert response.status_code == 404
    assert await body_text(response) == "Invalid application"


async def test_export_without_an_address_is_400(api, token):
    response = await api.get("/people/export", token)

    assert response.status_code == 400
    assert await body_text(response) == "The email field is required."


async def test_audit_lists_the_users_entries_without_addresses(api, agent, token, application):
    await make_thread(application, email=PERSON)
    await api.post("/people/erase", token, json={"email": PERSON, "application_id": application.id})

    response = await api.get("/audit", token)

    [entry] = (await body_json(response))["data"]
    assert (entry["action"], entry["application_id"], entry["actor_id"]) == (
        "person.erase",
        application.id,
        agent.id,
    )
    assert entry["counts"]["threads"] == 1
    assert "pat" not in json.dumps(entry)


async def test_a_second_user_sees_none_of_the_first_users_audit_entries(api, token, application):
    await api.post("/people/erase", token, json={"email": PERSON})

    response = await api.get("/audit", await make_token(await make_user()))

    assert (await body_json(response))["data"] == []
