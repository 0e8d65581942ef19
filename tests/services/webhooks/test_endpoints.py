"""Webhook endpoints: who may manage them, what they may hold, their secrets, their log."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest

from app.db import transactional
from app.errors import Forbidden, NotFound, ValidationError
from app.models import EVENT_TYPES
from app.repositories import webhooks
from app.services.webhooks import endpoints
from app.services.webhooks.delivery import Sender, deliver_due
from tests.factories import make_application, make_organization, make_thread, make_user, make_webhook

HOOK = "http://127.0.0.1:9/hooks"


async def test_a_new_endpoint_listens_to_every_event_in_the_standard_format(
    agent, application, hook_settings
):
    endpoint, secret = await make_webhook(agent, application, HOOK, hook_settings)

    assert endpoint.events == EVENT_TYPES
    assert (endpoint.format, endpoint.enabled, endpoint.include_notes) == ("standard", True, False)
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert endpoint.secret == secret


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "The url field is required."),
        ({"url": "ftp://example.com/"}, "The url field must be an http:// or https:// URL"),
        ({"url": HOOK, "events": ["feedback.exploded"]}, "The events field must list one or more of"),
        ({"url": HOOK, "events": []}, "The events field must list one or more of"),
        ({"url": HOOK, "format": "xml"}, "The format field must be standard or slack."),
        ({"url": HOOK, "include_notes": "maybe"}, "The include_notes field must be true or false."),
        ({"url": HOOK, "description": "x" * 201}, "The description field must not be greater than 200"),
    ],
)
async def test_bad_fields_are_refused_and_nothing_is_saved(agent, application, hook_settings, data, message):
    scope = await endpoints.application_scope(agent, application)

    with pytest.raises(ValidationError, match=message.replace(".", r"\.")):
        await endpoints.create_endpoint(agent, scope, data, hook_settings)

    assert await endpoints.list_endpoints(scope) == []


async def test_a_loopback_url_is_refused_unless_private_addresses_are_allowed(agent, application, settings):
    scope = await endpoints.application_scope(agent, application)

    with pytest.raises(ValidationError, match="public addresses"):
        await endpoints.create_endpoint(agent, scope, {"url": "http://localhost:8000/hooks"}, settings)


async def test_an_agent_of_the_organization_may_not_manage_its_applications_webhooks(hook_settings):
    owner, member = await make_user(), await make_user()
    organization = await make_organization(member, owners=(owner,))
    application = await make_application(owner, organization_id=str(organization.id))

    with pytest.raises(Forbidden):
        await endpoints.application_scope(member, application)
    with pytest.raises(Forbidden):
        await endpoints.organization_scope(member, organization.id)
    with pytest.raises(NotFound):
        await endpoints.organization_scope(await make_user(), organization.id)


async def test_an_endpoint_is_found_only_in_its_own_scope(agent, application, hook_settings):
    endpoint, _ = await make_webhook(agent, application, HOOK, hook_settings)
    other_owner = await make_user()
    other = await make_application(other_owner)

    with pytest.raises(NotFound, match="Invalid webhook"):
        await endpoints.get_endpoint(await endpoints.application_scope(other_owner, other), endpoint.id)


async def test_an_update_changes_only_what_was_sent(agent, application, hook_settings):
    endpoint, _ = await make_webhook(agent, application, HOOK, hook_settings, description="CRM")
    scope = await endpoints.application_scope(agent, application)

    updated = await endpoints.update_endpoint(scope, endpoint, {"events": "reply.created"}, hook_settings)

    assert (updated.events, updated.description, updated.url) == (("reply.created",), "CRM", HOOK)


async def test_enabling_a_disabled_endpoint_clears_its_failures(agent, application, hook_settings):
    endpoint, _ = await make_webhook(agent, application, HOOK, hook_settings)
    now = datetime.now(UTC)

    @transactional
    async def break_it() -> None:
        await webhooks.record_failure(endpoint.id, now)
        await webhooks.disable_endpoint(endpoint.id, "Disabled after five days of failed deliveries", now)

    await break_it()
    scope = await endpoints.application_scope(agent, application)

    enabled = await endpoints.update_endpoint(scope, endpoint, {"enabled": True}, hook_settings)

    assert (enabled.enabled, enabled.failing_since, enabled.disabled_reason) == (True, None, "")


async def test_a_rotation_keeps_the_old_secret_signing_for_a_day(agent, application, hook_settings):
    endpoint, old = await make_webhook(agent, application, HOOK, hook_settings)
    scope = await endpoints.application_scope(agent, application)

    rotated, new = await endpoints.rotate_secret(scope, endpoint)

    now = datetime.now(UTC)
    assert new != old
    assert rotated.secrets(now) == [new, old]
    assert rotated.secrets(now + endpoints.ROTATION_OVERLAP) == [new]


async def test_an_application_has_at_most_twenty_endpoints(agent, application, hook_settings):
    for number in range(endpoints.MAX_ENDPOINTS):
        await make_webhook(agent, application, f"{HOOK}/{number}", hook_settings)

    with pytest.raises(ValidationError, match="more than 20 webhooks"):
        await make_webhook(agent, application, HOOK, hook_settings)


async def test_a_test_event_is_queued_and_delivered(agent, application, hook_settings, receiver):
    endpoint, secret = await make_webhook(agent, application, receiver.url, hook_settings)
    scope = await endpoints.application_scope(agent, application)

    queued = await endpoints.send_test_event(scope, endpoint)
    sender = Sender(allow_private=True)
    try:
        await deliver_due(hook_settings, sender)
    finally:
        await sender.close()

    assert (queued.event_type, queued.status) == ("webhook.test", "pending")
    event = receiver.received[0].verified_with(secret)
    assert event is not None and event["type"] == "webhook.test"
    [logged] = await endpoints.delivery_log(endpoint)
    assert (logged.delivery.id, logged.delivery.status) == (queued.id, "delivered")
    assert [attempt.status_code for attempt in logged.attempts] == [200]


async def test_resend_sends_a_delivered_event_again_with_the_same_message_id(
    agent, application, hook_settings, receiver
):
    endpoint, _ = await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    sender = Sender(allow_private=True)
    try:
        await deliver_due(hook_settings, sender)
        [logged] = await endpoints.delivery_log(endpoint)
        await endpoints.resend(endpoint, logged.delivery.id)
        await deliver_due(hook_settings, sender)
    finally:
        await sender.close()

    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    [logged] = await endpoints.delivery_log(endpoint)
    assert (logged.delivery.status, len(logged.attempts)) == ("delivered", 2)


async def test_another_endpoints_delivery_cannot_be_resent(agent, application, hook_settings):
    endpoint, _ = await make_webhook(agent, application, HOOK, hook_settings)
    other, _ = await make_webhook(agent, application, HOOK + "/2", hook_settings)
    await make_thread(application)
    [logged, _] = await endpoints.delivery_log(endpoint) + await endpoints.delivery_log(other)

    with pytest.raises(NotFound, match="Invalid delivery"):
        await endpoints.resend(other, logged.delivery.id)


async def test_the_log_pages_newest_first(agent, application, hook_settings):
    endpoint, _ = await make_webhook(agent, application, HOOK, hook_settings)
    for _ in range(3):
        await make_thread(application)

    first = await endpoints.delivery_log(endpoint, limit=2)
    rest = await endpoints.delivery_log(endpoint, limit=2, before=first[-1].delivery.id)

    ids = [logged.delivery.id for logged in first + rest]
    assert ids == sorted(ids, reverse=True)
    assert len(ids) == 3


async def test_deleting_an_endpoint_deletes_its_deliveries(agent, application, hook_settings):
    endpoint, _ = await make_webhook(agent, application, HOOK, hook_settings)
    await make_thread(application)

    await endpoints.delete_endpoint(endpoint)

    assert await webhooks.deliveries_of_endpoint(endpoint.id, 10) == []
