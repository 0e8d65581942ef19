"""Attachments uploaded through the capture API and claimed by a later submit."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

from tortoise.exceptions import IntegrityError

from app.config import DEFAULT_QUOTAS, Quotas
from app.db import transactional
from app.errors import NotFound, PayloadTooLarge, ValidationError
from app.i18n import N_
from app.repositories import attachments
from app.repositories.applications import ApplicationRow
from app.repositories.attachments import AttachmentRow
from app.services import storage as stored
from app.services.files import IncomingFile, clean_filename, new_file_name, sniff_mime_type
from app.services.security import random_token, secrets_match
from app.services.storage import Storage, StoredFile, upload_key

logger = logging.getLogger("earful.attachments")

# Attachment ids are drawn at random below 2^53, so that they stay exact in JavaScript.
MAX_ATTACHMENT_ID = 2**53 - 1
UNCLAIMED_LIFETIME = timedelta(hours=24)
CLEANUP_BATCH = 500
_ID_ATTEMPTS = 3


def new_attachment_id() -> int:
    """An unguessable attachment id (53 random bits)."""
    return secrets.randbelow(MAX_ATTACHMENT_ID) + 1


def attachment_key(attachment: AttachmentRow) -> str:
    """The key of an attachment's bytes in the storage."""
    return upload_key(attachment.application_id, attachment.storage_name)


def check_uploads(
    application: ApplicationRow,
    files: Sequence[IncomingFile],
    max_file_bytes: int,
    quotas: Quotas = DEFAULT_QUOTAS,
) -> None:
    """Refuse uploads the application does not take (the capture API's rules, in its order)."""
    if not application.uploads_enabled:
        raise ValidationError(N_("Uploads not enabled"))
    if not files:
        raise ValidationError(N_("No files found"))
    if len(files) > quotas.files_per_upload:
        raise ValidationError(N_("Too many files"))
    for incoming in files:
        if len(incoming.content) > max_file_bytes:
            raise PayloadTooLarge(N_("File too large"))


def _utc_day(now: datetime | None = None) -> date:
    return (now or datetime.now(UTC)).astimezone(UTC).date()


async def check_daily_quota(
    application_id: int, adding: int, quotas: Quotas, now: datetime | None = None
) -> None:
    """Refuse ``adding`` more bytes when they would take the application's uploads of the UTC
    day past the quota: the public key must not let anyone fill the disk. Checked before any
    file is written; :func:`_record_within_quota` counts the bytes and checks again."""
    uploaded = await attachments.bytes_uploaded_on(application_id, _utc_day(now))
    if uploaded + adding > quotas.upload_bytes_per_day:
        raise PayloadTooLarge(N_("Upload quota exceeded for today"))


async def write_uploads(
    storage: Storage, application: ApplicationRow, files: Sequence[IncomingFile]
) -> list[AttachmentRow]:
    """Store files in the application's folder; their rows, to record in a transaction with
    :func:`record_uploads` (the caller removes the files with :func:`remove_uploads` when it fails).
    When one cannot be stored, those stored before it are removed."""
    now = datetime.now(UTC)
    uploads: list[AttachmentRow] = []
    try:
        for position, incoming in enumerate(files):
            # Listed by (created_at, id) and ids are random: a microsecond apart keeps the files
            # of one request in the order they came.
            upload = AttachmentRow(
                id=new_attachment_id(),
                application_id=application.id,
                feedback_id=None,
                reply_id=None,
                name=clean_filename(incoming.filename),
                mime_type=sniff_mime_type(incoming.content, incoming.filename),
                size=len(incoming.content),
                storage_name=new_file_name(),
                token=random_token(24),
                created_at=now + timedelta(microseconds=position),
            )
            await storage.put(attachment_key(upload), incoming.content, upload.mime_type)
            uploads.append(upload)
    except BaseException:
        await remove_uploads(storage, uploads)
        raise
    return uploads


async def record_uploads(uploads: Sequence[AttachmentRow]) -> list[int]:
    """Record written uploads (inside a transaction); their ids in order."""
    await attachments.insert_attachments(uploads)
    return [upload.id for upload in uploads]


async def remove_uploads(storage: Storage, uploads: Sequence[AttachmentRow]) -> None:
    """Remove the files of uploads that were never recorded."""
    await stored.remove(storage, [attachment_key(upload) for upload in uploads])


