"""The outbox of e-mails to send (public replies, notifications, digests, receipts, notices), and
the e-mails received, kept by Message-ID."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    limit_clause,
    moment,
    one_of,
    read_moment,
    read_optional_moment,
    select,
    select_one,
)


@dataclass(slots=True)
class OutboxRow:
    """An e-mail to send, and how its delivery went so far. A ``reply`` is composed from its
    reply at every attempt; the other kinds carry their composed message in ``content``."""

    id: int
    application_id: int | None
    feedback_id: int | None
    reply_id: int | None
    to_address: str
    message_id: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str
    sent_at: datetime | None
    created_at: datetime
    kind: str = "reply"
    content: str = ""
    user_id: int | None = None


OUTBOX_COLUMNS = (
    "id", "application_id", "feedback_id", "reply_id", "to_address", "message_id", "status", "attempts",
    "next_attempt_at", "last_error", "sent_at", "created_at", "kind", "content", "user_id",
)  # fmt: skip


def _outbox_of(row: Row) -> OutboxRow:
    return OutboxRow(
        id=row["o.id"],
        application_id=row["o.application_id"],
        feedback_id=row["o.feedback_id"],
        reply_id=row["o.reply_id"],
        to_address=row["o.to_address"],
        message_id=row["o.message_id"],
        status=row["o.status"],
        attempts=row["o.attempts"],
        next_attempt_at=read_moment(row["o.next_attempt_at"]),
        last_error=row["o.last_error"],
        sent_at=read_optional_moment(row["o.sent_at"]),
        created_at=read_moment(row["o.created_at"]),
        kind=row["o.kind"],
        content=row["o.content"],
        user_id=row["o.user_id"],
    )


async def queue_email(
    application_id: int, feedback_id: int, reply_id: int, to_address: str, message_id: str, now: datetime
) -> None:
    """An e-mail to send from ``now`` on."""
    await change(
        "INSERT INTO outbound_emails (application_id, feedback_id, reply_id, to_address, message_id, status, "
        "attempts, next_attempt_at, last_error, created_at) "
        "VALUES ({}, {}, {}, {}, {}, 'pending', 0, {}, '', {})",
        [application_id, feedback_id, reply_id, to_address, message_id, moment(now), moment(now)],
    )


async def queue_message(
    kind: str,
    application_id: int | None,
    to_address: str,
    message_id: str,
    content: str,
    now: datetime,
    feedback_id: int | None = None,
    user_id: int | None = None,
) -> bool:
    """An e-mail composed already (``content``: the whole message) to send from ``now`` on;
    False when one with this Message-ID key is queued already (a digest another worker wrote)."""
    rows = await change_returning(
        "INSERT INTO outbound_emails (application_id, feedback_id, reply_id, user_id, kind, content, "
        "to_address, message_id, status, attempts, next_attempt_at, last_error, created_at) "
        "VALUES ({}, {}, NULL, {}, {}, {}, {}, {}, 'pending', 0, {}, '', {}) "
        "ON CONFLICT (message_id) DO NOTHING RETURNING id",
        [
            application_id,
            feedback_id,
            user_id,
            kind,
            content,
            to_address,
            message_id,
            moment(now),
            moment(now),
        ],
    )
    return bool(rows)


async def sent_recently(to_address: str, kind: str, since: datetime) -> bool:
    """Whether an e-mail of this kind was queued for the address since ``since``."""
    row = await select_one(
        "SELECT 1 AS one FROM outbound_emails "
        "WHERE to_address = {} AND kind = {} AND created_at >= {} LIMIT 1",
        [to_address, kind, moment(since)],
    )
    return row is not None


async def due(now: datetime, limit: int) -> list[OutboxRow]:
    """The e-mails to try at ``now`` (pending, or being sent by a worker whose lease ran out)."""
    rows = await select(*due_statement(now, limit))
    return [_outbox_of(row) for row in rows]


def due_statement(now: datetime, limit: int) -> tuple[str, list[object]]:
    """The due e-mails' template and values, read in order from the index of the due ones
    (migration 0021). The limit is written in (``limit_clause``) so that PostgreSQL keeps the
    statement's plan instead of planning it again at every wake-up of every worker."""
    return (
        f"SELECT {columns('o', OUTBOX_COLUMNS)} FROM outbound_emails o "
        "WHERE o.status IN ('pending', 'sending') AND o.next_attempt_at <= {} "
        f"ORDER BY o.next_attempt_at, o.id {limit_clause(limit)}",
        [moment(now)],
    )


