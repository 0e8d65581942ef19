"""Incoming e-mail: a new thread for an intake address, the customer's answer for a reply address.

Both the SMTP receiver (``earful smtp``) and the HTTP endpoint for MTAs call :func:`receive_mail`.
New threads go through ``feedback.create_thread``, exactly as a capture submit; answers through
``replies.add_customer_reply``. Every accepted message is remembered by its Message-ID (per
target) in the same transaction, so a redelivered message changes nothing.
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import getaddresses

from tortoise.exceptions import IntegrityError

from app.config import Settings
from app.db import transactional
from app.errors import DomainError
from app.repositories import outbox
from app.repositories.attachments import AttachmentRow
from app.services.attachments import record_uploads, remove_uploads, write_uploads
from app.services.blocklist import sender_blocked
from app.services.feedback import create_thread
from app.services.files import IncomingFile
from app.services.mail.addresses import Recipient, resolve_recipient
from app.services.mail.parsing import MalformedMail, ParsedMail, parse_mail
from app.services.replies import add_customer_reply
from app.services.storage import storage_for
from app.services.submissions import MAX_MESSAGE_LENGTH, MIN_MESSAGE_LENGTH, Submission

MAX_RECIPIENTS = 20


class MailRefused(DomainError):
    """An e-mail Earful will not take: ``status`` is the HTTP answer, ``smtp_reply`` the SMTP one."""

    status = 400
    smtp_code = 554
    enhanced_code = "5.6.0"

    @property
    def smtp_reply(self) -> str:
        return f"{self.smtp_code} {self.enhanced_code} {self}"


class UnknownRecipient(MailRefused):
    """No recipient is an intake address or a valid (signed) reply address."""

    status = 404
    smtp_code = 550
    enhanced_code = "5.1.1"


class InvalidSender(MailRefused):
    """The message names no sender address that could be answered."""

    smtp_code = 550
    enhanced_code = "5.1.7"


class UnreadableMail(MailRefused):
    """The bytes are not a message, or the message has nothing to keep."""


@dataclass(frozen=True)
class Delivered:
    """What became of an e-mail for one target: a new ``thread``, a ``reply``, or a ``duplicate``
    or ``ignored`` (automatic, or from a sender on the application's blocklist) message that
    changed nothing."""

    outcome: str
    thread_id: int | None = None


def header_recipients(raw: bytes) -> list[str]:
    """The recipients a message names in its headers, for MTAs that do not pass the envelope."""
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    values = [
        str(value)
        for name in ("Delivered-To", "X-Original-To", "To", "Cc")
        for value in message.get_all(name, [])
    ]
    return [address for _, address in getaddresses(values) if address]


def inbound_key(message_id: str, recipient: Recipient) -> str:
    """The dedupe key of a message for one target: its Message-ID, a space, the target."""
    return f"{message_id[:200]} {recipient.key}"


def _files_note(names: list[str]) -> str:
    return f"[Attachments not kept: {', '.join(names)}]" if names else ""


async def _write_files(
    recipient: Recipient, mail: ParsedMail, settings: Settings
) -> tuple[list[AttachmentRow], str]:
    """Write the mail's files as uploads of the application (within the upload limits); their
    rows, recorded with the thread or reply, and a note naming the files left out.

    Files over the size limit, past the per-thread maximum, or sent to an application whose
    uploads are disabled are left out, and named in a note added to the message.
    """
    application = recipient.application
    if not mail.files:
        return [], ""
    if not application.uploads_enabled:
        return [], _files_note([f"{f.filename} (uploads are disabled)" for f in mail.files])
    kept: list[IncomingFile] = []
    dropped: list[str] = []
    for incoming in mail.files:
        if len(incoming.content) > settings.max_upload_bytes:
            dropped.append(f"{incoming.filename} (too large)")
        elif len(kept) >= settings.quotas.files_per_thread:
            dropped.append(f"{incoming.filename} (too many files)")
        else:
            kept.append(incoming)
    return await write_uploads(storage_for(settings), application, kept), _files_note(dropped)


def _text(mail: ParsedMail, note: str, with_subject: bool, attached: int) -> str:
    """The message to keep: the subject of a new thread, the new text, and a note on files."""
    body = mail.text
    if with_subject and mail.subject and not body.startswith(mail.subject):
        body = f"{mail.subject}\n\n{body}".strip()
    if not body and attached:
        body = "[Attachments only]"
    text = "\n\n".join(part for part in (body, note) if part)
    return text if len(text) <= MAX_MESSAGE_LENGTH else text[: MAX_MESSAGE_LENGTH - 1] + "…"


async def _deliver(recipient: Recipient, mail: ParsedMail, settings: Settings) -> Delivered:
    """Take one e-mail for one target, in one transaction: its files, the thread or the reply,
    and the record of its Message-ID (the files go when the transaction fails)."""
    key = inbound_key(mail.message_id, recipient)
    if await sender_blocked(recipient.application.id, mail.sender_email):
        return Delivered("ignored")  # accepted as any mail is, so the sender learns nothing
    if await outbox.received(key):
        return Delivered("duplicate", recipient.thread.id if recipient.thread else None)
    if recipient.thread is None and len(mail.text or mail.subject) < MIN_MESSAGE_LENGTH and not mail.files:
        raise UnreadableMail("The message has no text")
    uploads, note = await _write_files(recipient, mail, settings)
    try:
        return await _take(recipient, mail, key, uploads, note)
    except IntegrityError:
        await remove_uploads(storage_for(settings), uploads)
        if await outbox.received(key):  # the same mail, delivered twice at once
            return Delivered("duplicate", recipient.thread.id if recipient.thread else None)
        raise
    except BaseException:
        await remove_uploads(storage_for(settings), uploads)
        raise


@transactional
async def _take(
    recipient: Recipient, mail: ParsedMail, key: str, uploads: list[AttachmentRow], note: str
) -> Delivered:
    attachment_ids = await record_uploads(uploads)
    sender = mail.sender_email or ""
    if recipient.thread is None:
        submission = Submission(
            email=sender,
            name=mail.sender_name,
            message=_text(mail, note, with_subject=True, attached=len(attachment_ids)),
            attachments=tuple(attachment_ids),
            language=mail.language,
            user_agent=mail.mailer,
        )
        if len(submission.message) < MIN_MESSAGE_LENGTH:
            raise UnreadableMail("The message has no text")
        created = await create_thread(recipient.application, submission)
        await outbox.record_received(key, created.id, datetime.now(UTC))
        return Delivered("thread", created.id)
    text = _text(mail, note, with_subject=False, attached=len(attachment_ids)) or "[Empty message]"
    await add_customer_reply(recipient.application, recipient.thread, sender, text, attachment_ids)
    await outbox.record_received(key, recipient.thread.id, datetime.now(UTC))
    return Delivered("reply", recipient.thread.id)


async def resolve_recipients(addresses: list[str], settings: Settings) -> list[Recipient]:
    """The known targets among envelope recipients, each once; forged or unknown ones are dropped."""
    found: dict[str, Recipient] = {}
    for address in addresses[:MAX_RECIPIENTS]:
        recipient = await resolve_recipient(address, settings.secret_key, settings.intake_domain)
        if recipient is not None:
            found.setdefault(recipient.key, recipient)
    return list(found.values())


async def receive_mail(
    raw: bytes, recipients: list[str], settings: Settings, envelope_sender: str | None = None
) -> list[Delivered]:
    """Turn one raw e-mail into threads or answers, one per known recipient.

    Raises UnknownRecipient when no recipient is an intake or a valid reply address, and
    UnreadableMail or InvalidSender when the message cannot become feedback. Automatic mail
    (auto-replies, bounces) is accepted and dropped, so that it cannot start a mail loop.
    """
    targets = await resolve_recipients(recipients, settings)
    if not targets:
        raise UnknownRecipient("No such recipient here")
    try:
        mail = parse_mail(raw, envelope_sender)
    except MalformedMail as error:
        raise UnreadableMail(str(error)) from None
    if mail.automatic:
        return [Delivered("ignored") for _ in targets]
    if mail.sender_email is None:
        raise InvalidSender("Invalid sender address")
    return [await _deliver(target, mail, settings) for target in targets]
