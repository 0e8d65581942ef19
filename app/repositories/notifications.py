"""Agents' notification settings, who gets which e-mail, and what a digest tells."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.repositories.accounts import USER_COLUMNS, UserRow, user_of
from app.repositories.sql import (
    change,
    columns,
    moment,
    parameters,
    select,
    select_one,
)
from app.repositories.threads import SELECT_THREADS, ThreadRow, thread_of

# Whether user ``u`` works application ``a``: its creator, or a member of its organization.
WORKS_APPLICATION = (
    "(a.owner_id = u.id OR EXISTS (SELECT 1 FROM memberships m "
    "WHERE m.organization_id = a.organization_id AND m.user_id = u.id))"
)
# Whether user ``u`` administers application ``a``: its creator, or an owner of its organization.
ADMINISTERS_APPLICATION = (
    "(a.owner_id = u.id OR EXISTS (SELECT 1 FROM memberships m "
    "WHERE m.organization_id = a.organization_id AND m.user_id = u.id AND m.role = 'owner'))"
)


async def mode_of(user_id: int, application_id: int) -> str | None:
    """The mode an agent chose for an application; None when they chose none (the default)."""
    row = await select_one(
        "SELECT mode FROM notification_settings WHERE user_id = {} AND application_id = {}",
        [user_id, application_id],
    )
    return None if row is None else str(row["mode"])


async def set_mode(user_id: int, application_id: int, mode: str, now: datetime) -> None:
    """Record an agent's choice for an application (one row per agent and application)."""
    await change(
        "INSERT INTO notification_settings (user_id, application_id, mode, updated_at) "
        "VALUES ({}, {}, {}, {}) ON CONFLICT (user_id, application_id) "
        "DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at",
        [user_id, application_id, mode, moment(now)],
    )


@dataclass(frozen=True, slots=True)
class Recipient:
    """An agent to e-mail about an application."""

    application_id: int
    user: UserRow


async def instant_recipients(application_ids: Sequence[int]) -> list[Recipient]:
    """The agents who want an e-mail for every new thread of these applications (and still
    work them)."""
    if not application_ids:
        return []
    rows = await select(
        f"SELECT n.application_id AS application, {columns('u', USER_COLUMNS)} FROM notification_settings n "
        "JOIN users u ON u.id = n.user_id JOIN applications a ON a.id = n.application_id "
        f"WHERE n.application_id IN ({parameters(len(application_ids))}) AND n.mode = 'instant' "
        f"AND {WORKS_APPLICATION} ORDER BY n.id",
        list(application_ids),
    )
    return [Recipient(int(row["application"]), user_of(row)) for row in rows]


async def digest_recipients(application_id: int) -> list[UserRow]:
    """The agents who get the application's daily digest: those who chose it, and its
    administrators who chose nothing (the digest is their default)."""
    rows = await select(
        f"SELECT {columns('u', USER_COLUMNS)} FROM applications a JOIN users u ON {WORKS_APPLICATION} "
        "LEFT JOIN notification_settings n ON n.user_id = u.id AND n.application_id = a.id "
        f"WHERE a.id = {{}} AND (n.mode = 'digest' OR (n.id IS NULL AND {ADMINISTERS_APPLICATION})) "
        "ORDER BY u.id",
        [application_id],
    )
    return [user_of(row) for row in rows]


async def works_application(user_id: int, application_id: int) -> bool:
    row = await select_one(
        "SELECT 1 AS one FROM applications a JOIN users u ON u.id = {} "
        f"WHERE a.id = {{}} AND {WORKS_APPLICATION}",
        [user_id, application_id],
    )
    return row is not None


async def last_replying_agent(feedback_id: int) -> UserRow | None:
    """The agent who wrote the thread's latest public reply."""
    row = await select_one(
        f"SELECT {columns('u', USER_COLUMNS)} FROM replies r JOIN users u ON u.id = r.user_id "
        "WHERE r.feedback_id = {} AND r.type = 'reply' AND r.from_agent = {} ORDER BY r.id DESC LIMIT 1",
        [feedback_id, True],
    )
    return None if row is None else user_of(row)


async def receipt_applications(application_ids: Sequence[int]) -> dict[int, str]:
    """Of these applications, those that send receipts, with their names."""
    if not application_ids:
        return {}
    rows = await select(
        f"SELECT id, name FROM applications WHERE id IN ({parameters(len(application_ids))}) "
        "AND receipts_enabled = {}",
        [*application_ids, True],
    )
    return {int(row["id"]): str(row["name"]) for row in rows}


async def application_ids() -> list[int]:
    """Every application, for the digests' round."""
    return [int(row["id"]) for row in await select("SELECT id FROM applications ORDER BY id")]


async def sentiment_counts(application_id: int, start: datetime, end: datetime) -> dict[str, int]:
    """How many threads the application got in [start, end), by sentiment."""
    rows = await select(
        "SELECT sentiment, COUNT(*) AS count FROM feedback "
        "WHERE application_id = {} AND created_at >= {} AND created_at < {} GROUP BY sentiment",
        [application_id, moment(start), moment(end)],
    )
    return {str(row["sentiment"]): int(row["count"]) for row in rows}


async def threads_between(
    application_id: int, start: datetime, end: datetime, limit: int, negative: bool
) -> list[ThreadRow]:
    """The application's newest threads of [start, end): the negative ones, or the others."""
    condition = "f.sentiment = 'negative'" if negative else "f.sentiment != 'negative'"
    rows = await select(
        SELECT_THREADS + " WHERE f.application_id = {} AND f.created_at >= {} AND f.created_at < {} "
        f"AND {condition} ORDER BY f.created_at DESC, f.id DESC LIMIT {{}}",
        [application_id, moment(start), moment(end), limit],
    )
    return [thread_of(row) for row in rows]
