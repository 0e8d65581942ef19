"""A stopping delivery worker hands back the deliveries it holds instead of leaving them to the
lease, and a stopping worker starts no new batch."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

from app.models import WebhookDelivery
from app.services.webhooks.delivery import deliver_due, run_worker
from tests.factories import make_thread, make_webhook


async def test_a_worker_stopped_mid_attempt_hands_its_delivery_back_due_at_once(
    agent, application, hook_settings, receiver, sender_for_release
):
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    receiver.hang = True
    stop = asyncio.Event()
    worker = asyncio.create_task(run_worker(hook_settings, stop, interval=0.05))
    async with asyncio.timeout(10):
        await receiver.wait_for(1)
    [claimed] = await WebhookDelivery.all()
    assert (claimed.status, claimed.attempts) == ("sending", 1)

    stop.set()
    worker.cancel()  # what app.workers does to a worker that does not stop in time
    with contextlib.suppress(asyncio.CancelledError):
        await worker

    [handed_back] = await WebhookDelivery.all()
    assert handed_back.status == "pending"
    assert handed_back.next_attempt_at <= datetime.now(UTC)
    receiver.hang = False
    assert await deliver_due(hook_settings, sender_for_release) == 1
    assert (await WebhookDelivery.get(id=claimed.id)).status == "delivered"
