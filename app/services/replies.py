"""Replies and internal notes, and the reply-time statistics they keep up to date."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta

from tortoise.expressions import F

from app.db import (
    atomic,
    date_parameter,
    dialect,
    execute,
    from_outer_row,
    from_row,
    select_columns,
    set_related,
)
from app.errors import Forbidden, ValidationError
from app.models import (
    REPLY_TYPES,
    Application,
    Attachment,
    Feedback,
    Member,
    OutboundEmail,
    Reply,
    User,
)
from app.services.feedback import check_page
from app.services.mail import outbox
from app.services.plans import includes_internal_notes
from app.services.tags import move_thread_counts

MAX_REPLY_LENGTH = 20_000


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
    if kind not in REPLY_TYPES:
        raise ValidationError("The selected type is invalid.")
    return text, kind  # type: ignore[return-value]


async def create_agent_reply(
    user: User, application: Application, thread: Feedback, message: object, reply_type: object = None
) -> Reply:
    """Add an agent's public reply or internal note to a thread.

    The first public reply sets the thread's ``first_reply_time`` and adds it to the application's
    average, in the same transaction; the conditional update makes a concurrent second reply
    unable to count twice. A public reply also writes its outbox row in that transaction, so it
    is e-mailed to the customer exactly when it exists; notes are never e-mailed.
    """
    text, kind = check_reply(message, reply_type)
    if kind == "note" and not await includes_internal_notes(application):
        raise Forbidden("Your plan does not include internal notes")

    async def work() -> Reply:
        reply = await Reply.create(
            application_id=application.id,
            feedback_id=thread.id,
            user_id=user.id,
            type=kind,
            message=text,
            from_agent=True,
            email=user.email,
        )
        now = reply.created_at
        await count_reply(application.id, now)
        counters: dict[str, F] = {"reply_count": F("reply_count") + 1}
        first = False
        if kind == "reply" and thread.first_reply_time is None:
            # Conditional, so a concurrent first reply cannot be counted twice.
            waited = max(0, int((now - thread.created_at).total_seconds()))
            first = bool(
                await Feedback.filter(id=thread.id, first_reply_time=None).update(
                    first_reply_time=waited, last_reply_at=now, updated_at=now
                )
            )
            if first:
                counters["first_reply_total"] = F("first_reply_total") + waited
                counters["first_reply_count"] = F("first_reply_count") + 1
        if not first:
            await Feedback.filter(id=thread.id).update(last_reply_at=now, updated_at=now)
        await Application.filter(id=application.id).update(**counters)
        if kind == "reply":
            await _queue_email(application, thread, reply)
        return reply

    reply = await atomic(work)
    if kind == "reply":
        outbox.wake_worker()
    return reply


async def _queue_email(application: Application, thread: Feedback, reply: Reply) -> None:
    """Write the outbox row of a public reply; its Message-ID key is fixed here, once."""
    member = thread.member if isinstance(thread.member, Member) else await Member.get(id=thread.member_id)
    await OutboundEmail.create(
        application_id=application.id,
        feedback_id=thread.id,
        reply_id=reply.id,
        to_address=member.email,
        message_id=f"reply-{reply.id}.{secrets.token_hex(8)}",
        next_attempt_at=reply.created_at,
    )


async def add_customer_reply(
    application: Application,
    thread: Feedback,
    email: str,
    message: str,
    attachment_ids: Sequence[int] = (),
) -> Reply:
    """Append the customer's answer (e.g. by e-mail) to a thread, in one transaction.

    The thread's last reply time moves, the application counts the reply, and an archived
    thread comes back to the inbox (moving its application and tag counts).
    """
    text = message.strip()[:MAX_REPLY_LENGTH]
    if not text:
        raise ValidationError("The message field is required.")

    async def work() -> Reply:
        reply = await Reply.create(
            application_id=application.id,
            feedback_id=thread.id,
            user_id=None,
            type="reply",
            message=text,
            from_agent=False,
            email=email,
        )
        now = reply.created_at
        await count_reply(application.id, now)
        await Feedback.filter(id=thread.id).update(last_reply_at=now, updated_at=now)
        counters: dict[str, F] = {"reply_count": F("reply_count") + 1}
        if await Feedback.filter(id=thread.id, archived=True).update(archived=False, updated_at=now):
            await move_thread_counts(thread.id, archived=False)
            counters["open_threads"] = F("open_threads") + 1
            counters["archived_threads"] = F("archived_threads") - 1
        await Application.filter(id=application.id).update(**counters)
        if attachment_ids:
            claimed = await Attachment.filter(
                id__in=list(attachment_ids), application_id=application.id, feedback_id=None, reply_id=None
            ).update(reply_id=reply.id)
            if claimed != len(attachment_ids):
                raise ValidationError("Invalid attachments")
        return reply

    return await atomic(work)


async def list_replies(
    application: Application, on_date: date | None, limit: int = 50, offset: int = 0
) -> tuple[list[Reply], int]:
    """A page of an application's replies and notes, newest first, and how many match in all.

    Each reply comes with its agent (``reply.user``) and its thread with the thread's sender
    (``reply.feedback.member``), from one plain statement (see ``app.db``).
    """
    check_page(limit, offset)
    template, values = replies_page_statement(application, on_date, limit, offset)
    replies = []
    for row in await execute(template, values):
        reply = from_row(Reply, row, "r")
        thread = from_row(Feedback, row, "f")
        set_related(thread, "member", from_row(Member, row, "m"))
        set_related(reply, "feedback", thread)
        set_related(reply, "user", from_outer_row(User, row, "u"))
        replies.append(reply)
    total = application.reply_count if on_date is None else await replies_on(application.id, on_date)
    return replies, total


async def replies_on(application_id: int, on_date: date) -> int:
    """How many replies and notes an application got on a UTC day (kept on write)."""
    rows = await execute(
        "SELECT count FROM reply_days WHERE application_id = {} AND day = {}",
        [application_id, date_parameter(on_date)],
    )
    return rows[0]["count"] if rows else 0


# The UTC day of a reply's created_at, in SQL (SQLite keeps date-times as ISO text in UTC).
_REPLY_DAY = {"sqlite": "substr(created_at, 1, 10)", "postgres": "(created_at AT TIME ZONE 'UTC')::date"}


async def recount_reply_days(application_id: int) -> None:
    """Count an application's replies per UTC day again, from the replies themselves: for
    replies written or moved outside these services (tests, imports)."""
    day = _REPLY_DAY[dialect()]

    async def work() -> None:
        await execute("DELETE FROM reply_days WHERE application_id = {}", [application_id])
        await execute(
            f"INSERT INTO reply_days (application_id, day, count) SELECT application_id, {day}, COUNT(*) "
            f"FROM replies WHERE application_id = {{}} GROUP BY application_id, {day}",
            [application_id],
        )

    await atomic(work)


async def count_reply(application_id: int, written_at: datetime) -> None:
    """One more reply or note on its UTC day; called in the transaction that writes it."""
    await execute(
        "INSERT INTO reply_days (application_id, day, count) VALUES ({}, {}, 1) "
        "ON CONFLICT (application_id, day) DO UPDATE SET count = reply_days.count + 1",
        [application_id, date_parameter(written_at.astimezone(UTC).date())],
    )


def _day(on_date: date) -> tuple[datetime, datetime]:
    """The UTC day's bounds: from its midnight to the next."""
    start = datetime.combine(on_date, time.min, tzinfo=UTC)
    return start, start + timedelta(days=1)


