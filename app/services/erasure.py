"""Privacy requests (GDPR): export everything held about a person, or erase it, by e-mail address.

A person is a sender of feedback, known by an e-mail address in each application: their sender
row, their threads with everything in them, their e-mailed answers on other people's threads
(an address copied on a conversation answers it too) and the e-mails addressed to them.

Who may ask: an application's administrators (its creator, or an owner of its organization:
:func:`app.services.deletion.check_administrator`), for the applications they administer, all
of them or the one named; the command line acts for the operator, on every application.

Erasing deletes the person's threads BATCH at a time through
:func:`app.services.deletion.remove_threads` (which moves every counter), each batch in its own
short transaction, then in one last transaction what is left: threads that arrived meanwhile,
the person's answers elsewhere (their counters moved by :mod:`app.services.counters`), the
outbox rows addressed to them, their sender rows, and the audit entry. Files are removed after
each commit. Erasing someone who is not there erases nothing and says so with zero counts.

Both write one audit entry per request: who, when, what and how many, never whose data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.models import OWNER
from app.repositories import audit, people
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow, applications_by_id, visible_application
from app.repositories.attachments import AttachmentRow, attachments_of
from app.repositories.audit import AuditRow
from app.repositories.replies import replies_of_threads
from app.repositories.threads import ThreadRow
from app.services import counters
from app.services.deletion import BATCH, check_administrator, remove_files, remove_threads
from app.services.storage import Storage
from app.services.tags import tags_of_threads
from app.services.validation import MAX_ID, normalize_email, parse_int

ERASE = "person.erase"
EXPORT = "person.export"
COUNTS = ("applications", "senders", "threads", "replies", "attachments", "emails")
INVALID_EMAIL = "The email field must be a valid email address."
MAX_AUDIT_ENTRIES = 200

AttachmentUrl = Callable[[AttachmentRow], str]


def check_email(value: object) -> str:
    """The person's address, trimmed and lower-cased."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValidationError("The email field is required.")
    address = normalize_email(value)
    if address is None:
        raise ValidationError(INVALID_EMAIL)
    return address


