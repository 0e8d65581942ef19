"""The durable queue shared by the outbox and the webhook deliveries: claims, leases, release."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from app.models import WebhookDelivery
from app.repositories import webhooks
from app.services.durable_queue import DurableQueue
from tests.factories import make_thread, make_webhook

LEASE = timedelta(seconds=20)


def a_queue() -> DurableQueue:
    return DurableQueue("test-queue", webhooks.move_delivery, logging.getLogger("earful.test"))


async def a_delivery(agent, application, hook_settings) -> WebhookDelivery:
    await make_webhook(agent, application, "http://127.0.0.1:9/hooks", hook_settings)
    await make_thread(application)
    [delivery] = await WebhookDelivery.all()
    return delivery


async def test_a_row_is_claimed_by_one_queue_only(agent, application, hook_settings):
    delivery = await a_delivery(agent, application, hook_settings)
    first, second = a_queue(), a_queue()
    until = datetime.now(UTC) + LEASE

    claims = await asyncio.gather(
        first.claim(delivery.id, "pending", 0, until), second.claim(delivery.id, "pending", 0, until)
    )

    assert sorted(claims, key=str) == [1, None]
    stored = await WebhookDelivery.get(id=delivery.id)
    assert (stored.status, stored.attempts) == ("sending", 1)


async def test_a_settled_row_is_not_handed_back(agent, application, hook_settings):
    delivery = await a_delivery(agent, application, hook_settings)
    queue = a_queue()
    attempt = await queue.claim(delivery.id, "pending", 0, datetime.now(UTC) + LEASE)
    assert attempt == 1

    assert await queue.settle(delivery.id, attempt, status="delivered")
    assert await queue.release_held() == 0
    assert (await WebhookDelivery.get(id=delivery.id)).status == "delivered"


async def test_a_stopping_worker_hands_back_what_it_holds_due_at_once(agent, application, hook_settings):
    delivery = await a_delivery(agent, application, hook_settings)
    queue = a_queue()
    await queue.claim(delivery.id, "pending", 0, datetime.now(UTC) + LEASE)
    now = datetime.now(UTC)

    assert await queue.release_held(now) == 1

    stored = await WebhookDelivery.get(id=delivery.id)
    assert (stored.status, stored.attempts) == ("pending", 1)
    assert stored.next_attempt_at <= now + timedelta(seconds=1)


async def test_the_worker_runs_a_round_when_woken_and_until_told_nothing_more_is_due(db):
    queue, rounds, stop = a_queue(), [], asyncio.Event()

    async def one_round() -> tuple[int, bool]:
        rounds.append(len(rounds))
        return 1, len(rounds) < 3  # three rounds back to back, then wait

    worker = asyncio.create_task(queue.run(stop, one_round, interval=60))
    await asyncio.sleep(0.1)
    assert len(rounds) == 3
    queue.wake()
    await asyncio.sleep(0.1)
    stop.set()
    await asyncio.wait_for(worker, 5)

    assert len(rounds) == 4


async def test_a_failing_round_is_logged_and_the_worker_lives_on(db, caplog):
    queue, stop, calls = a_queue(), asyncio.Event(), []

    async def one_round() -> tuple[int, bool]:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("the database is away")
        stop.set()
        return 0, False

    worker = asyncio.create_task(queue.run(stop, one_round, interval=0.05))
    await asyncio.wait_for(worker, 5)

    assert len(calls) == 2
    assert "test-queue: delivery round failed" in caplog.text
