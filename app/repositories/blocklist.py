"""The blocklist of each application: e-mail addresses, domains and IP networks (blocked_senders)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.repositories.sql import Row, change, change_returning, moment, read_moment, select, select_one


@dataclass(slots=True)
class BlockedRow:
    """One entry of an application's blocklist."""

    id: int
    application_id: int
    kind: str
    value: str
    created_at: datetime


COLUMNS = "id, application_id, kind, value, created_at"


def _blocked(row: Row) -> BlockedRow:
    return BlockedRow(
        id=int(row["id"]),
        application_id=int(row["application_id"]),
        kind=row["kind"],
        value=row["value"],
        created_at=read_moment(row["created_at"]),
    )


async def entries_of(application_id: int) -> list[BlockedRow]:
    """Every entry of the application's blocklist, newest first."""
    rows = await select(
        f"SELECT {COLUMNS} FROM blocked_senders WHERE application_id = {{}} "
        "ORDER BY created_at DESC, id DESC",
        [application_id],
    )
    return [_blocked(row) for row in rows]


async def kinds_and_values(application_id: int) -> list[tuple[str, str]]:
    """The (kind, value) of every entry: what the capture API and the mail intake match against."""
    rows = await select("SELECT kind, value FROM blocked_senders WHERE application_id = {}", [application_id])
    return [(row["kind"], row["value"]) for row in rows]


async def entry(application_id: int, entry_id: int) -> BlockedRow | None:
    row = await select_one(
        f"SELECT {COLUMNS} FROM blocked_senders WHERE application_id = {{}} AND id = {{}}",
        [application_id, entry_id],
    )
    return None if row is None else _blocked(row)


async def entry_for(application_id: int, kind: str, value: str) -> BlockedRow | None:
    row = await select_one(
        f"SELECT {COLUMNS} FROM blocked_senders WHERE application_id = {{}} AND kind = {{}} AND value = {{}}",
        [application_id, kind, value],
    )
    return None if row is None else _blocked(row)


async def count_up_to(application_id: int, most: int) -> int:
    """How many entries the application has, counting no further than ``most``."""
    row = await select_one(
        "SELECT COUNT(*) AS total FROM (SELECT 1 FROM blocked_senders WHERE application_id = {} LIMIT {}) c",
        [application_id, most],
    )
    return int(row["total"]) if row else 0


async def insert_entry(application_id: int, kind: str, value: str, now: datetime) -> BlockedRow | None:
    """Add an entry; None when the application has it already (then nothing is written)."""
    rows = await change_returning(
        "INSERT INTO blocked_senders (application_id, kind, value, created_at) VALUES ({}, {}, {}, {}) "
        f"ON CONFLICT (application_id, kind, value) DO NOTHING RETURNING {COLUMNS}",
        [application_id, kind, value, moment(now)],
    )
    return _blocked(rows[0]) if rows else None


async def delete_entry(application_id: int, entry_id: int) -> bool:
    """Remove one entry of the application; False when it has no such entry."""
    return (
        await change(
            "DELETE FROM blocked_senders WHERE application_id = {} AND id = {}", [application_id, entry_id]
        )
        > 0
    )