def replies_page_statement(
    application: Application, on_date: date | None, limit: int, offset: int
) -> tuple[str, list[object]]:
    """The statement behind a page of `list_replies` and its values (its ``{}`` are parameters;
    its plan is tested against the indexes)."""
    values: list[object] = [application.id]
    day = ""
    if on_date is not None:
        created_at = Reply._meta.fields_map["created_at"]
        values += [created_at.to_db_value(bound, Reply) for bound in _day(on_date)]
        day = " AND r.created_at >= {} AND r.created_at < {}"
    template = (
        f"SELECT {select_columns(Reply, 'r')}, {select_columns(Feedback, 'f')}, "
        f"{select_columns(Member, 'm')}, {select_columns(User, 'u')} FROM replies r "
        "JOIN feedback f ON f.id = r.feedback_id JOIN members m ON m.id = f.member_id "
        "LEFT JOIN users u ON u.id = r.user_id WHERE r.application_id = {}" + day + " "
        "ORDER BY r.created_at DESC, r.id DESC LIMIT {} OFFSET {}"
    )
    return template, [*values, limit, offset]


async def attachments_of_replies(replies: list[Reply]) -> dict[int, list[Attachment]]:
    """The attachments of many replies, in one query."""
    found: dict[int, list[Attachment]] = {}
    if replies:
        for attachment in await Attachment.filter(reply_id__in=[r.id for r in replies]).order_by("id"):
            found.setdefault(attachment.reply_id, []).append(attachment)
    return found
