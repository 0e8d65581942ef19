"""The webhook log is kept thirty days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.models import WebhookAttempt, WebhookDelivery, WebhookEvent
from app.services.webhooks.delivery import Sender, deliver_due
from app.services.webhooks.upkeep import KEEP_LOG, forget_old_deliveries
from tests.factories import make_thread, make_webhook


async def test_events_older_than_the_keep_go_with_their_deliveries_and_attempts(
    agent, application, hook_settings, receiver
):
    await make_webhook(agent, application, receiver.url, hook_settings)
    await make_thread(application)
    sender = Sender(allow_private=True)
    try:
        await deliver_due(hook_settings, sender)
    finally:
        await sender.close()

    assert await forget_old_deliveries(datetime.now(UTC) + KEEP_LOG - timedelta(minutes=1)) == 0
    assert await forget_old_deliveries(datetime.now(UTC) + KEEP_LOG + timedelta(minutes=1)) == 1

    assert (await WebhookEvent.all().count(), await WebhookDelivery.all().count()) == (0, 0)
    assert await WebhookAttempt.all().count() == 0


async def test_an_event_still_waiting_to_be_delivered_is_kept(agent, application, hook_settings):
    await make_webhook(agent, application, "http://127.0.0.1:9/hooks", hook_settings)
    await make_thread(application)

    assert await forget_old_deliveries(datetime.now(UTC) + KEEP_LOG * 2) == 0
    assert await WebhookDelivery.all().count() == 1
