"""Retention: an application's threads older than some days are deleted automatically.

An application keeps its threads forever until an administrator sets ``retention_days``; then
every run (the background worker's, or ``earful retention run``) deletes the threads created
more than that many days ago, or only the archived ones among them when
``retention_archived_only`` is set.

A run deletes BATCH threads per transaction through :func:`app.services.deletion.remove_threads`,
which moves every counter in that transaction, and pauses between batches, so that the inbox's
requests and the writers' queue are never held up behind it. Every worker process runs it:
two runs that race pick the same oldest ids, and ``remove_threads`` locks them and skips those
already gone, so each thread is deleted, and counted, once. Each run that deleted something
writes one audit entry per application: how many threads, never whose.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta

from app.db import transactional
from app.errors import ValidationError
from app.repositories import audit
from app.repositories import deletion as statements
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.services import deletion
from app.services.deletion import Deleted
from app.services.storage import Storage
from app.services.validation import parse_bool, parse_int

logger = logging.getLogger("earful.retention")

MAX_DAYS = 3650
PAUSE = 0.05  # seconds between two batches of one run
ACTION = "retention.run"
FIELDS = ("retention_days", "retention_archived_only")


def clean_retention_fields(data: Mapping[str, object]) -> dict[str, object]:
    """The retention settings among ``data``, validated, under their column names; only those
    sent. Days that are null or empty switch retention off."""
    fields: dict[str, object] = {}
    if "retention_days" in data:
        fields["retention_days"] = _days(data["retention_days"])
    if "retention_archived_only" in data:
        archived_only = parse_bool(data["retention_archived_only"])
        if archived_only is None:
            raise ValidationError("The retention archived only field must be true or false.")
        fields["retention_archived_only"] = archived_only
    return fields


def _days(value: object) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    days = parse_int(value)
    if days is None:
        raise ValidationError("The retention days field must be an integer.")
    if not 1 <= days <= MAX_DAYS:
        raise ValidationError("The retention days field must be between 1 and %(max)d.", max=MAX_DAYS)
    return days


async def check_may_change(user: UserRow, application: ApplicationRow, data: Mapping[str, object]) -> None:
    """Retention deletes threads for good: only administrators may change it (sending a field
    is changing it, whatever its value)."""
    if any(name in data for name in FIELDS):
        await deletion.check_administrator(user, application)


def cutoff(application: ApplicationRow, now: datetime) -> datetime | None:
    """Threads created before this moment are due; None when retention is off."""
    if application.retention_days is None:
        return None
    return now - timedelta(days=application.retention_days)


async def due_count(application: ApplicationRow, now: datetime) -> int:
    """How many threads the next run deletes (0 when retention is off)."""
    before = cutoff(application, now)
    if before is None:
        return 0
    return await statements.count_threads_before(application.id, before, application.retention_archived_only)


async def apply_retention(
    storage: Storage, now: datetime, batch: int = deletion.BATCH, pause: float = PAUSE
) -> dict[int, int]:
    """Delete the due threads of every application with retention on; how many threads each
    application lost (those that lost none are left out)."""
    deleted: dict[int, int] = {}
    for application in await statements.applications_with_retention():
        count = await _apply(application, storage, now, batch, pause)
        if count:
            deleted[application.id] = count
            await transactional(audit.insert_entry)(None, application.id, ACTION, {"threads": count}, now)
            logger.info("retention deleted %d threads of application %d", count, application.id)
    return deleted


@transactional
async def _remove_batch(application_id: int, feedback_ids: list[int], archived_only: bool) -> Deleted:
    """Delete one batch in one transaction. The ids were picked outside it: when only archived
    threads go, those unarchived since are kept (their rows are locked first, so none changes
    between this check and the deletion)."""
    if archived_only:
        locked = await statements.lock_threads(application_id, feedback_ids)
        feedback_ids = [thread.id for thread in locked if thread.archived]
    return await deletion.remove_threads(application_id, feedback_ids)


async def _apply(
    application: ApplicationRow, storage: Storage, now: datetime, batch: int, pause: float
) -> int:
    before = cutoff(application, now)
    assert before is not None  # only applications with retention on
    total = 0
    previous: list[int] = []
    while True:
        ids = await statements.oldest_thread_ids(
            application.id, before, application.retention_archived_only, batch
        )
        if not ids or ids == previous:  # nothing left, or nothing moves: never loop for ever
            return total
        removed = await _remove_batch(application.id, ids, application.retention_archived_only)
        await deletion.remove_files(storage, removed.files)
        total += removed.threads
        previous = ids
        if len(ids) < batch:
            return total
        await asyncio.sleep(pause)
