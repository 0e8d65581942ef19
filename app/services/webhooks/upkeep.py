"""Keeping the webhook log bounded: events, deliveries and their attempts are kept KEEP_LOG
(enough to look into a failure and resend), then deleted in batches by housekeeping."""

from __future__ import annotations

from datetime import datetime, timedelta

from app.db import transactional
from app.repositories import webhooks

KEEP_LOG = timedelta(days=30)
BATCH = 500


async def forget_old_deliveries(now: datetime) -> int:
    """Delete the events older than KEEP_LOG that nothing waits for, with their deliveries and
    attempts, BATCH per transaction; how many events went."""
    total = 0
    while ids := await webhooks.old_event_ids(now - KEEP_LOG, BATCH):
        await transactional(webhooks.delete_events)(ids)
        total += len(ids)  # (SQLite's count of a delete includes its cascades)
        if len(ids) < BATCH:
            break
    return total