async def _record_within_quota(uploads: Sequence[AttachmentRow], quotas: Quotas) -> list[int]:
    """Record uploads (inside a transaction) and count their bytes toward the day's quota; when
    that takes the day past the quota, nothing is recorded. The count is added and read in one
    statement that holds the day's row, so concurrent uploads cannot all pass a check made
    before either wrote."""
    if uploads:
        adding = sum(upload.size for upload in uploads)
        total = await attachments.add_uploaded_bytes(uploads[0].application_id, _utc_day(), adding)
        if total > quotas.upload_bytes_per_day:
            raise PayloadTooLarge(N_("Upload quota exceeded for today"))
    return await record_uploads(uploads)


async def store_uploads(
    storage: Storage,
    application: ApplicationRow,
    files: Sequence[IncomingFile],
    max_file_bytes: int,
    quotas: Quotas = DEFAULT_QUOTAS,
) -> list[int]:
    """Store uploaded files and record them; returns their ids in the order given.

    The quota is checked before any file is written, and again in the transaction that records
    them. All rows are written in one transaction; if that fails, the files written are removed.
    Ids are random: on the rare clash with an existing id, the transaction runs again with new ones.
    """
    check_uploads(application, files, max_file_bytes, quotas)
    await check_daily_quota(application.id, sum(len(f.content) for f in files), quotas)
    uploads = await write_uploads(storage, application, files)
    try:
        for attempt in range(1, _ID_ATTEMPTS + 1):
            try:
                return await transactional(_record_within_quota)(uploads, quotas)
            except IntegrityError:
                if attempt == _ID_ATTEMPTS:
                    raise
                for upload in uploads:
                    upload.id = new_attachment_id()
        raise AssertionError("the loop returns or raises")
    except BaseException:
        await remove_uploads(storage, uploads)
        raise


async def claim_for_thread(application_id: int, feedback_id: int, attachment_ids: Sequence[int]) -> None:
    """Attach uploads to a new thread (inside its transaction); any id that is not a free upload
    of this application fails."""
    if attachment_ids and await attachments.claim_for_thread(
        application_id, feedback_id, attachment_ids
    ) != len(attachment_ids):
        raise ValidationError(N_("Invalid attachments"))


async def claim_for_reply(application_id: int, reply_id: int, attachment_ids: Sequence[int]) -> None:
    """Attach uploads to a new reply (inside its transaction); any id that is not a free upload
    of this application fails."""
    if attachment_ids and await attachments.claim_for_reply(application_id, reply_id, attachment_ids) != len(
        attachment_ids
    ):
        raise ValidationError(N_("Invalid attachments"))


async def find_attachment(attachment_id: int, token: str) -> AttachmentRow:
    """The attachment behind a capability URL; a wrong token is the same as no attachment."""
    attachment = await attachments.attachment_by_id(attachment_id)
    if attachment is None or not secrets_match(token, attachment.token):
        raise NotFound("Not found")
    return attachment


async def open_attachment(storage: Storage, attachment: AttachmentRow) -> StoredFile:
    """The stored bytes of an attachment, ready to send; 'Not found' when they are missing."""
    found = await storage.open(attachment_key(attachment))
    if found is None:
        raise NotFound("Not found")
    return found


async def attachments_of(feedback_ids: Sequence[int], reply_ids: Sequence[int] = ()) -> list[AttachmentRow]:
    """The files of threads and replies, in upload order."""
    return await attachments.attachments_of(feedback_ids, reply_ids)


async def delete_unclaimed(storage: Storage, now: datetime | None = None, batch: int = CLEANUP_BATCH) -> int:
    """Delete uploads that no thread or reply claimed within UNCLAIMED_LIFETIME, files too;
    returns how many.

    A batch at a time, one short transaction each, so that a flood of uploads never holds the
    writers' queue for long; each batch's files are removed after its rows are committed. Each
    row is deleted by one statement that returns it, so when several workers run this at once
    every file is removed by the one that deleted its row. A submit that names such an upload
    afterwards gets "Invalid attachments", as for any id that is not a free upload.
    """
    before = (now or datetime.now(UTC)) - UNCLAIMED_LIFETIME
    total = 0
    while True:
        deleted = await transactional(attachments.delete_unclaimed_before)(before, batch)
        await stored.remove(storage, [upload_key(application, name) for application, name in deleted])
        total += len(deleted)
        if len(deleted) < batch:
            break
    if total:
        logger.info("deleted %d uploads never attached to a thread", total)
    return total


async def forget_past_upload_days(now: datetime | None = None) -> int:
    """Drop the upload counts of days before yesterday (the quota reads only today's; yesterday's
    is kept for an upload whose transaction began before midnight); how many were dropped."""
    return await transactional(attachments.drop_upload_days_before)(_utc_day(now) - timedelta(days=1))
