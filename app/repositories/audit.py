"""Statements of the audit trail: who did what to how many rows, and never whose data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from app.repositories.people import ADMINISTERED
from app.repositories.sql import change_returning, moment, read_json, read_moment, select, write_json


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


@dataclass(frozen=True, slots=True)
class AuditRow:
    """An audit entry, with the names its actor and application have now (None when gone)."""

    id: int
    actor_id: int | None
    application_id: int | None
    action: str
    counts: dict[str, int]
    created_at: datetime
    actor_name: str | None = None
    application_name: str | None = None


async def recent_entries(user_id: int, owner_role: str, limit: int) -> list[AuditRow]:
    """The newest entries of the user's own actions and of the applications they administer
    (:data:`app.repositories.people.ADMINISTERED`), newest first."""
    rows = await select(
        "SELECT e.id, e.actor_id, e.application_id, e.action, e.counts, e.created_at, "
        "u.name AS actor_name, ap.name AS application_name FROM audit_entries e "
        "LEFT JOIN users u ON u.id = e.actor_id LEFT JOIN applications ap ON ap.id = e.application_id "
        "WHERE e.actor_id = {} OR e.application_id IN "
        f"(SELECT a.id FROM applications a WHERE {ADMINISTERED}) "
        "ORDER BY e.created_at DESC, e.id DESC LIMIT {}",
        [user_id, user_id, user_id, owner_role, limit],
    )
    return [
        AuditRow(
            int(row["id"]),
            row["actor_id"],
            row["application_id"],
            str(row["action"]),
            dict(read_json(row["counts"]) or {}),
            read_moment(row["created_at"]),
            row["actor_name"],
            row["application_name"],
        )
        for row in rows
    ]
