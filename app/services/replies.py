"""Replies and internal notes, and the reply-time statistics they keep up to date."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from tortoise.expressions import F

from app.db import atomic
from app.errors import Forbidden, ValidationError
from app.models import REPLY_TYPES, Application, Attachment, Feedback, Reply, User
from app.services.feedback import check_page
from app.services.plans import includes_internal_notes

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
    unable to count twice.
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
        await Feedback.filter(id=thread.id).update(last_reply_at=now, updated_at=now)
        counters: dict[str, F] = {"reply_count": F("reply_count") + 1}
        if kind == "reply":
            waited = max(0, int((now - thread.created_at).total_seconds()))
            if await Feedback.filter(id=thread.id, first_reply_time=None).update(first_reply_time=waited):
                counters["first_reply_total"] = F("first_reply_total") + waited
                counters["first_reply_count"] = F("first_reply_count") + 1
        await Application.filter(id=application.id).update(**counters)
        return reply

    return await atomic(work)


async def list_replies(
    application: Application, on_date: date | None, limit: int = 50, offset: int = 0
) -> tuple[list[Reply], int]:
    """A page of an application's replies and notes, newest first, and how many match in all."""
    check_page(limit, offset)
    query = Reply.filter(application_id=application.id)
    if on_date is not None:
        start = datetime.combine(on_date, time.min, tzinfo=UTC)
        query = query.filter(created_at__gte=start, created_at__lt=start + timedelta(days=1))
        total = await query.count()
    else:
        total = application.reply_count
    replies = (
        await query.select_related("user", "feedback__member")
        .order_by("-created_at", "-id")
        .offset(offset)
        .limit(limit)
    )
    return replies, total


async def attachments_of_replies(replies: list[Reply]) -> dict[int, list[Attachment]]:
    """The attachments of many replies, in one query."""
    found: dict[int, list[Attachment]] = {}
    if replies:
        for attachment in await Attachment.filter(reply_id__in=[r.id for r in replies]).order_by("id"):
            found.setdefault(attachment.reply_id, []).append(attachment)
    return found
