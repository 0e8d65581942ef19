"""Events are written in the transaction of their change, for the endpoints that listen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.db import transactional
from app.models import WebhookDelivery, WebhookEvent
from app.representations import encode_json, thread_json
from app.services import feedback, tags
from app.services.attachments import store_uploads
from app.services.deletion import delete_application, delete_thread
from app.services.erasure import erase_person
from app.services.files import IncomingFile
from app.services.storage import storage_for
from app.services.webhooks import events
from app.services.webhooks.endpoints import create_endpoint, organization_scope
from tests.factories import (
    make_application,
    make_customer_reply,
    make_organization,
    make_reply,
    make_thread,
    make_user,
    make_webhook,
    thread_row,
)

HOOK = "http://127.0.0.1:9/hooks"


async def written() -> list[tuple[str, Any]]:
    """Every event written so far, oldest first: its type and body."""
    return [(e.type, json.loads(e.payload)) for e in await WebhookEvent.all().order_by("id")]


async def test_a_new_thread_writes_feedback_created_with_the_threads_json(agent, application, hook_settings):
    endpoint, _ = await make_webhook(agent, application, HOOK, hook_settings)

    thread = await make_thread(application, message="The export button does nothing.", tags=["export"])

    [(kind, body)] = await written()
    assert kind == "feedback.created"
    assert body["type"] == "feedback.created"
    assert str(body["timestamp"]).endswith("Z")
    data = body["data"]
    assert isinstance(data, dict)
    assert data["id"] == thread.id
    assert data["message"] == "The export button does nothing."
    assert data["tags"] == ["export"]
    assert (
        data["permalink"]
        == f"{hook_settings.base_url}/app/applications/{application.id}/feedback/{thread.id}"
    )
    [delivery] = await WebhookDelivery.all()
    assert (delivery.endpoint_id, delivery.status, delivery.attempts) == (endpoint.id, "pending", 0)
    assert delivery.message_id.startswith("msg_")


async def test_a_new_threads_event_shows_it_as_it_reads_after_the_commit(agent, application, hook_settings):
    await make_webhook(agent, application, HOOK, hook_settings)
    await make_thread(application, email="jo@example.org", name="Jo Customer", message="First")
    png = IncomingFile("shot.png", b"\x89PNG\r\n\x1a\n" + bytes(20))
    [upload] = await store_uploads(storage_for(hook_settings), application, [png], 10**6)

    thread = await make_thread(
        application,
        email="jo@example.org",
        name="",  # the sender keeps the name given before
        message="Second",
        tags=["ui", "bug"],
        attachments=[upload],
        properties={"plan": "team"},
        nps=9,
    )

    told = (await written())[-1][1]["data"]
    read = await feedback.get_thread_details(application, thread.id)
    assert told == json.loads(encode_json(thread_json(read, hook_settings)))
    assert (told["name"], told["tags"], len(told["attachments"])) == ("Jo Customer", ["bug", "ui"], 1)


async def test_a_new_threads_event_does_not_read_the_thread_back(agent, application, hook_settings, queries):
    await make_webhook(agent, application, HOOK, hook_settings)
    queries.statements.clear()

    await make_thread(application, message="No tags, no files.")

    assert len(await written()) == 1
    read_back = [s for s in queries.statements if "FROM feedback f" in s or "FROM replies" in s]
    assert read_back == []


async def test_without_a_listening_endpoint_nothing_is_written(agent, application, hook_settings):
    await make_webhook(agent, application, HOOK, hook_settings, events=["reply.created"])

    await make_thread(application)

    assert await written() == []


async def test_another_applications_endpoint_hears_nothing(agent, application, hook_settings):
    other = await make_user()
    elsewhere = await make_application(other)
    await make_webhook(other, elsewhere, HOOK, hook_settings)

    await make_thread(application)

    assert await written() == []


async def test_an_organizations_endpoint_hears_each_of_its_applications(hook_settings):
    owner = await make_user()
    organization = await make_organization(owner)
    application = await make_application(owner, organization_id=str(organization.id))
    endpoint, _ = await create_endpoint(
        owner, await organization_scope(owner, organization.id), {"url": HOOK}, hook_settings
    )

    await make_thread(application)

    [delivery] = await WebhookDelivery.all()
    assert delivery.endpoint_id == endpoint.id


async def test_archiving_writes_feedback_updated(agent, application, hook_settings):
    thread = await make_thread(application)
    await make_webhook(agent, application, HOOK, hook_settings, events=["feedback.updated"])

    await feedback.set_archived(application, thread, True)

    [(kind, body)] = await written()
    assert kind == "feedback.updated"
    assert body["data"]["archived"] is True


async def test_archiving_an_archived_thread_writes_nothing(agent, application, hook_settings):
    thread = await make_thread(application)
    await feedback.set_archived(application, thread, True)
    await make_webhook(agent, application, HOOK, hook_settings)

    await feedback.set_archived(application, await thread_row(thread.id), True)

    assert await written() == []


async def test_a_sentiment_correction_and_a_tag_write_feedback_updated(agent, application, hook_settings):
    thread = await make_thread(application)
    await make_webhook(agent, application, HOOK, hook_settings, events=["feedback.updated"])

    await feedback.set_sentiment(application, thread, "negative")
    await tags.add_tag_to_thread(application, thread, "billing")

    bodies = [body["data"] for _, body in await written()]
    assert [(b["sentiment"], b["tags"]) for b in bodies] == [("negative", []), ("negative", ["billing"])]


async def test_a_deleted_thread_is_announced_as_it_was(agent, application, hook_settings):
    thread = await make_thread(application, message="Please delete my data.")
    await make_webhook(agent, application, HOOK, hook_settings, events=["feedback.deleted"])

    await delete_thread(application, thread.id, storage_for(hook_settings))

    [(kind, body)] = await written()
    assert kind == "feedback.deleted"
    assert body["data"]["id"] == thread.id
    assert body["data"]["message"] == "Please delete my data."


async def test_a_reply_writes_reply_created_with_its_thread(agent, application, hook_settings):
    thread = await make_thread(application)
    await make_webhook(agent, application, HOOK, hook_settings, events=["reply.created"])

    reply = await make_reply(agent, application, thread, "We are on it.")

    [(kind, body)] = await written()
    assert kind == "reply.created"
    data = body["data"]
    assert isinstance(data, dict)
    assert (data["id"], data["type"], data["message"], data["feedback_id"]) == (
        reply.id,
        "reply",
        "We are on it.",
        thread.id,
    )
    assert data["user"]["email"] == agent.email
    assert data["feedback"]["id"] == thread.id


@pytest.mark.parametrize(("include_notes", "announced"), [(False, 0), (True, 1)])
async def test_notes_go_only_to_endpoints_that_ask_for_them(include_notes, announced, hook_settings):
    owner = await make_user(plan="team")
    application = await make_application(owner)
    thread = await make_thread(application)
    await make_webhook(
        owner, application, HOOK, hook_settings, events=["reply.created"], include_notes=include_notes
    )

    await make_reply(owner, application, thread, "Internal: refund them.", type="note")

    assert len(await written()) == announced


async def test_a_customers_answer_reopens_and_is_announced(agent, application, hook_settings):
    thread = await make_thread(application, email="jane@example.org")
    await feedback.set_archived(application, thread, True)
    await make_webhook(agent, application, HOOK, hook_settings, events=["feedback.updated", "reply.created"])

    await make_customer_reply(application, await thread_row(thread.id), "jane@example.org", "Still broken.")

    kinds = [
        (kind, body["data"].get("archived"), body["data"].get("reply_from_agent"))
        for kind, body in await written()
    ]  # type: ignore[union-attr]
    assert kinds == [("feedback.updated", False, None), ("reply.created", None, False)]


async def test_a_change_rolled_back_takes_its_event_with_it(agent, application, hook_settings):
    thread = await make_thread(application)
    await make_webhook(agent, application, HOOK, hook_settings)

    @transactional
    async def archive_then_fail() -> None:
        await events.announce_threads(events.UPDATED, {application.id: [thread.id]})
        raise RuntimeError("the change failed")

    with pytest.raises(RuntimeError):
        await archive_then_fail()

    assert await written() == []
    assert await WebhookDelivery.all().count() == 0


async def test_a_disabled_endpoint_hears_nothing(agent, application, hook_settings):
    await make_webhook(agent, application, HOOK, hook_settings, enabled=False)

    await make_thread(application)

    assert await written() == []


async def test_deleting_a_whole_application_announces_no_thread(hook_settings):
    owner = await make_user()
    organization = await make_organization(owner)
    application = await make_application(owner, organization_id=str(organization.id))
    await make_thread(application)
    scope = await organization_scope(owner, organization.id)
    await create_endpoint(owner, scope, {"url": HOOK, "events": ["feedback.deleted"]}, hook_settings)

    await delete_application(owner, application, storage_for(hook_settings))

    assert await written() == []


async def test_an_erasure_forgets_the_earlier_events_and_announces_the_deletion(
    agent, application, hook_settings
):
    thread = await make_thread(application, email="jane@example.org", message="My number is 555-0101.")
    await make_thread(application, email="other@example.org")
    await make_webhook(agent, application, HOOK, hook_settings)
    await make_reply(agent, application, thread, "Thanks Jane.")

    await erase_person(agent, "jane@example.org", storage=storage_for(hook_settings))

    kinds = [(kind, body["data"]["id"]) for kind, body in await written()]
    assert kinds == [("feedback.deleted", thread.id)]
