"""Statements of the audit trail: who did what to how many rows, and never whose data."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from app.repositories.sql import change_returning, moment, write_json


async def insert_entry(
    actor_id: int | None, application_id: int | None, action: str, counts: Mapping[str, int], now: datetime
) -> int:
    """Record one audit entry (``actor_id`` None: Earful itself, e.g. a retention run); its id.
    Inside a transaction."""
    rows = await change_returning(
        "INSERT INTO audit_entries (actor_id, application_id, action, counts, created_at) "
        "VALUES ({}, {}, {}, {}, {}) RETURNING id",
        [actor_id, application_id, action, write_json(dict(counts)), moment(now)],
    )
    return int(rows[0]["id"])
