"""What operators watch: the database answers, which migrations it has, and the durable queues'
depth (the outbox of e-mails, the webhook deliveries)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from app.repositories.sql import read_optional_moment, select, select_one

Queue = Literal["outbound_emails", "webhook_deliveries"]
# Tortoise's native migrations record each applied one here, under the app label of the models.
MIGRATIONS_TABLE = "tortoise_migrations"
MODELS_APP = "models"


@dataclass(frozen=True, slots=True)
class QueueCount:
    """The rows of a queue in one state (``pending`` or ``sending``) and when the oldest was queued."""

    status: str
    count: int
    oldest: datetime | None


async def ping() -> None:
    """One round trip to the database; raises when it does not answer."""
    await select_one("SELECT 1 AS one")


async def applied_migrations() -> set[str]:
    """The names of the migrations applied to the database."""
    rows = await select(f'SELECT "name" FROM "{MIGRATIONS_TABLE}" WHERE "app" = {{}}', [MODELS_APP])
    return {str(row["name"]) for row in rows}


async def waiting(queue: Queue) -> list[QueueCount]:
    """The rows waiting in a queue, by state (pending: to send, sending: claimed by a worker),
    read off the (status, next_attempt_at) index; a state without rows is left out."""
    rows = await select(
        f"SELECT status, COUNT(*) AS waiting, MIN(created_at) AS oldest FROM {queue} "
        "WHERE status IN ('pending', 'sending') GROUP BY status"
    )
    return [
        QueueCount(str(row["status"]), int(row["waiting"]), read_optional_moment(row["oldest"]))
        for row in rows
    ]
