"""Attachments uploaded through the capture API and claimed by a later submit."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.db import atomic
from app.errors import NotFound, PayloadTooLarge, ValidationError
from app.i18n import N_
from app.models import Application, Attachment
from app.services.files import IncomingFile, clean_filename, remove_file, sniff_mime_type, write_file
from app.services.security import random_token, secrets_match

MAX_ATTACHMENTS_PER_THREAD = 20


def uploads_dir(data_dir: Path, application_id: int) -> Path:
    """Folder of an application's uploaded files."""
    return data_dir / "uploads" / str(application_id)


def attachment_path(data_dir: Path, attachment: Attachment) -> Path:
    """Where the bytes of an attachment are on disk."""
    return uploads_dir(data_dir, attachment.application_id) / attachment.storage_name


async def store_uploads(
    application: Application, files: Sequence[IncomingFile], data_dir: Path, max_file_bytes: int
) -> list[int]:
    """Write uploaded files to disk and record them; returns their ids in the order given.

    All rows are written in one transaction; if that fails, the files written are removed.
    """
    if not application.uploads_enabled:
        raise ValidationError(N_("Uploads not enabled"))
    if not files:
        raise ValidationError(N_("No files found"))
    for incoming in files:
        if len(incoming.content) > max_file_bytes:
            raise PayloadTooLarge(N_("File too large"))
    folder = uploads_dir(data_dir, application.id)
    stored: list[Attachment] = []
    for incoming in files:
        stored.append(
            Attachment(
                application_id=application.id,
                name=clean_filename(incoming.filename),
                mime_type=sniff_mime_type(incoming.content, incoming.filename),
                size=len(incoming.content),
                storage_name=write_file(folder, incoming.content),
                token=random_token(24),
            )
        )

    async def work() -> list[int]:
        for attachment in stored:
            await attachment.save()
        return [attachment.id for attachment in stored]

    try:
        return await atomic(work)
    except BaseException:
        for attachment in stored:
            remove_file(folder / attachment.storage_name)
        raise


async def claim_for_thread(application_id: int, feedback_id: int, attachment_ids: Sequence[int]) -> None:
    """Attach uploads to a new thread; any id that is not a free upload of this application fails."""
    if not attachment_ids:
        return
    claimed = await Attachment.filter(
        id__in=list(attachment_ids), application_id=application_id, feedback_id=None, reply_id=None
    ).update(feedback_id=feedback_id)
    if claimed != len(attachment_ids):
        raise ValidationError(N_("Invalid attachments"))


async def find_attachment(attachment_id: int, token: str) -> Attachment:
    """The attachment behind a capability URL; a wrong token is the same as no attachment."""
    attachment = await Attachment.get_or_none(id=attachment_id)
    if attachment is None or not secrets_match(token, attachment.token):
        raise NotFound("Not found")
    return attachment
