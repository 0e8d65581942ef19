"""Statements that delete threads, tags and applications, and read what a deletion must undo.

A thread's replies, tag links, attachments and e-mail rows go with it by the foreign keys'
``ON DELETE CASCADE`` (SQLite runs with ``foreign_keys=ON``), so deleting is one statement; the
reads before it collect the counters to move and the files to remove, which the cascade would
otherwise take away unseen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from app.repositories.applications import SELECT_APPLICATIONS, ApplicationRow, application_of
from app.repositories.replies import reply_day_expression
from app.repositories.sql import Row, change, moment, parameters, postgres, select, select_one


@dataclass(frozen=True, slots=True)
class DoomedThread:
    """What a thread's deletion takes from its application's counters."""

    id: int
    application_id: int
    archived: bool
    first_reply_time: int | None


def _doomed_of(row: Row) -> DoomedThread:
    first = row["first_reply_time"]
    return DoomedThread(int(row["id"]), int(row["application_id"]), bool(row["archived"]), first)


async def lock_threads(application_id: int, feedback_ids: Sequence[int]) -> list[DoomedThread]:
    """The application's threads among ``feedback_ids``, locked until the transaction ends on
    PostgreSQL (an archive, a reply or a tag of one of them waits, so the counts read next are
    the ones the deletion removes). Inside a transaction."""
    if not feedback_ids:
        return []
    lock = " FOR UPDATE" if postgres() else ""
    rows = await select(
        "SELECT id, application_id, archived, first_reply_time FROM feedback "
        f"WHERE application_id = {{}} AND id IN ({parameters(len(feedback_ids))}) ORDER BY id{lock}",
        [application_id, *feedback_ids],
    )
    return [_doomed_of(row) for row in rows]


async def reply_days_of_threads(feedback_ids: Sequence[int]) -> dict[date, int]:
    """How many replies and notes the threads got on each UTC day."""
    if not feedback_ids:
        return {}
    on_day = reply_day_expression()
    rows = await select(
        f"SELECT {on_day} AS day, COUNT(*) AS count FROM replies "
        f"WHERE feedback_id IN ({parameters(len(feedback_ids))}) GROUP BY {on_day}",
        list(feedback_ids),
    )
    return {_read_day(row["day"]): int(row["count"]) for row in rows}


def _read_day(value: object) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


async def tag_links_of_threads(feedback_ids: Sequence[int]) -> list[tuple[int, int]]:
    """(tag id, thread id) of every tag link of the threads."""
    if not feedback_ids:
        return []
    marks = parameters(len(feedback_ids))
    rows = await select(
        f"SELECT tag_id, feedback_id FROM feedback_tags WHERE feedback_id IN ({marks})", list(feedback_ids)
    )
    return [(int(row["tag_id"]), int(row["feedback_id"])) for row in rows]


async def files_of_threads(feedback_ids: Sequence[int]) -> list[tuple[int, str]]:
    """(application id, storage name) of the files of the threads and of their replies."""
    if not feedback_ids:
        return []
    marks = parameters(len(feedback_ids))
    rows = await select(
        f"SELECT application_id, storage_name FROM attachments WHERE feedback_id IN ({marks}) "
        f"UNION ALL SELECT a.application_id, a.storage_name FROM attachments a "
        f"JOIN replies r ON r.id = a.reply_id WHERE r.feedback_id IN ({marks}) AND a.feedback_id IS NULL",
        [*feedback_ids, *feedback_ids],
    )
    return [(int(row["application_id"]), str(row["storage_name"])) for row in rows]


async def delete_threads(feedback_ids: Sequence[int]) -> int:
    """Delete threads with everything that hangs off them; how many were deleted."""
    if not feedback_ids:
        return 0
    marks = parameters(len(feedback_ids))
    return await change(f"DELETE FROM feedback WHERE id IN ({marks})", list(feedback_ids))


async def oldest_thread_ids(
    application_id: int, before: datetime, archived_only: bool, limit: int
) -> list[int]:
    """Up to ``limit`` ids of the application's threads created before ``before`` (only archived
    ones when ``archived_only``), oldest first: what a retention batch deletes."""
    archived = " AND archived = {}" if archived_only else ""
    values: list[object] = [application_id, moment(before)] + ([True] if archived_only else []) + [limit]
    rows = await select(
        "SELECT id FROM feedback WHERE application_id = {} AND created_at < {}"
        f"{archived} ORDER BY created_at, id LIMIT {{}}",
        values,
    )
    return [int(row["id"]) for row in rows]


async def thread_ids_of_application(application_id: int, limit: int) -> list[int]:
    """Up to ``limit`` ids of an application's threads, newest first (what deleting the
    application removes batch by batch)."""
    rows = await select(
        "SELECT id FROM feedback WHERE application_id = {} ORDER BY id DESC LIMIT {}", [application_id, limit]
    )
    return [int(row["id"]) for row in rows]


async def delete_tag(application_id: int, tag_id: int) -> bool:
    """Delete an application's tag and its links to threads (the counts go with the tag)."""
    deleted = await change("DELETE FROM tags WHERE id = {} AND application_id = {}", [tag_id, application_id])
    return deleted > 0


async def delete_application(application_id: int) -> bool:
    """Delete an application and whatever is left under it (senders, tags, uploads never
    attached, form opens, reply days, its blocklist): the threads go first, in batches."""
    return await change("DELETE FROM applications WHERE id = {}", [application_id]) > 0


def count_before_statement(
    application_id: int, before: datetime, archived_only: bool
) -> tuple[str, list[object]]:
    """The statement of :func:`count_threads_before`, with its values."""
    archived = " AND archived = {}" if archived_only else ""
    return (
        f"SELECT COUNT(*) AS count FROM feedback WHERE application_id = {{}} AND created_at < {{}}{archived}",
        [application_id, moment(before)] + ([True] if archived_only else []),
    )


async def count_threads_before(application_id: int, before: datetime, archived_only: bool) -> int:
    """How many of the application's threads were created before ``before`` (only archived ones
    when ``archived_only``): what a retention run deletes. One range of the (application_id,
    created_at) index."""
    row = await select_one(*count_before_statement(application_id, before, archived_only))
    return int(row["count"]) if row else 0


async def applications_with_retention() -> list[ApplicationRow]:
    """Every application whose threads are deleted after some days, oldest first."""
    rows = await select(f"{SELECT_APPLICATIONS} WHERE a.retention_days IS NOT NULL ORDER BY a.id")
    return [application_of(row) for row in rows]