def parse_application_id(value: object) -> int | None:
    """The application a request names, if it names one (empty is none); an id out of range
    names no application."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    number = parse_int(value)
    if number is None:
        raise ValidationError("The application id field must be an integer.")
    if not 1 <= number <= MAX_ID:
        raise NotFound("Invalid application")
    return number


async def administered_applications(user: UserRow) -> list[ApplicationRow]:
    """The applications the user administers (what a request without an application covers)."""
    return await people.administered_applications(user.id, OWNER)


async def applications_in_scope(actor: UserRow | None, application_id: int | None) -> list[ApplicationRow]:
    """The applications a request covers: the one named (which the actor must see, else
    'Invalid application', and administer, else 403), or every one the actor administers;
    ``actor`` None is the operator (the command line), who covers every application."""
    if actor is None:
        found = await applications_by_id(application_id)
        if application_id is not None and not found:
            raise NotFound("Invalid application")
        return found
    if application_id is None:
        return await administered_applications(actor)
    application = await visible_application(actor.id, application_id)
    if application is None:
        raise NotFound("Invalid application")
    await check_administrator(actor, application)
    return [application]


def _audited_application(scope: Sequence[ApplicationRow]) -> int | None:
    return scope[0].id if len(scope) == 1 else None


# Erasure --------------------------------------------------------------------------------------


async def erase_person(
    actor: UserRow | None, email: object, application_id: object = None, *, storage: Storage
) -> dict[str, int]:
    """Erase the person with this address from the applications in scope; the counts of what
    went (``COUNTS``): ``applications`` that held something of the person, their ``senders``
    rows, their ``threads`` (with every reply in them), their ``replies`` on other people's
    threads, the ``attachments`` of all these, and the ``emails`` addressed to them (the outbox).
    Bad input is refused before anything is written."""
    address = check_email(email)
    scope = await applications_in_scope(actor, parse_application_id(application_id))
    counts: Counter[str] = Counter()
    found: set[int] = set()
    for application in scope:
        # The e-mails to them first: those of their threads would go unseen with the threads.
        emails = await transactional(people.delete_outbox_of_person)(application.id, address)
        counts["emails"] += emails
        if emails:
            found.add(application.id)
        senders = await people.senders_of_person(application.id, address)
        member_ids = [sender.id for sender in senders]
        while ids := await people.thread_ids_of_senders(member_ids, BATCH):
            deleted = await remove_threads(application.id, ids, erasing=True)
            await remove_files(storage, deleted.files)
            counts["threads"] += deleted.threads
            counts["attachments"] += len(deleted.files)
            found.add(application.id)
            if not deleted.threads:  # gone meanwhile (another erasure): the last step finishes
                break
    files, total = await _erase_rest(actor, address, scope, counts, found)
    await remove_files(storage, files)
    return total


@transactional
async def _erase_rest(
    actor: UserRow | None,
    address: str,
    scope: Sequence[ApplicationRow],
    counts: Counter[str],
    found: set[int],
) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """What is left of the person once the batches took their threads, and the audit entry, in
    one transaction; the files to remove after it and the counts of the whole erasure."""
    counts = counts.copy()
    files: list[tuple[int, str]] = []
    for application in scope:
        before = sum(counts.values())
        senders = await people.senders_of_person(application.id, address, lock=True)
        member_ids = [sender.id for sender in senders]
        # Threads that came in since the batches (the senders are locked now: no more will).
        while ids := await people.thread_ids_of_senders(member_ids, BATCH):
            deleted = await remove_threads(application.id, ids, erasing=True)
            files += deleted.files
            counts["threads"] += deleted.threads
            counts["attachments"] += len(deleted.files)
        answers = [answer.id for answer in await people.answers_of_person(application.id, address)]
        if answers:
            days = await people.reply_days_of_replies(answers)
            answer_files = await people.files_of_replies(answers)
            await people.delete_replies(answers)
            counts["replies"] += len(answers)  # (SQLite's count of a delete includes its cascades)
            await counters.replies_removed(application.id, days)
            files += answer_files
            counts["attachments"] += len(answer_files)
        counts["emails"] += await people.delete_outbox_of_person(application.id, address)
        await people.delete_senders(member_ids)
        counts["senders"] += len(member_ids)
        if sum(counts.values()) > before:
            found.add(application.id)
    total = {name: counts[name] for name in COUNTS}
    total["applications"] = len(found)
    actor_id = None if actor is None else actor.id
    await audit.insert_entry(actor_id, _audited_application(scope), ERASE, total, datetime.now(UTC))
    return files, total


# Export ---------------------------------------------------------------------------------------


def _timestamp(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp())


def _attachment(attachment: AttachmentRow, attachment_url: AttachmentUrl) -> dict[str, Any]:
    return {
        "name": attachment.name,
        "mime_type": attachment.mime_type,
        "size": attachment.size,
        "url": attachment_url(attachment),
    }


async def _threads_json(
    threads: Sequence[ThreadRow], address: str, attachment_url: AttachmentUrl
) -> list[dict[str, Any]]:
    """Threads as the export writes them: their public replies (an agent's, or the person's own
    answers; never internal notes, nor answers of other people copied on the thread)."""
    ids = [thread.id for thread in threads]
    tags = await tags_of_threads(ids)
    replies = [
        reply
        for reply in await replies_of_threads(ids)
        if reply.type == "reply" and (reply.from_agent or reply.email.lower() == address)
    ]
    files = await attachments_of(ids, [reply.id for reply in replies])
    of_thread: dict[int, list[AttachmentRow]] = {}
    of_reply: dict[int, list[AttachmentRow]] = {}
    for attachment in files:
        if attachment.reply_id is not None:
            of_reply.setdefault(attachment.reply_id, []).append(attachment)
        elif attachment.feedback_id is not None:
            of_thread.setdefault(attachment.feedback_id, []).append(attachment)
    by_thread: dict[int, list[dict[str, Any]]] = {}
    for reply in replies:
        by_thread.setdefault(reply.feedback_id, []).append(
            {
                "from_agent": reply.from_agent,
                "message": reply.message,
                "created_at": _timestamp(reply.created_at),
                "attachments": [_attachment(a, attachment_url) for a in of_reply.get(reply.id, [])],
            }
        )
    return [
        {
            "id": thread.id,
            "message": thread.message,
            "sentiment": thread.sentiment,
            "nps": thread.nps,
            "url": thread.url,
            "properties": thread.properties,
            "language": thread.language,
            "ip_address": thread.ip_address,
            "user_agent": thread.user_agent,
            "archived": thread.archived,
            "created_at": _timestamp(thread.created_at),
            "tags": [tag.name for tag in tags.get(thread.id, [])],
            "attachments": [_attachment(a, attachment_url) for a in of_thread.get(thread.id, [])],
            "replies": by_thread.get(thread.id, []),
        }
        for thread in threads
    ]


async def _application_json(
    application: ApplicationRow, address: str, attachment_url: AttachmentUrl, counts: Counter[str]
) -> dict[str, Any] | None:
    """What one application holds about the person; None when nothing."""
    senders = await people.senders_of_person(application.id, address)
    member_ids = [sender.id for sender in senders]
    threads: list[dict[str, Any]] = []
    after = 0
    while batch := await people.threads_of_senders(member_ids, after, BATCH):
        threads += await _threads_json(batch, address, attachment_url)
        after = batch[-1].id
    answers = await people.answers_of_person(application.id, address)
    answer_files = await attachments_of([], [answer.id for answer in answers])
    emails = await people.outbox_of_person(application.id, address)
    if not (senders or answers or emails):
        return None
    counts["applications"] += 1
    counts["senders"] += len(senders)
    counts["threads"] += len(threads)
    counts["replies"] += len(answers)
    counts["attachments"] += len(answer_files) + sum(
        len(thread["attachments"]) + sum(len(reply["attachments"]) for reply in thread["replies"])
        for thread in threads
    )
    counts["emails"] += len(emails)
    return {
        "id": application.id,
        "name": application.name,
        "senders": [
            {
                "email": sender.email,
                "name": sender.name,
                "created_at": _timestamp(sender.created_at),
                "updated_at": _timestamp(sender.updated_at),
            }
            for sender in senders
        ],
        "threads": threads,
        "answers": [
            {
                "feedback_id": answer.feedback_id,
                "message": answer.message,
                "created_at": _timestamp(answer.created_at),
                "attachments": [
                    _attachment(a, attachment_url) for a in answer_files if a.reply_id == answer.id
                ],
            }
            for answer in answers
        ],
        "emails": [
            {
                "feedback_id": email.feedback_id,
                "status": email.status,
                "created_at": _timestamp(email.created_at),
                "sent_at": _timestamp(email.sent_at),
            }
            for email in emails
        ],
    }


async def export_person(
    actor: UserRow | None, email: object, application_id: object = None, *, attachment_url: AttachmentUrl
) -> dict[str, Any]:
    """Everything the applications in scope hold about the person, as one JSON document:
    per application that holds something, its id and name, the sender record, the threads
    (with their public replies, tags and files: ``attachment_url`` gives a file's address),
    the person's answers on other people's threads and the e-mails addressed to them."""
    address = check_email(email)
    scope = await applications_in_scope(actor, parse_application_id(application_id))
    counts: Counter[str] = Counter(dict.fromkeys(COUNTS, 0))
    found = []
    for application in scope:
        held = await _application_json(application, address, attachment_url, counts)
        if held is not None:
            found.append(held)
    now = datetime.now(UTC)
    await transactional(audit.insert_entry)(
        None if actor is None else actor.id, _audited_application(scope), EXPORT, dict(counts), now
    )
    return {"email": address, "exported_at": _timestamp(now), "applications": found}


# The audit trail ------------------------------------------------------------------------------


async def recent_audit_entries(user: UserRow, limit: int = 50) -> list[AuditRow]:
    """The newest entries of the user's own actions and of the applications they administer."""
    return await audit.recent_entries(user.id, OWNER, max(1, min(limit, MAX_AUDIT_ENTRIES)))
