"""Replies and internal notes, and the reply-time statistics they keep up to date."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import NamedTuple

from app.db import transactional
from app.errors import Forbidden, ValidationError
from app.models import REPLY_TYPES
from app.repositories import outbox, replies, reply_lists, threads
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.attachments import AttachmentRow
from app.repositories.replies import ReplyRow
from app.repositories.threads import ThreadRow
from app.representations import summary_reads
from app.services import counters, live, notifications
from app.services.attachments import claim_for_reply
from app.services.feedback import check_page
from app.services.mail import outbox as mail_outbox
from app.services.plans import includes_internal_notes
from app.services.webhooks import events

MAX_REPLY_LENGTH = 20_000


class RepliesPage(NamedTuple):
    """A page of the replies list: its replies, how many match in all, and the files of its
    replies by reply id."""

    replies: list[ReplyRow]
    total: int
    attachments: dict[int, list[AttachmentRow]]


def check_reply(message: object, reply_type: object) -> tuple[str, str]:
    """Validate a reply's text and type."""
    if message is not None and not isinstance(message, str):
        raise ValidationError("The message field must be a string.")
    text = (message or "").strip()
    if not text:
        raise ValidationError("The message field is required.")
    if len(text) > MAX_REPLY_LENGTH:
        raise ValidationError(
            "The message field must not be greater than %(max)d characters.", max=MAX_REPLY_LENGTH
        )
    kind = "reply" if reply_type is None else reply_type
    if not isinstance(kind, str) or kind not in REPLY_TYPES:
        raise ValidationError("The selected type is invalid.")
    return text, kind


async def create_agent_reply(
    user: UserRow, application: ApplicationRow, thread: ThreadRow, message: object, reply_type: object = None
) -> ReplyRow:
    """Add an agent's public reply or internal note to a thread.

    The first public reply sets the thread's ``first_reply_time`` and adds it to the application's
    average, in the same transaction; the conditional update makes a concurrent second reply
    unable to count twice. A public reply also writes its outbox row in that transaction, so it
    is e-mailed to the customer exactly when it exists; notes are never e-mailed.
    """
    text, kind = check_reply(message, reply_type)
    if kind == "note" and not await includes_internal_notes(application):
        raise Forbidden("Your plan does not include internal notes")
    reply = await _write_agent_reply(user, application, thread, text, kind)
    if kind == "reply":
        mail_outbox.wake_worker()
    return reply


@transactional
async def _write_agent_reply(
    user: UserRow, application: ApplicationRow, thread: ThreadRow, text: str, kind: str
) -> ReplyRow:
    now = datetime.now(UTC)
    reply = await replies.insert_reply(application.id, thread.id, user, kind, text, user.email, now)
    first_reply_time = None
    if kind == "reply" and thread.first_reply_time is None:
        waited = max(0, int((now - thread.created_at).total_seconds()))
        if await threads.record_reply_time(thread.id, now, first_reply_time=waited):
            first_reply_time = waited
    if first_reply_time is None:
        await threads.record_reply_time(thread.id, now)
    await counters.reply_added(application.id, now, first_reply_time)
    if kind == "reply":
        await _queue_email(application, thread, reply)
    await events.announce_reply(reply)
    await live.announce_reply(reply)
    return reply


async def _queue_email(application: ApplicationRow, thread: ThreadRow, reply: ReplyRow) -> None:
    """Write the outbox row of a public reply; its Message-ID key is fixed here, once."""
    sender = thread.member or await threads.sender_by_id(thread.member_id)
    assert sender is not None  # a thread's sender exists (foreign key)
    await outbox.queue_email(
        application.id,
        thread.id,
        reply.id,
        sender.email,
        f"reply-{reply.id}.{secrets.token_hex(8)}",
        reply.created_at,
    )


async def add_customer_reply(
    application: ApplicationRow,
    thread: ThreadRow,
    email: str,
    message: str,
    attachment_ids: Sequence[int] = (),
) -> ReplyRow:
    """Append the customer's answer (e.g. by e-mail) to a thread, inside the caller's transaction
    or in one of its own.

    The thread's last reply time moves, the application counts the reply, and an archived
    thread comes back to the inbox (moving its application and tag counts).
    """
    text = message.strip()[:MAX_REPLY_LENGTH]
    if not text:
        raise ValidationError("The message field is required.")
    return await _write_customer_reply(application, thread, email, text, attachment_ids)


@transactional
async def _write_customer_reply(
    application: ApplicationRow, thread: ThreadRow, email: str, text: str, attachment_ids: Sequence[int]
) -> ReplyRow:
    now = datetime.now(UTC)
    reply = await replies.insert_reply(application.id, thread.id, None, "reply", text, email, now)
    await threads.record_reply_time(thread.id, now)
    await counters.reply_added(application.id, now)
    if await threads.set_archived(thread.id, False, now):
        await counters.thread_moved(application.id, thread.id, archived=False)
        await events.announce_threads(events.UPDATED, {application.id: [thread.id]})
    await claim_for_reply(application.id, reply.id, attachment_ids)
    await events.announce_reply(reply)
    await live.announce_reply(reply)
    await notifications.customer_answered(application, thread, reply)
    return reply


async def list_replies(
    application: ApplicationRow,
    on_date: date | None,
    limit: int = 50,
    offset: int = 0,
    kind: str | None = None,
    thread: ThreadRow | None = None,
) -> RepliesPage:
    """A page of an application's replies and notes, newest first, the files of its replies,
    and how many match in all; ``kind`` keeps one type (reply or note), ``thread`` one thread's
    (look it up as the user, with :func:`app.services.feedback.get_thread`).

    Each reply comes with its agent (``reply.user``) and its thread as the list shows it
    (``reply.thread``: its summary's values and its sender's), from one statement. The totals
    of all replies and of a day are kept on write; a type or a thread is counted off an index
    that holds it.
    """
    check_page(limit, offset)
    if kind is not None and kind not in REPLY_TYPES:
        raise ValidationError("The type field must be reply or note.")
    chosen = reply_lists.ReplyFilter(on_date, kind, None if thread is None else thread.id)
    if kind is not None or thread is not None:
        counted = reply_lists.count_matching_query(application.id, chosen)
    elif on_date is not None:
        counted = reply_lists.replies_on_query(application.id, on_date)
    else:
        counted = None
    found = await reply_lists.listing(application.id, chosen, limit, offset, summary_reads(), counted)
    files: dict[int, list[AttachmentRow]] = {}
    for attachment in found.attachments:
        if attachment.reply_id is not None:
            files.setdefault(attachment.reply_id, []).append(attachment)
    return RepliesPage(found.replies, application.reply_count if found.total is None else found.total, files)


@transactional
async def recount_reply_days(application_id: int) -> None:
    """Count an application's replies per UTC day again, from the replies themselves: for
    replies written or moved outside these services (tests, imports)."""
    await replies.recount_reply_days(application_id)
