"""Attachments uploaded through the capture API and claimed by a later submit."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tortoise.exceptions import IntegrityError

from app.db import transactional
from app.errors import NotFound, PayloadTooLarge, ValidationError
from app.i18n import N_
from app.repositories import attachments
from app.repositories.applications import ApplicationRow
from app.repositories.attachments import AttachmentRow
from app.services.files import IncomingFile, clean_filename, remove_file, sniff_mime_type, write_file
from app.services.security import random_token, secrets_match

logger = logging.getLogger("earful.attachments")

MAX_ATTACHMENTS_PER_THREAD = 20
# Attachment ids are drawn at random below 2^53, so that they stay exact in JavaScript.
MAX_ATTACHMENT_ID = 2**53 - 1
UNCLAIMED_LIFETIME = timedelta(hours=24)
_ID_ATTEMPTS = 3


def new_attachment_id() -> int:
    """An unguessable attachment id (53 random bits)."""
    return secrets.randbelow(MAX_ATTACHMENT_ID) + 1


def uploads_dir(data_dir: Path, application_id: int) -> Path:
    """Folder of an application's uploaded files."""
    return data_dir / "uploads" / str(application_id)


def attachment_path(data_dir: Path, attachment: AttachmentRow) -> Path:
    """Where the bytes of an attachment are on disk."""
    return uploads_dir(data_dir, attachment.application_id) / attachment.storage_name


def check_uploads(application: ApplicationRow, files: Sequence[IncomingFile], max_file_bytes: int) -> None:
    """Refuse uploads the application does not take (the capture API's rules, in its order)."""
    if not application.uploads_enabled:
        raise ValidationError(N_("Uploads not enabled"))
    if not files:
        raise ValidationError(N_("No files found"))
    for incoming in files:
        if len(incoming.content) > max_file_bytes:
            raise PayloadTooLarge(N_("File too large"))


def write_uploads(
    application: ApplicationRow, files: Sequence[IncomingFile], data_dir: Path
) -> list[AttachmentRow]:
    """Write files to the application's folder; their rows, to record in a transaction with
    :func:`record_uploads` (the caller removes the files with :func:`remove_uploads` when it fails)."""
    folder = uploads_dir(data_dir, application.id)
    now = datetime.now(UTC)
    # Listed by (created_at, id) and ids are random: a microsecond apart keeps the files of one
    # request in the order they came.
    return [
        AttachmentRow(
            id=new_attachment_id(),
            application_id=application.id,
            feedback_id=None,
            reply_id=None,
            name=clean_filename(incoming.filename),
            mime_type=sniff_mime_type(incoming.content, incoming.filename),
            size=len(incoming.content),
            storage_name=write_file(folder, incoming.content),
            token=random_token(24),
            created_at=now + timedelta(microseconds=position),
        )
        for position, incoming in enumerate(files)
    ]


async def record_uploads(uploads: Sequence[AttachmentRow]) -> list[int]:
    """Record written uploads (inside a transaction); their ids in order."""
    await attachments.insert_attachments(uploads)
    return [upload.id for upload in uploads]


def remove_uploads(data_dir: Path, uploads: Sequence[AttachmentRow]) -> None:
    """Remove the files of uploads that were never recorded."""
    for upload in uploads:
        remove_file(attachment_path(data_dir, upload))


async def store_uploads(
    application: ApplicationRow, files: Sequence[IncomingFile], data_dir: Path, max_file_bytes: int
) -> list[int]:
    """Write uploaded files to disk and record them; returns their ids in the order given.

    All rows are written in one transaction; if that fails, the files written are removed. Ids
    are random: on the rare clash with an existing id, the transaction runs again with new ones.
    """
    check_uploads(application, files, max_file_bytes)
    uploads = write_uploads(application, files, data_dir)
    try:
        for attempt in range(1, _ID_ATTEMPTS + 1):
            try:
                return await transactional(record_uploads)(uploads)
            except IntegrityError:
                if attempt == _ID_ATTEMPTS:
                    raise
                for upload in uploads:
                    upload.id = new_attachment_id()
        raise AssertionError("the loop returns or raises")
    except BaseException:
        remove_uploads(data_dir, uploads)
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


async def attachments_of(feedback_ids: Sequence[int], reply_ids: Sequence[int] = ()) -> list[AttachmentRow]:
    """The files of threads and replies, in upload order."""
    return await attachments.attachments_of(feedback_ids, reply_ids)


async def delete_unclaimed(data_dir: Path, now: datetime | None = None) -> int:
    """Delete uploads that no thread or reply claimed within UNCLAIMED_LIFETIME, files too;
    returns how many.

    Each row is deleted by one statement that returns it, so when several workers run this at
    once every file is removed by the one that deleted its row. A submit that names such an
    upload afterwards gets "Invalid attachments", as for any id that is not a free upload.
    """
    before = (now or datetime.now(UTC)) - UNCLAIMED_LIFETIME
    deleted = await transactional(attachments.delete_unclaimed_before)(before)
    for application_id, storage_name in deleted:
        remove_file(uploads_dir(data_dir, application_id) / storage_name)
    if deleted:
        logger.info("deleted %d uploads never attached to a thread", len(deleted))
    return len(deleted)
