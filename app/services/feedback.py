"""Feedback threads: the one write path that creates them, their state, and the reads that list them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Final, TypeVar

from app.config import DEFAULT_QUOTAS, Quotas
from app.db import transactional
from app.errors import NotFound, ValidationError
from app.models import SENTIMENTS
from app.repositories import threads
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.threads import ThreadRow
from app.services import assignment, counters, inbox
from app.services import sentiment as sentiment_analysis
from app.services.applications import applications_for_recompute
from app.services.submissions import Submission
from app.services.thread_details import ThreadDetails, load_details, load_thread_details
from app.services.thread_filters import ThreadFilters
from app.services.thread_writer import NewThread, write_thread
from app.services.validation import MAX_ID
from app.services.webhooks import events

MAX_LIST_LIMIT = 500
RECOMPUTE_PAGE = 500


class Keep(Enum):
    """The type of :data:`KEEP`."""

    KEEP = "keep"


KEEP: Final = Keep.KEEP
"""An update that leaves the assignee as it is (None unassigns)."""


async def create_thread(
    application: ApplicationRow, submission: Submission, quotas: Quotas = DEFAULT_QUOTAS
) -> ThreadRow:
    """Create a thread with its sender, tags and attachments, committed before it returns.

    The sentiment is computed before the thread is written, so it is never visible without one.
    Called inside a transaction, the thread is part of it; otherwise it is written by the
    worker's group commit (:mod:`app.services.thread_writer`).
    """
    label = submission.sentiment or sentiment_analysis.analyze(
        submission.message, submission.language if submission.language_given else None
    )
    return await write_thread(NewThread(application.id, submission, label, quotas.tags_per_application))


@dataclass
class ThreadList:
    """A filtered page of threads, how many match in all, and the next page's cursor."""

    threads: list[ThreadDetails]
    total: inbox.Total
    next_before: int | None


def check_page(limit: int, offset: int) -> None:
    """The paging bounds shared by every list."""
    if limit < 1:
        raise ValidationError("The limit field must be at least 1.")
    if limit > MAX_LIST_LIMIT:
        raise ValidationError("The limit field must not be greater than %(max)d.", max=MAX_LIST_LIMIT)
    if offset < 0:
        raise ValidationError("The offset field must be at least 0.")
    if offset > MAX_ID:
        raise ValidationError("The offset field must not be greater than %(max)d.", max=MAX_ID)


async def list_threads(
    application: ApplicationRow, archived: bool, limit: int = 50, offset: int = 0
) -> tuple[list[ThreadDetails], int]:
    """A page of an application's open (or archived) threads, newest first, and their total."""
    check_page(limit, offset)
    page = await threads.page_of_state(application.id, archived, limit, offset)
    total = application.archived_threads if archived else application.open_threads
    return await load_details(page), total


async def filter_threads(
    application: ApplicationRow, filters: ThreadFilters, limit: int = 50, offset: int = 0
) -> ThreadList:
    """A page of an application's threads matching the inbox's filters, newest first, through
    the inbox's own search (:func:`app.services.inbox.search`), with their total
    (:func:`app.services.inbox.count_threads`: exact, or a bounded count that says it is not)."""
    if filters.plain():
        listed, kept = await list_threads(application, filters.archived, limit, offset)
        return ThreadList(listed, inbox.Total(kept), None)
    check_page(limit, offset)
    chosen = await inbox.selection(application, filters)
    page = await inbox.search(application, filters, limit, offset, chosen)
    counted = await inbox.count_threads(application, filters, chosen)
    details = await load_details(
        [row.thread for row in page.rows], {row.thread.id: row.tags for row in page.rows}
    )
    return ThreadList(details, counted, page.next_before)


T = TypeVar("T")


def _found(thread: T | None) -> T:
    """A thread the application has; for any other id 'Invalid feedback'."""
    if thread is None:
        raise NotFound("Invalid feedback")
    return thread


async def get_thread(application: ApplicationRow, feedback_id: int) -> ThreadRow:
    """One thread of an application; any other id is 'Invalid feedback'."""
    return _found(await threads.thread_by_id(application.id, feedback_id))


async def get_thread_details(application: ApplicationRow, feedback_id: int) -> ThreadDetails:
    """One thread with its replies, attachments and tags; any other id is 'Invalid feedback'."""
    return _found(await load_thread_details(application.id, feedback_id))


