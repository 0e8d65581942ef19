"""Files uploaded through the capture API (or with e-mail), and the threads and replies that claim them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

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
    read_moment,
    select,
    select_one,
)


@dataclass(slots=True)
class AttachmentRow:
    """An uploaded file (its bytes live under the data dir), free or claimed by a thread or a reply."""

    id: int
    application_id: int
    feedback_id: int | None
    reply_id: int | None
    name: str
    mime_type: str
    size: int
    storage_name: str
    token: str
    created_at: datetime


ATTACHMENT_COLUMNS = (
    "id", "application_id", "feedback_id", "reply_id", "name", "mime_type", "size", "storage_name", "token",
    "created_at",
)  # fmt: skip
SELECT_ATTACHMENTS = f"SELECT {columns('a', ATTACHMENT_COLUMNS)} FROM attachments a"


def attachment_of(row: Row) -> AttachmentRow:
    return AttachmentRow(
        id=row["a.id"],
        application_id=row["a.application_id"],
        feedback_id=row["a.feedback_id"],
        reply_id=row["a.reply_id"],
        name=row["a.name"],
        mime_type=row["a.mime_type"],
        size=row["a.size"],
        storage_name=row["a.storage_name"],
        token=row["a.token"],
        created_at=read_moment(row["a.created_at"]),
    )


async def insert_attachments(attachments: Sequence[AttachmentRow]) -> None:
    """Record uploads (their ids chosen by the caller)."""
    await insert_rows(
        "attachments",
        ATTACHMENT_COLUMNS,
        [
            (a.id, a.application_id, a.feedback_id, a.reply_id, a.name, a.mime_type, a.size, a.storage_name,
             a.token, moment(a.created_at))
            for a in attachments
        ],
    )  # fmt: skip


async def _claim(column: str, owner_id: int, application_id: int, attachment_ids: Sequence[int]) -> int:
    return await change(
        f"UPDATE attachments SET {column} = {{}} WHERE id IN ({parameters(len(attachment_ids))}) "
        "AND application_id = {} AND feedback_id IS NULL AND reply_id IS NULL",
        [owner_id, *attachment_ids, application_id],
    )


async def claim_for_thread(application_id: int, feedback_id: int, attachment_ids: Sequence[int]) -> int:
    """Attach free uploads of the application to a thread; how many were free."""
    return await _claim("feedback_id", feedback_id, application_id, attachment_ids)


async def claim_for_reply(application_id: int, reply_id: int, attachment_ids: Sequence[int]) -> int:
    """Attach free uploads of the application to a reply; how many were free."""
    return await _claim("reply_id", reply_id, application_id, attachment_ids)


async def attachments_of(feedback_ids: Sequence[int], reply_ids: Sequence[int] = ()) -> list[AttachmentRow]:
    """The files of threads and of replies, in upload order."""
    conditions: list[str] = []
    values: list[object] = []
    for column, ids in (("a.feedback_id", feedback_ids), ("a.reply_id", reply_ids)):
        if ids:
            condition, more = one_of(column, ids)
            conditions.append(condition)
            values += more
    if not conditions:
        return []
    rows = await select(
        f"{SELECT_ATTACHMENTS} WHERE {' OR '.join(conditions)} ORDER BY a.created_at, a.id", values
    )
    return [attachment_of(row) for row in rows]


def files_of_threads_and_their_replies_query(feedback_ids: Sequence[int]) -> tuple[str, list[object]]:
    """PostgreSQL only: the files of threads and of their replies, in upload order, the
    replies' ids found by the statement itself (:func:`attachments_of` needs them first). As an
    array, not ``reply_id IN (SELECT ...)``: under the ``OR`` that would be a filter on every
    file, where the array is made once and each side of the ``OR`` reads its own index."""
    of_threads, values = one_of("a.feedback_id", feedback_ids)
    of_their_replies, more = one_of("feedback_id", feedback_ids)
    return (
        f"{SELECT_ATTACHMENTS} WHERE {of_threads} OR a.reply_id = ANY(ARRAY("
        f"SELECT id FROM replies WHERE {of_their_replies})) ORDER BY a.created_at, a.id",
        values + more,
    )


async def attachment_by_id(attachment_id: int) -> AttachmentRow | None:
    row = await select_one(f"{SELECT_ATTACHMENTS} WHERE a.id = {{}}", [attachment_id])
    return None if row is None else attachment_of(row)


async def delete_unclaimed_before(before: datetime, batch: int) -> list[tuple[int, str]]:
    """Delete at most ``batch`` of the uploads no thread or reply claimed, made before ``before``;
    returns the (application id, storage name) of each, to remove its file. A row deleted by two
    workers at once is returned to one of them only."""
    rows = await change_returning(
        "DELETE FROM attachments WHERE id IN (SELECT id FROM attachments WHERE feedback_id IS NULL "
        "AND reply_id IS NULL AND created_at < {} LIMIT {}) RETURNING application_id, storage_name",
        [moment(before), batch],
    )
    return [(int(row["application_id"]), str(row["storage_name"])) for row in rows]


async def bytes_uploaded_on(application_id: int, on_date: date) -> int:
    """Bytes the application took through uploads on a UTC day (0: none)."""
    row = await select_one(
        "SELECT bytes FROM upload_days WHERE application_id = {} AND day = {}", [application_id, day(on_date)]
    )
    return int(row["bytes"]) if row else 0


async def add_uploaded_bytes(application_id: int, on_date: date, added: int) -> int:
    """Count ``added`` bytes toward the application's uploads of a UTC day (inside a
    transaction); the day's total with them.

    One statement both adds and reads, and it holds the day's row until the transaction ends:
    two uploads at once cannot both pass a quota that has room for only one.
    """
    row = await change_returning(
        "INSERT INTO upload_days (application_id, day, bytes) VALUES ({}, {}, {}) "
        "ON CONFLICT (application_id, day) DO UPDATE SET bytes = upload_days.bytes + excluded.bytes "
        "RETURNING bytes",
        [application_id, day(on_date), added],
    )
    return int(row[0]["bytes"])


async def drop_upload_days_before(on_date: date) -> int:
    """Forget the upload counts of the days before ``on_date``; how many were dropped."""
    return await change("DELETE FROM upload_days WHERE day < {}", [day(on_date)])
