"""Deleting threads, tags and applications, with their files, keeping every counter exact.

Who may delete what: anyone who works an application's inbox may delete its threads (spam is
their daily chore, as archiving is); deleting a tag or a whole application is for its
administrators: the user who created it, or an owner of its organization.

A deletion moves the counters the deleted rows were counted in (open and archived threads on
the application and on each tag, replies per day, the first-reply statistics) in the
transaction that deletes them, through :mod:`app.services.counters`. Files are removed (from the
data dir or the bucket, app.services.storage) after that transaction commits, so a failed
deletion never leaves a row without its file (a crash between the two, or a bucket out of reach,
can leave a file without a row: it is never served, only taking space).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from app.db import transactional
from app.errors import Forbidden, NotFound, ValidationError
from app.models import OWNER
from app.repositories import audit, deletion, webhooks
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.services import counters
from app.services import storage as stored
from app.services.invalidation import application_changed
from app.services.organizations import role_of
from app.services.storage import Storage, application_folders, upload_key
from app.services.validation import MAX_ID, parse_int
from app.services.webhooks import events

logger = logging.getLogger("earful.deletion")

# Threads deleted per transaction: small enough that the writers' queue (one SQLite writer, or
# the rows' locks on PostgreSQL) is never held for long, large enough to go fast.
BATCH = 200
MAX_SELECTED = 500
ADMINISTRATORS_ONLY = "Only the application's creator or an owner of its organization can do this."


@dataclass(frozen=True)
class Deleted:
    """How many threads a deletion removed, and their files (application id, storage name)."""

    threads: int
    files: tuple[tuple[int, str], ...] = ()


async def is_administrator(user: UserRow, application: ApplicationRow) -> bool:
    """Whether the user created the application or owns its organization (the pages show the
    administrators' buttons to them alone)."""
    if application.owner_id == user.id:
        return True
    organization_id = application.organization_id
    return organization_id is not None and await role_of(user.id, organization_id) == OWNER


async def check_administrator(user: UserRow, application: ApplicationRow) -> None:
    """Refuse unless the user created the application or owns its organization."""
    if not await is_administrator(user, application):
        raise Forbidden(ADMINISTRATORS_ONLY)


def parse_thread_ids(values: Sequence[object]) -> list[int]:
    """The thread ids of a request that deletes several (the inbox's selection), without
    duplicates; at most MAX_SELECTED."""
    if not values:
        raise ValidationError("Select at least one thread.")
    ids: list[int] = []
    for value in values:
        number = parse_int(value)
        if number is None or not 1 <= number <= MAX_ID:
            raise ValidationError("The feedback ids field must hold thread ids.")
        if number not in ids:
            ids.append(number)
    if len(ids) > MAX_SELECTED:
        raise ValidationError("Select at most %(max)d threads at once.", max=MAX_SELECTED)
    return ids


@transactional
async def remove_threads(
    application_id: int, feedback_ids: Sequence[int], announce: bool = True, erasing: bool = False
) -> Deleted:
    """Delete some of an application's threads (ids of other applications are ignored) and move
    the counters they were counted in; their files are returned, to remove after the commit.
    Run it in the caller's transaction, or in its own.

    ``feedback.deleted`` is announced to webhooks unless ``announce`` is false (the whole
    application goes). ``erasing`` (a person's erasure) first deletes every earlier event about
    these threads, sent or not, so no copy of the person's data stays in the webhook log or goes
    out after the erasure; the deletion itself is still announced, for receivers to erase theirs.
    """
    doomed = await deletion.lock_threads(application_id, feedback_ids)
    if not doomed:
        return Deleted(0)
    ids = [thread.id for thread in doomed]
    if erasing:
        await webhooks.delete_events(await webhooks.event_ids_of_threads(ids))
    if announce:
        await events.announce_threads(events.DELETED, {application_id: ids})
    days = await deletion.reply_days_of_threads(ids)
    links = await deletion.tag_links_of_threads(ids)
    files = await deletion.files_of_threads(ids)
    await deletion.delete_threads(ids)
    await counters.threads_removed(application_id, doomed, days, links)
    return Deleted(len(ids), tuple(files))


async def remove_files(storage: Storage, files: Sequence[tuple[int, str]]) -> None:
    """Remove the files of deleted rows (after their transaction committed)."""
    await stored.remove(storage, [upload_key(application_id, name) for application_id, name in files])


async def delete_threads(application: ApplicationRow, feedback_ids: Sequence[int], storage: Storage) -> int:
    """Delete threads of the application, in one transaction; how many were deleted. Ids that
    are not the application's threads (any longer) are ignored, so deleting twice is harmless."""
    deleted = await remove_threads(application.id, feedback_ids)
    await remove_files(storage, deleted.files)
    return deleted.threads


async def delete_thread(application: ApplicationRow, feedback_id: int, storage: Storage) -> None:
    """Delete one thread; 'Invalid feedback' when the application has no such thread."""
    if not await delete_threads(application, [feedback_id], storage):
        raise NotFound("Invalid feedback")


async def delete_tag(user: UserRow, application: ApplicationRow, tag_id: int) -> None:
    """Delete a tag of the application: its threads lose it, nothing else changes."""
    await check_administrator(user, application)
    if not await transactional(deletion.delete_tag)(application.id, tag_id):
        raise NotFound("Invalid tag")


def check_confirmation(application: ApplicationRow, typed: object) -> None:
    """Deleting an application is confirmed by typing its name (the web app asks for it)."""
    if not isinstance(typed, str) or typed.strip() != application.name:
        raise ValidationError("Type the application's name to confirm.")


@transactional
async def _remove_application(user: UserRow, application_id: int, threads: int) -> None:
    """The application row with what is left under it, and the audit entry that says so."""
    if await deletion.delete_application(application_id):
        counts = {"threads": threads}
        await audit.insert_entry(user.id, application_id, "application.delete", counts, datetime.now(UTC))


async def delete_application(user: UserRow, application: ApplicationRow, storage: Storage) -> int:
    """Delete an application with everything under it; how many threads went with it.

    Its threads go first (no ``feedback.deleted`` per thread: the application's own webhook
    endpoints go with it), BATCH at a time, each batch in a short transaction of its own so that
    the other applications' writers are never held up for long; then the application row with
    what is left (senders, tags, uploads never attached, form opens, blocklist) in one last
    transaction, which also writes the audit entry ("application.delete", how many threads),
    then its folders of files (its logos, and uploads never attached). If the server stops
    halfway, the application is still there with fewer threads, all counters exact, and deleting
    it again finishes the job.
    """
    await check_administrator(user, application)
    total = 0
    while True:
        ids = await deletion.thread_ids_of_application(application.id, BATCH)
        if not ids:
            break
        deleted = await remove_threads(application.id, ids, announce=False)
        await remove_files(storage, deleted.files)
        total += deleted.threads
    await _remove_application(user, application.id, total)
    await application_changed(application.id)
    await stored.remove_folders(storage, application_folders(application.id))
    logger.info("application %d deleted with %d threads", application.id, total)
    return total
