"""The replies list: a page of an application's replies and notes (of a day, a type, a thread),
newest first, with the files of its replies and how many match in all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from app.repositories import attachments
from app.repositories.accounts import AGENT_COLUMNS
from app.repositories.attachments import AttachmentRow, attachment_of
from app.repositories.replies import REPLY_COLUMNS, ReplyRow, ReplyThread, reply_of
from app.repositories.sql import (
    Row,
    columns,
    day,
    limit_clause,
    moment_literal,
    postgres,
    read_moment,
    select,
    select_together,
)
from app.repositories.threads import message_start


def day_bounds(on_date: date) -> tuple[datetime, datetime]:
    """A UTC day's bounds: from its midnight to the next (the last day a date can name ends at
    the last moment a datetime can hold: the next midnight does not exist)."""
    start = datetime.combine(on_date, time.min, tzinfo=UTC)
    if on_date == date.max:
        return start, datetime.max.replace(tzinfo=UTC)
    return start, start + timedelta(days=1)


@dataclass(frozen=True)
class ReplyFilter:
    """Which replies of an application a list shows: of one UTC day, of one type, of one thread
    (each None for all)."""

    on_date: date | None = None
    kind: str | None = None
    feedback_id: int | None = None

    def conditions(self) -> tuple[str, list[object]]:
        """The ``AND ...`` conditions on ``r`` and their parameters."""
        text = ""
        values: list[object] = []
        if self.on_date is not None:
            start, end = day_bounds(self.on_date)
            text += f" AND r.created_at >= {moment_literal(start)} AND r.created_at < {moment_literal(end)}"
        if self.kind is not None:
            text += " AND r.type = {}"
            values.append(self.kind)
        if self.feedback_id is not None:
            text += " AND r.feedback_id = {}"
            values.append(self.feedback_id)
        return text, values


def _reply_thread_columns(message_chars: int | None) -> str:
    return (
        f'f.id AS "f.id", {message_start(message_chars)} AS "f.message", f.sentiment AS "f.sentiment", '
        'f.archived AS "f.archived", f.created_at AS "f.created_at", f.updated_at AS "f.updated_at", '
        'm.email AS "m.email", m.name AS "m.name"'
    )


def reply_thread_of(row: Row) -> ReplyThread:
    """The thread of a row of :func:`page_statement`."""
    return ReplyThread(
        row["f.id"],
        row["f.message"],
        row["f.sentiment"],
        bool(row["f.archived"]),
        read_moment(row["f.created_at"]),
        read_moment(row["f.updated_at"]),
        row["m.email"],
        row["m.name"],
    )


_NEWEST_FIRST = " ORDER BY r.created_at DESC, r.id DESC "


def page_statement(
    application_id: int, chosen: ReplyFilter, limit: int, offset: int, message_chars: int | None = None
) -> tuple[str, list[object]]:
    """The statement of a page of an application's replies, newest first, each with its agent
    and its thread as a reply shows it, each thread's message cut to its first
    ``message_chars`` characters (its plan is tested against the indexes)."""
    conditions, values = chosen.conditions()
    template = (
        f"SELECT {columns('r', REPLY_COLUMNS)}, {_reply_thread_columns(message_chars)}, "
        f"{columns('u', AGENT_COLUMNS)} FROM replies r "
        "JOIN feedback f ON f.id = r.feedback_id JOIN members m ON m.id = f.member_id "
        "LEFT JOIN users u ON u.id = r.user_id WHERE r.application_id = {}"
        + conditions
        + _NEWEST_FIRST
        + limit_clause(limit, offset)
    )
    return template, [application_id, *values]


def _replies_of_page(rows: Sequence[Row]) -> list[ReplyRow]:
    found = []
    for row in rows:
        reply = reply_of(row)
        reply.feedback = reply_thread_of(row)
        found.append(reply)
    return found


def files_of_page_query(
    application_id: int, chosen: ReplyFilter, limit: int, offset: int
) -> tuple[str, list[object]]:
    """PostgreSQL only: the files of the replies of a page of :func:`page_statement`, in upload
    order, the page's reply ids found by the statement itself (an array, as
    :func:`app.repositories.attachments.files_of_threads_and_their_replies_query` finds its)."""
    conditions, values = chosen.conditions()
    ids = "SELECT r.id FROM replies r WHERE r.application_id = {}" + conditions + _NEWEST_FIRST
    return (
        f"{attachments.SELECT_ATTACHMENTS} WHERE a.reply_id = ANY(ARRAY({ids}{limit_clause(limit, offset)})) "
        "ORDER BY a.created_at, a.id",
        [application_id, *values],
    )


def count_matching_query(application_id: int, chosen: ReplyFilter) -> tuple[str, list[object]]:
    """How many of an application's replies and notes match (``total``): off the
    (application_id, type, created_at, id) index with a type, the (feedback_id, id) index with a
    thread."""
    conditions, values = chosen.conditions()
    return "SELECT COUNT(*) AS total FROM replies r WHERE r.application_id = {}" + conditions, [
        application_id,
        *values,
    ]


def replies_on_query(application_id: int, on_date: date) -> tuple[str, list[object]]:
    """How many replies and notes an application got on a UTC day (``total``; kept on write,
    no row for a day without any)."""
    return "SELECT count AS total FROM reply_days WHERE application_id = {} AND day = {}", [
        application_id,
        day(on_date),
    ]


@dataclass(slots=True)
class ReplyListing:
    """A page of replies (as :func:`page_statement` reads them), the files of its replies, and the
    total the listing was asked to count (None when it was not)."""

    replies: list[ReplyRow]
    attachments: list[AttachmentRow]
    total: int | None


async def listing(
    application_id: int,
    chosen: ReplyFilter,
    limit: int,
    offset: int,
    message_chars: int | None,
    counted: tuple[str, list[object]] | None,
) -> ReplyListing:
    """A page of replies with their files and the total of ``counted`` (a query of one row
    with a ``total``, or none: 0; or None not to count). One statement on PostgreSQL
    (:func:`app.repositories.sql.select_together`), where the page, its files and its count
    were a round trip each; in turn on SQLite, the files once the page's ids are known."""
    if postgres():
        queries = listing_queries(application_id, chosen, limit, offset, message_chars, counted)
        rows = await select_together(queries)
        found, files = _replies_of_page(rows[0]), [attachment_of(row) for row in rows[1]]
        return ReplyListing(found, files, None if counted is None else _total(rows[2]))
    statement = page_statement(application_id, chosen, limit, offset, message_chars)
    found = _replies_of_page(await select(*statement))
    files = await attachments.attachments_of((), [reply.id for reply in found]) if found else []
    return ReplyListing(found, files, None if counted is None else _total(await select(*counted)))


def listing_queries(
    application_id: int,
    chosen: ReplyFilter,
    limit: int,
    offset: int,
    message_chars: int | None,
    counted: tuple[str, list[object]] | None,
) -> list[tuple[str, list[object]]]:
    """The queries :func:`listing` reads together on PostgreSQL: the page, its files, the count."""
    queries = [
        page_statement(application_id, chosen, limit, offset, message_chars),
        files_of_page_query(application_id, chosen, limit, offset),
    ]
    return queries if counted is None else [*queries, counted]


def _total(rows: Sequence[Row]) -> int:
    return int(rows[0]["total"]) if rows else 0
