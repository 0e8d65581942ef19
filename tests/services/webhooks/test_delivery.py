"""Deliveries by the Standard Webhooks specification, to a real receiver on loopback."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from app.db import atomic, transactional
from app.models import OutboundEmail, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from app.repositories import webhooks
from app.services.deployment import use_settings
from app.services.webhooks import endpoints
from app.services.webhooks.delivery import (
    DISABLE_AFTER,
    KEEP_RESPONSE,
    LEASE,
    RETRY_DELAYS,
    Sender,
    deliver_due,
    next_attempt,
)
from tests.factories import make_reply, make_thread, make_webhook

LATER = timedelta(days=1)


@pytest.fixture
async def sender(hook_settings):
    sending = Sender(allow_private=True, timeout=2.0)
    yield sending
    await sending.close()


async def deliveries() -> list[WebhookDelivery]:
    return await WebhookDelivery.all().order_by("id")


async def test_a_new_thread_reaches_the_receiver_signed_by_the_standard(
    agent, application, hook_settings, receiver, sender
):
    _, secret = await make_webhook(agent, application, receiver.url, hook_settings)
    thread = await make_thread(application, message="The export button does nothing.")

    assert await deliver_due(hook_settings, sender) == 1

    [arrived] = receiver.received
    event = arrived.verified_with(secret)
    assert event is not None
    assert event["type"] == "feedback.created"
    assert event["data"]["id"] == thread.id  # type: ignore[index]
    assert arrived.headers["webhook-id"].startswith("msg_")
    assert arrived.headers["content-type"] == "application/json"
    [delivery] = await deliveries()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 1, 200)
    assert arrived.headers["webhook-id"] == delivery.message_id
    assert arrived.verified_with(endpoints.new_secret()) is None  # another secret does not verify


async def test_a_failing_receiver_gets_the_same_message_id_at_every_retry(
    agent, application, hook_settings, receiver, sender
):
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    receiver.statuses = [500, 500, 200]
    now = datetime.now(UTC)

    await deliver_due(hook_settings, sender, now)
    assert (await deliveries())[0].status == "pending"
    assert await deliver_due(hook_settings, sender, now + timedelta(seconds=1)) == 0  # retried after 5 s
    await deliver_due(hook_settings, sender, now + RETRY_DELAYS[0])
    await deliver_due(hook_settings, sender, now + RETRY_DELAYS[0] + RETRY_DELAYS[1])

    assert len({request.headers["webhook-id"] for request in receiver.received}) == 1
    assert len(receiver.received) == 3
    assert len({request.body for request in receiver.received}) == 1  # the same body at every try
    [delivery] = await deliveries()
    assert (delivery.status, delivery.attempts) == ("delivered", 3)
    log = await WebhookAttempt.filter(delivery_id=delivery.id).order_by("id")
    assert [attempt.status_code for attempt in log] == [500, 500, 200]
    assert all(attempt.response_body == "thanks" for attempt in log)


def test_retries_grow_over_about_a_day_then_stop():
    now = datetime.now(UTC)
    waits = [next_attempt(attempt, now) for attempt in range(1, 9)]

    assert [wait - now for wait in waits[:-1] if wait] == [
        timedelta(seconds=5), timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2),
        timedelta(hours=5), timedelta(hours=10), timedelta(hours=10),
    ]  # fmt: skip
    assert waits[-1] is None


async def test_a_delivery_is_given_up_after_its_last_retry(
    agent, application, hook_settings, receiver, sender
):
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    receiver.statuses = [503] * 20
    moment = datetime.now(UTC)

    for wait in (*RETRY_DELAYS, timedelta(0)):
        await deliver_due(hook_settings, sender, moment)
        moment += wait

    [delivery] = await deliveries()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("failed", 8, "HTTP 503")
    assert await deliver_due(hook_settings, sender, moment + LATER) == 0


async def test_a_redirect_is_a_failure_and_is_not_followed(
    agent, application, hook_settings, receiver, sender
):
    await make_webhook(agent, application, receiver.url.replace("/hooks/earful", "/redirect"), hook_settings)
    await make_thread(application)

    await deliver_due(hook_settings, sender)

    assert [request.path for request in receiver.received] == ["/redirect"]
    [delivery] = await deliveries()
    assert (delivery.status, delivery.last_status_code) == ("pending", 302)


async def test_a_receiver_that_does_not_answer_times_out(agent, application, hook_settings, receiver):
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    receiver.hang = True
    quick = Sender(allow_private=True, timeout=0.5)

    try:
        await deliver_due(hook_settings, quick)
    finally:
        await quick.close()

    [attempt] = await WebhookAttempt.all()
    assert attempt.error == "No answer within 0.5 seconds"
    assert attempt.status_code is None


async def test_only_the_first_four_kilobytes_of_the_answer_are_kept(
    agent, application, hook_settings, receiver, sender
):
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    receiver.answer = "x" * 100_000

    await deliver_due(hook_settings, sender)

    [attempt] = await WebhookAttempt.all()
    assert len(attempt.response_body) == KEEP_RESPONSE


async def test_an_address_that_resolves_to_loopback_is_refused_at_send_time(
    agent, application, settings, hook_settings, receiver
):
    """Saved while private addresses were allowed; sent by a worker that does not allow them."""
    await make_webhook(agent, application, f"http://localhost:{receiver.port}/hooks", hook_settings)
    await make_thread(application)
    strict = Sender(allow_private=False)

    try:
        await deliver_due(settings, strict)
    finally:
        await strict.close()

    assert receiver.received == []
    [attempt] = await WebhookAttempt.all()
    assert "127.0.0.1" in attempt.error or "::1" in attempt.error
    assert "public addresses" in attempt.error


async def test_during_a_rotation_receivers_with_either_secret_verify(
    agent, application, hook_settings, receiver, sender
):
    endpoint, old_secret = await make_webhook(agent, application, receiver.url, hook_settings)
    scope = await endpoints.application_scope(agent, application)
    _, new_secret = await endpoints.rotate_secret(scope, endpoint)
    await make_thread(application)

    await deliver_due(hook_settings, sender)

    [arrived] = receiver.received
    assert arrived.verified_with(old_secret) is not None
    assert arrived.verified_with(new_secret) is not None
    assert len(arrived.headers["webhook-signature"].split()) == 2


async def test_a_day_after_a_rotation_only_the_new_secret_signs(
    agent, application, hook_settings, receiver, sender
):
    endpoint, old_secret = await make_webhook(agent, application, receiver.url, hook_settings)
    scope = await endpoints.application_scope(agent, application)
    _, new_secret = await endpoints.rotate_secret(scope, endpoint)
    await make_thread(application)

    # Delivered by a worker whose clock is a day on: the library verifies within 5 minutes of the
    # timestamp, so check the signatures against the secrets instead.
    await deliver_due(
        hook_settings, sender, datetime.now(UTC) + endpoints.ROTATION_OVERLAP + timedelta(minutes=1)
    )

    [arrived] = receiver.received
    assert len(arrived.headers["webhook-signature"].split()) == 1
    stored = await webhooks.endpoint_by_id(endpoint.id)
    assert stored is not None and stored.secret == new_secret != old_secret


async def test_two_workers_racing_send_each_delivery_once(
    agent, application, hook_settings, receiver, sender
):
    await make_webhook(agent, application, receiver.url, hook_settings)
    for _ in range(5):
        await make_thread(application)
    other = Sender(allow_private=True)

    try:
        await asyncio.gather(deliver_due(hook_settings, sender), deliver_due(hook_settings, other))
    finally:
        await other.close()

    assert len(receiver.received) == 5
    assert len({request.headers["webhook-id"] for request in receiver.received}) == 5


async def test_a_lease_that_ran_out_lets_another_worker_send_again(
    agent, application, hook_settings, receiver, sender
):
    """A worker that died mid-attempt (the row stays 'sending'): the delivery is tried again
    after its lease, with the same webhook-id."""
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    [delivery] = await deliveries()
    now = datetime.now(UTC)
    await transactional(webhooks.move_delivery)(
        delivery.id, "pending", 0, status="sending", attempts=1, next_attempt_at=now + LEASE
    )

    assert await deliver_due(hook_settings, sender, now) == 0
    await deliver_due(hook_settings, sender, now + LEASE)

    [arrived] = receiver.received
    assert arrived.headers["webhook-id"] == delivery.message_id
    assert (await deliveries())[0].status == "delivered"


async def test_a_slack_endpoint_gets_an_incoming_webhook_message(
    agent, application, hook_settings, receiver, sender
):
    await make_webhook(agent, application, receiver.url, hook_settings, format="slack")
    thread = await make_thread(
        application, name="Jane", email="jane@example.org", message="I <3 the app & more"
    )

    await deliver_due(hook_settings, sender)

    message = json.loads(receiver.received[0].body)
    assert message["text"].startswith("New feedback from Jane &lt;jane@example.org&gt;")
    [attachment] = message["attachments"]
    assert attachment["text"] == "I &lt;3 the app &amp; more"
    assert attachment["title_link"].endswith(f"/feedback/{thread.id}")
    assert {"title": "Sentiment", "value": thread.sentiment, "short": True} in attachment["fields"]


async def test_an_endpoint_failing_for_five_days_is_disabled_and_its_owner_told(
    agent, application, mail_settings, relay, receiver
):
    settings = dataclasses.replace(mail_settings, webhook_allow_private=True)
    use_settings(settings)
    endpoint, _ = await make_webhook(agent, application, receiver.url, settings)
    await make_thread(application)
    await make_thread(application)
    receiver.statuses = [500] * 10
    sender = Sender(allow_private=True)
    start = datetime.now(UTC)

    try:
        await deliver_due(settings, sender, start)
        await deliver_due(settings, sender, start + DISABLE_AFTER)
    finally:
        await sender.close()

    stored = await WebhookEndpoint.get(id=endpoint.id)
    assert stored.enabled is False
    assert "five days" in stored.disabled_reason
    assert {d.status for d in await deliveries()} == {"failed"}
    [notice] = await OutboundEmail.filter(kind="notice")
    assert notice.to_address == agent.email
    assert receiver.url in notice.content


async def test_a_reply_is_delivered_after_the_thread_it_answers(
    agent, application, hook_settings, receiver, sender
):
    await make_webhook(agent, application, receiver.url, hook_settings)
    thread = await make_thread(application)
    await make_reply(agent, application, thread, "Fixed in 2.1.")

    await deliver_due(hook_settings, sender)

    types = sorted(json.loads(request.body)["type"] for request in receiver.received)
    assert types == ["feedback.created", "reply.created"]


async def test_a_batch_is_claimed_sent_and_recorded_in_as_many_statements_whatever_its_size(
    agent, application, hook_settings, receiver, sender, queries
):
    """Claiming and recording each delivery on its own made two write transactions per event,
    which on SQLite queued behind the capture's group commits."""
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    queries.statements.clear()
    await deliver_due(hook_settings, sender)
    for_one = queries.count
    for _ in range(6):
        await make_thread(application)
    queries.statements.clear()

    assert await deliver_due(hook_settings, sender) == 6

    assert queries.count == for_one
    assert {delivery.status for delivery in await deliveries()} == {"delivered"}
    assert await WebhookAttempt.all().count() == 7


