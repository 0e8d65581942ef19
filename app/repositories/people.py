"""Statements of privacy requests: what the applications hold about one person (a sender of
feedback, known by an e-mail address), to export it or erase it.

E-mail addresses are matched without regard to case (``LOWER(column) = {}``, the address given
already lower-cased): a sender's address is stored as it was normalized on submit, the
customer's e-mailed answers and the outbox's recipients as the mail carried them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from app.repositories.applications import SELECT_APPLICATIONS, ApplicationRow, application_of
from app.repositories.replies import reply_day_expression
from app.repositories.sql import (
    Row,
    change,
    columns,
    parameters,
    postgres,
    read_moment,
    read_optional_moment,
    select,
)
from app.repositories.threads import (
    SELECT_THREADS,
    SENDER_COLUMNS,
    SenderRow,
    ThreadRow,
    sender_of,
    thread_of,
)

# The applications a user administers (``a``): those they created and those of an organization
# they own (the rule of app.services.deletion.check_administrator).
ADMINISTERED = (
    "(a.owner_id = {} OR a.organization_id IN "
    "(SELECT m.organization_id FROM memberships m WHERE m.user_id = {} AND m.role = {}))"
)


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """An e-mail addressed to the person, as an export shows it."""

    id: int
    feedback_id: int
    status: str
    created_at: datetime
    sent_at: datetime | None


async def administered_applications(user_id: int, owner_role: str) -> list[ApplicationRow]:
    """The applications the user administers, oldest first."""
    rows = await select(
        f"{SELECT_APPLICATIONS} WHERE {ADMINISTERED} ORDER BY a.id", [user_id, user_id, owner_role]
    )
    return [application_of(row) for row in rows]


async def senders_of_person(application_id: int, email: str, lock: bool = False) -> list[SenderRow]:
    """The application's sender rows with this address (one, unless case told two apart);
    ``lock``: locked until the transaction ends on PostgreSQL (a submit waits)."""
    locking = " FOR UPDATE" if lock and postgres() else ""
    rows = await select(
        f"SELECT {columns('m', SENDER_COLUMNS)} FROM members m "
        f"WHERE m.application_id = {{}} AND LOWER(m.email) = {{}} ORDER BY m.id{locking}",
        [application_id, email],
    )
    return [sender_of(row) for row in rows]


async def thread_ids_of_senders(member_ids: Sequence[int], limit: int) -> list[int]:
    """Up to ``limit`` ids of the threads of these senders."""
    if not member_ids:
        return []
    rows = await select(
        f"SELECT id FROM feedback WHERE member_id IN ({parameters(len(member_ids))}) ORDER BY id LIMIT {{}}",
        [*member_ids, limit],
    )
    return [int(row["id"]) for row in rows]


async def threads_of_senders(member_ids: Sequence[int], after: int, limit: int) -> list[ThreadRow]:
    """Up to ``limit`` threads of these senders with an id above ``after``, oldest first."""
    if not member_ids:
        return []
    rows = await select(
        f"{SELECT_THREADS} WHERE f.member_id IN ({parameters(len(member_ids))}) AND f.id > {{}} "
        "ORDER BY f.id LIMIT {}",
        [*member_ids, after, limit],
    )
    return [thread_of(row) for row in rows]


_ANSWERS = (
    "FROM replies r JOIN feedback f ON f.id = r.feedback_id JOIN members m ON m.id = f.member_id "
    "WHERE r.application_id = {} AND r.from_agent = {} AND LOWER(r.email) = {} AND LOWER(m.email) <> {}"
)


@dataclass(frozen=True, slots=True)
class Answer:
    """The person's e-mailed answer on someone else's thread."""

    id: int
    feedback_id: int
    message: str
    created_at: datetime


async def answers_of_person(application_id: int, email: str) -> list[Answer]:
    """The person's e-mailed answers on other people's threads of the application, oldest first."""
    rows = await select(
        f"SELECT r.id, r.feedback_id, r.message, r.created_at {_ANSWERS} ORDER BY r.id",
        [application_id, False, email, email],
    )
    return [
        Answer(int(row["id"]), int(row["feedback_id"]), str(row["message"]), read_moment(row["created_at"]))
        for row in rows
    ]


async def reply_days_of_replies(reply_ids: Sequence[int]) -> dict[date, int]:
    """How many of these replies were written on each UTC day."""
    if not reply_ids:
        return {}
    on_day = reply_day_expression()
    rows = await select(
        f"SELECT {on_day} AS day, COUNT(*) AS count FROM replies "
        f"WHERE id IN ({parameters(len(reply_ids))}) GROUP BY {on_day}",
        list(reply_ids),
    )
    return {_read_day(row["day"]): int(row["count"]) for row in rows}


def _read_day(value: object) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


async def files_of_replies(reply_ids: Sequence[int]) -> list[tuple[int, str]]:
    """(application id, storage name) of the files of these replies."""
    if not reply_ids:
        return []
    rows = await select(
        "SELECT application_id, storage_name FROM attachments "
        f"WHERE reply_id IN ({parameters(len(reply_ids))})",
        list(reply_ids),
    )
    return [(int(row["application_id"]), str(row["storage_name"])) for row in rows]


async def delete_replies(reply_ids: Sequence[int]) -> int:
    """Delete replies (their files' rows go with them); how many."""
    if not reply_ids:
        return 0
    return await change(f"DELETE FROM replies WHERE id IN ({parameters(len(reply_ids))})", list(reply_ids))


async def outbox_of_person(application_id: int, email: str) -> list[OutboxEntry]:
    """The application's outbox rows addressed to the person, oldest first."""
    rows = await select(
        "SELECT id, feedback_id, status, created_at, sent_at FROM outbound_emails "
        "WHERE application_id = {} AND LOWER(to_address) = {} ORDER BY id",
        [application_id, email],
    )
    return [_entry_of(row) for row in rows]


def _entry_of(row: Row) -> OutboxEntry:
    return OutboxEntry(
        int(row["id"]),
        int(row["feedback_id"]),
        str(row["status"]),
        read_moment(row["created_at"]),
        read_optional_moment(row["sent_at"]),
    )


async def delete_outbox_of_person(application_id: int, email: str) -> int:
    """Delete the application's outbox rows addressed to the person; how many."""
    return await change(
        "DELETE FROM outbound_emails WHERE application_id = {} AND LOWER(to_address) = {}",
        [application_id, email],
    )


async def delete_senders(member_ids: Sequence[int]) -> int:
    """Delete sender rows whose threads are gone already; how many."""
    if not member_ids:
        return 0
    return await change(f"DELETE FROM members WHERE id IN ({parameters(len(member_ids))})", list(member_ids))