async def outbox_row(row_id: int) -> OutboxRow | None:
    row = await select_one(
        f"SELECT {columns('o', OUTBOX_COLUMNS)} FROM outbound_emails o WHERE o.id = {{}}", [row_id]
    )
    return None if row is None else _outbox_of(row)


async def move(row_id: int, from_status: str, after_attempts: int, **fields: object) -> bool:
    """Change a row that is still in ``from_status`` after ``after_attempts`` attempts (nobody
    else took it meanwhile); False when it is not. ``fields``: status, attempts, next_attempt_at,
    last_error, sent_at."""
    allowed = {"status", "attempts", "next_attempt_at", "last_error", "sent_at"}
    if set(fields) - allowed:
        raise ValueError(f"not outbox fields: {sorted(set(fields) - allowed)}")
    values = [moment(value) if isinstance(value, datetime) else value for value in fields.values()]
    assignments = ", ".join(f"{name} = {{}}" for name in fields)
    return (
        await change(
            f"UPDATE outbound_emails SET {assignments} WHERE id = {{}} AND status = {{}} AND attempts = {{}}",
            [*values, row_id, from_status, after_attempts],
        )
        > 0
    )


async def statuses_of_replies(reply_ids: Sequence[int]) -> dict[int, str]:
    """The outbox status of each e-mailed reply."""
    if not reply_ids:
        return {}
    of_replies, values = one_of("reply_id", reply_ids)  # one statement text whatever the count
    rows = await select(
        f"SELECT reply_id, status FROM outbound_emails WHERE {of_replies} ORDER BY id", values
    )
    return statuses_of_rows(rows)


def statuses_of_thread_query(feedback_id: int) -> tuple[str, list[object]]:
    """The outbox status of each e-mailed reply of a thread, found by the thread (the thread
    page reads it with the thread: app.repositories.thread_parts); :func:`statuses_of_rows`
    reads its rows. A reply's e-mail carries its thread too (:func:`queue_email`)."""
    return (
        "SELECT o.reply_id, o.status FROM outbound_emails o "
        "WHERE o.feedback_id = {} AND o.reply_id IS NOT NULL ORDER BY o.id",
        [feedback_id],
    )


def statuses_of_rows(rows: Sequence[Row]) -> dict[int, str]:
    """Each reply's outbox status, from rows of reply ids and statuses."""
    return {row["reply_id"]: row["status"] for row in rows}


# Received e-mails ----------------------------------------------------------------------------


async def received(key: str) -> bool:
    """Whether an e-mail with this dedupe key (Message-ID and target) was taken already."""
    return await select_one("SELECT 1 AS one FROM inbound_emails WHERE message_id = {}", [key]) is not None


async def record_received(key: str, feedback_id: int, now: datetime) -> None:
    await change(
        "INSERT INTO inbound_emails (message_id, feedback_id, created_at) VALUES ({}, {}, {})",
        [key, feedback_id, moment(now)],
    )


async def received_keys_of_thread(feedback_id: int, until: datetime) -> list[str]:
    """The dedupe keys of the e-mails of a thread received until ``until``, oldest first."""
    rows = await select(
        "SELECT message_id FROM inbound_emails WHERE feedback_id = {} AND created_at <= {} ORDER BY id",
        [feedback_id, moment(until)],
    )
    return [str(row["message_id"]) for row in rows]