async def test_an_endpoint_that_accepted_one_delivery_of_a_batch_is_not_failing(
    agent, application, hook_settings, receiver, sender
):
    endpoint, _ = await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    await make_thread(application)
    receiver.statuses = [500]

    await deliver_due(hook_settings, sender)

    assert sorted(delivery.status for delivery in await deliveries()) == ["delivered", "pending"]
    assert (await WebhookEndpoint.get(id=endpoint.id)).failing_since is None


async def test_an_endpoint_whose_deliveries_all_failed_is_failing_since_then(
    agent, application, hook_settings, receiver, sender
):
    endpoint, _ = await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    await make_thread(application)
    receiver.statuses = [500, 503]
    now = datetime.now(UTC)

    await deliver_due(hook_settings, sender, now)

    assert [(d.status, d.attempts) for d in await deliveries()] == [("pending", 1), ("pending", 1)]
    stored = await WebhookEndpoint.get(id=endpoint.id)
    assert stored.failing_since is not None and abs(stored.failing_since - now) < timedelta(seconds=1)


async def test_the_deliveries_of_an_endpoint_disabled_meanwhile_fail_unsent(
    agent, application, hook_settings, receiver, sender
):
    endpoint, _ = await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    await atomic(lambda: WebhookEndpoint.filter(id=endpoint.id).update(enabled=False))

    assert await deliver_due(hook_settings, sender) == 1

    assert receiver.received == []
    [delivery] = await deliveries()
    assert (delivery.status, delivery.last_error) == ("failed", "The endpoint is disabled")
    assert await WebhookAttempt.all().count() == 0


async def test_a_worker_skips_the_deliveries_another_is_claiming_on_postgresql(
    agent, application, hook_settings, receiver, sender, backend, db
):
    """Workers of several servers share the queue: one does not wait for the rows another holds
    (nor read what only that one will send)."""
    if backend != "postgres":
        pytest.skip("SQLite has one writer at a time")
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    await make_thread(application)
    first, second = await deliveries()
    other_worker = await asyncpg.connect("postgresql://" + db.split("://", 1)[1])
    try:
        async with other_worker.transaction():
            await other_worker.execute("SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE", first.id)
            async with asyncio.timeout(5):
                assert await deliver_due(hook_settings, sender) == 1
    finally:
        await other_worker.close()

    assert [(d.id, d.status) for d in await deliveries()] == [(first.id, "pending"), (second.id, "delivered")]