def check_sentiment(label: object) -> str:
    """An agent's sentiment label, or the management API's validation error."""
    if not isinstance(label, str) or label not in SENTIMENTS:
        raise ValidationError("The selected sentiment is invalid.")
    return label


async def update_thread(
    application: ApplicationRow,
    thread: ThreadRow,
    archived: bool | None = None,
    sentiment: str | None = None,
    assignee_id: int | Keep | None = KEEP,
    actor: UserRow | None = None,
) -> ThreadRow:
    """Archive/unarchive, correct the sentiment of and/or assign a thread (``assignee_id``: an
    agent of the application, None for nobody), in one transaction that announces one
    ``feedback.updated`` when anything changed. ``actor`` is who asks: an assignee is not
    e-mailed about threads they assigned to themselves."""
    label = None if sentiment is None else check_sentiment(sentiment)
    await _update_thread(application, thread.id, archived, label, assignee_id, actor)
    return await get_thread(application, thread.id)


@transactional
async def _update_thread(
    application: ApplicationRow,
    feedback_id: int,
    archived: bool | None,
    label: str | None,
    assignee_id: int | Keep | None,
    actor: UserRow | None,
) -> None:
    now = datetime.now(UTC)
    changed = False
    if archived is not None and await threads.set_archived(feedback_id, archived, now):
        await counters.thread_moved(application.id, feedback_id, archived)
        changed = True
    if label is not None:
        await threads.correct_sentiment(feedback_id, label, now)
        changed = True
    if assignee_id is not KEEP and not await assignment.unchanged(feedback_id, assignee_id):
        # Checked in the transaction: a member who leaves meanwhile is no longer an agent.
        assignee = await assignment.check_assignee(application, assignee_id)
        if await assignment.write_assignment(application, [feedback_id], assignee, actor, announce=False):
            changed = True
    if changed:
        await events.announce_threads(events.UPDATED, {application.id: [feedback_id]})


async def assign(
    actor: UserRow, application: ApplicationRow, thread: ThreadRow, assignee_id: int | None
) -> ThreadRow:
    """Assign a thread to an agent of its application (None: to nobody), as ``actor``."""
    return await update_thread(application, thread, assignee_id=assignee_id, actor=actor)


async def set_archived(application: ApplicationRow, thread: ThreadRow, archived: bool) -> ThreadRow:
    """Archive or unarchive a thread, moving its counts on the application and its tags."""
    return await update_thread(application, thread, archived=archived)


async def set_sentiment(application: ApplicationRow, thread: ThreadRow, label: str) -> ThreadRow:
    """An agent's correction of a thread's sentiment; recomputation never overwrites it."""
    return await update_thread(application, thread, sentiment=label)


def _sentiment_language(language: str) -> str | None:
    """The thread's language for the analyzer; "en" may be the default, so detect it then."""
    return None if language in ("", "en") else language


async def recompute_sentiment(application: ApplicationRow, thread: ThreadRow | None = None) -> int:
    """Label one thread (or all of an application's) again, skipping agents' corrections.

    Returns how many threads changed label. Threads go in pages by id, so memory stays flat.
    """
    changed = 0
    last_id = 0
    while True:
        page = await threads.uncorrected_labels(
            application.id, last_id, RECOMPUTE_PAGE, thread.id if thread is not None else None
        )
        if not page:
            return changed
        relabelled = {}
        for row in page:
            label = sentiment_analysis.analyze(row.message, _sentiment_language(row.language))
            if label != row.sentiment:
                relabelled[row.id] = label
        changed += await _relabel(relabelled)
        last_id = page[-1].id


@transactional
async def _relabel(labels: dict[int, str]) -> int:
    """New labels, unless an agent corrected a thread meanwhile: a correction wins."""
    changed = 0
    for feedback_id, label in labels.items():
        changed += await threads.relabel(feedback_id, label)
    return changed


async def recompute_all_sentiment(application_id: int | None = None) -> tuple[int, int]:
    """Label every application's threads again (or one application's): after an upgrade that
    improved the analyzers, older threads get the new labels; agents' corrections are kept.

    Returns how many applications were read and how many threads changed label.
    """
    found = await applications_for_recompute(application_id)
    if application_id is not None and not found:
        raise NotFound("Invalid application")
    changed = 0
    for application in found:
        changed += await recompute_sentiment(application)
    return len(found), changed
