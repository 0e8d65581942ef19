"""Replies and internal notes, and the count of replies per application and UTC day."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from app.repositories.accounts import AGENT_COLUMNS, AgentRow, UserRow, agent_of_user, optional_agent_of
from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    day,
    insert_rows,
    moment,
    one_of,
    parameters,
    postgres,
    read_moment,
    select,
    select_one,
)
from app.repositories.threads import ThreadRow


@dataclass(slots=True)
class ReplyThread:
    """A reply's thread as the replies list shows it beside the reply: the thread's own values
    that the list's summary holds, and its sender's address and name (``email``, ``name``, as
    a thread's JSON names them).

    The list read whole ThreadRows with their senders (24 columns a reply) for these eight;
    their decoding and building were most of the page's own work on PostgreSQL."""

    id: int
    message: str
    """The message, or its first ``message_chars`` characters when read so (:func:`page`)."""
    sentiment: str
    archived: bool
    created_at: datetime
    updated_at: datetime
    email: str
    name: str


def reply_thread_of_thread(thread: ThreadRow) -> ReplyThread:
    """A thread read whole (with its sender), as a reply shows it."""
    return ReplyThread(
        thread.id,
        thread.message,
        thread.sentiment,
        thread.archived,
        thread.created_at,
        thread.updated_at,
        thread.sender.email,
        thread.sender.name,
    )


@dataclass(slots=True)
class ReplyRow:
    """A public reply or an internal note, from an agent (``user``) or from the customer."""

    id: int
    application_id: int
    feedback_id: int
    user_id: int | None
    type: str
    message: str
    from_agent: bool
    email: str
    created_at: datetime
    user: AgentRow | None = None
    feedback: ReplyThread | None = None

    @property
    def thread(self) -> ReplyThread:
        """The reply's thread, read with it (the replies list joins it)."""
        if self.feedback is None:
            raise LookupError(f"reply {self.id} was read without its thread")
        return self.feedback


REPLY_COLUMNS = (
    "id",
    "application_id",
    "feedback_id",
    "user_id",
    "type",
    "message",
    "from_agent",
    "email",
    "created_at",
)


def reply_of(row: Row) -> ReplyRow:
    """A reply, and its agent when the row has one (``u``)."""
    return ReplyRow(
        id=row["r.id"],
        application_id=row["r.application_id"],
        feedback_id=row["r.feedback_id"],
        user_id=row["r.user_id"],
        type=row["r.type"],
        message=row["r.message"],
        from_agent=bool(row["r.from_agent"]),
        email=row["r.email"],
        created_at=read_moment(row["r.created_at"]),
        user=optional_agent_of(row) if "u.id" in row else None,
    )


async def insert_reply(
    application_id: int,
    feedback_id: int,
    user: UserRow | None,
    kind: str,
    message: str,
    email: str,
    now: datetime,
) -> ReplyRow:
    """A new reply or note; from the customer when ``user`` is None."""
    rows = await change_returning(
        "INSERT INTO replies (application_id, feedback_id, user_id, type, message, from_agent, email, "
        "created_at) VALUES ({}, {}, {}, {}, {}, {}, {}, {}) RETURNING id",
        [
            application_id,
            feedback_id,
            user.id if user else None,
            kind,
            message,
            user is not None,
            email,
            moment(now),
        ],
    )
    return ReplyRow(
        rows[0]["id"], application_id, feedback_id, user.id if user else None, kind, message,
        user is not None, email, now, agent_of_user(user) if user else None,
    )  # fmt: skip


async def insert_replies(replies: Sequence[ReplyRow]) -> None:
    """Write replies whose ids are given (bulk loads)."""
    await insert_rows(
        "replies",
        REPLY_COLUMNS,
        [
            (r.id, r.application_id, r.feedback_id, r.user_id, r.type, r.message, r.from_agent, r.email,
             moment(r.created_at))
            for r in replies
        ],
    )  # fmt: skip


def replies_of_threads_query(feedback_ids: Sequence[int]) -> tuple[str, list[object]]:
    """The statement of :func:`replies_of_threads` (app.repositories.thread_parts reads it with
    others in one round trip); :func:`reply_of` reads its rows."""
    of_threads, values = one_of("r.feedback_id", feedback_ids)
    return (
        f"SELECT {columns('r', REPLY_COLUMNS)}, {columns('u', AGENT_COLUMNS)} FROM replies r "
        f"LEFT JOIN users u ON u.id = r.user_id WHERE {of_threads} ORDER BY r.id",
        values,
    )


async def replies_of_threads(feedback_ids: Sequence[int]) -> list[ReplyRow]:
    """The replies of threads with their agents, oldest first."""
    if not feedback_ids:
        return []
    return [reply_of(row) for row in await select(*replies_of_threads_query(feedback_ids))]


async def reply_counts(feedback_ids: Sequence[int]) -> dict[int, int]:
    """How many replies and notes each of these threads has (threads without any are left
    out), off the (feedback_id, id) index."""
    if not feedback_ids:
        return {}
    rows = await select(
        f"SELECT feedback_id, COUNT(*) AS replies FROM replies WHERE feedback_id IN "
        f"({parameters(len(feedback_ids))}) GROUP BY feedback_id",
        list(feedback_ids),
    )
    return {int(row["feedback_id"]): int(row["replies"]) for row in rows}


async def reply_by_id(reply_id: int) -> ReplyRow | None:
    """One reply with its agent."""
    row = await select_one(
        f"SELECT {columns('r', REPLY_COLUMNS)}, {columns('u', AGENT_COLUMNS)} FROM replies r "
        "LEFT JOIN users u ON u.id = r.user_id WHERE r.id = {}",
        [reply_id],
    )
    return None if row is None else reply_of(row)


# Replies per UTC day -------------------------------------------------------------------------

# The UTC day of a reply's created_at, in SQL (SQLite keeps date-times as ISO text in UTC).
_REPLY_DAY = {False: "substr(created_at, 1, 10)", True: "(created_at AT TIME ZONE 'UTC')::date"}


def reply_day_expression() -> str:
    """The SQL of a reply's UTC day (``created_at`` of the ``replies`` table)."""
    return _REPLY_DAY[postgres()]


async def drop_empty_reply_days(application_id: int) -> None:
    """Forget the days whose replies were all deleted, as if they never had any."""
    await change("DELETE FROM reply_days WHERE application_id = {} AND count <= 0", [application_id])


async def add_to_reply_days(application_id: int, counts: Mapping[date, int]) -> None:
    """Count replies on their UTC days."""
    for moment_day, count in sorted(counts.items()):
        await change(
            "INSERT INTO reply_days (application_id, day, count) VALUES ({}, {}, {}) "
            "ON CONFLICT (application_id, day) DO UPDATE SET count = reply_days.count + excluded.count",
            [application_id, day(moment_day), count],
        )


async def recount_reply_days(application_id: int) -> None:
    """Count an application's replies per UTC day again, from the replies themselves."""
    on_day = _REPLY_DAY[postgres()]
    await change("DELETE FROM reply_days WHERE application_id = {}", [application_id])
    await change(
        f"INSERT INTO reply_days (application_id, day, count) SELECT application_id, {on_day}, COUNT(*) "
        f"FROM replies WHERE application_id = {{}} GROUP BY application_id, {on_day}",
        [application_id],
    )
