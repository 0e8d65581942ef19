"""Feedback threads: the one write path that creates them, and the reads that list them."""

from __future__ import annotations

import functools
import ipaddress
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tortoise.exceptions import BaseORMException
from tortoise.expressions import F

from app.db import (
    atomic,
    dialect,
    execute,
    from_outer_row,
    from_row,
    parameters,
    select_columns,
    set_related,
)
from app.errors import DomainError, NotFound, ValidationError
from app.i18n import N_, normalize_language
from app.models import SENTIMENTS, Application, Attachment, Feedback, Member, Reply, Tag, User
from app.services import sentiment as sentiment_analysis
from app.services.attachments import MAX_ATTACHMENTS_PER_THREAD
from app.services.tags import MAX_TAG_LENGTH, MAX_TAGS, move_thread_counts, normalize_tag, tags_of_threads
from app.services.thread_writer import NewThread, write_thread
from app.services.validation import MAX_ID, normalize_email, parse_int, storable

MIN_MESSAGE_LENGTH = 3
MAX_MESSAGE_LENGTH = 20_000
MAX_PROPERTIES_BYTES = 64 * 1024
MAX_LIST_LIMIT = 500


class UpdateFailed(DomainError):
    """The database refused to save a change to a thread."""

    status = 500


@dataclass(frozen=True)
class Submission:
    """A validated piece of feedback, from the capture API or any other channel."""

    email: str
    message: str
    name: str = ""
    sentiment: str | None = None
    url: str | None = None
    tags: tuple[str, ...] = ()
    properties: dict | list = field(default_factory=list)
    attachments: tuple[int, ...] = ()
    nps: int | None = None
    language: str = "en"
    language_given: bool = True  # False: the client sent none, so the sentiment detects it
    ip_address: str = ""
    user_agent: str = ""


@dataclass
class ThreadDetails:
    """A thread with everything its representation shows, loaded in a fixed number of queries."""

    thread: Feedback
    replies: list[Reply] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    reply_attachments: dict[int, list[Attachment]] = field(default_factory=dict)
    tags: list[Tag] = field(default_factory=list)


def _parse_tags(value: object) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                raise ValidationError(N_("Invalid tags")) from None
        else:
            value = text.split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(N_("Invalid tags"))
    names = list(dict.fromkeys(normalize_tag(item) for item in value if item.strip()))
    if len(names) > MAX_TAGS or any(len(name) > MAX_TAG_LENGTH for name in names):
        raise ValidationError(N_("Invalid tags"))
    return tuple(names)


def _parse_properties(value: object) -> dict | list:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise ValidationError(N_("Invalid properties")) from None
    if not isinstance(value, dict | list):
        raise ValidationError(N_("Invalid properties"))
    if len(json.dumps(value)) > MAX_PROPERTIES_BYTES:
        raise ValidationError(N_("Invalid properties"))
    return storable(value)  # type: ignore[return-value]


def _parse_attachments(value: object) -> tuple[int, ...]:
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise ValidationError(N_("Invalid attachments")) from None
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value or len(value) > MAX_ATTACHMENTS_PER_THREAD:
        raise ValidationError(N_("Invalid attachments"))
    ids = [parse_int(item) for item in value]
    if any(item is None or not 1 <= item <= MAX_ID for item in ids):
        raise ValidationError(N_("Invalid attachments"))
    return tuple(dict.fromkeys(ids))  # type: ignore[arg-type]


def _optional_text(value: object, limit: int, error: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationError(error)
    return value.strip()[:limit]


def parse_submission(body: Mapping[str, object], caller_ip: str, user_agent: str) -> Submission:
    """Validate a capture submit body in the specification's order: e-mail, message, then the rest."""
    raw_email = body.get("email")
    if raw_email is None or (isinstance(raw_email, str) and not raw_email.strip()):
        raise ValidationError(N_("Your email address is required"))
    email = normalize_email(raw_email)
    if email is None:
        raise ValidationError(N_("Invalid email address"))
    raw_message = body.get("message")
    if raw_message is not None and not isinstance(raw_message, str):
        raise ValidationError(N_("Your message is required"))
    message = (raw_message or "").strip()
    if not message:
        raise ValidationError(N_("Your message is required"))
    if len(message) < MIN_MESSAGE_LENGTH:
        raise ValidationError(N_("Your message is too short"))
    if len(message) > MAX_MESSAGE_LENGTH:
        raise ValidationError(N_("Your message is too long"))
    sentiment = body.get("sentiment")
    if sentiment in (None, ""):
        sentiment = None
    elif sentiment not in SENTIMENTS:
        raise ValidationError(N_("Invalid sentiment"))
    nps = body.get("nps")
    if nps in (None, ""):
        nps = None
    else:
        nps = parse_int(nps)
        if nps is None or not 0 <= nps <= 10:
            raise ValidationError(N_("Invalid NPS rating"))
    ip = _optional_text(body.get("ip"), 64, N_("Invalid IP address"))
    if ip:
        try:
            ip = str(ipaddress.ip_address(ip))
        except ValueError:
            raise ValidationError(N_("Invalid IP address")) from None
    return Submission(
        email=email,
        message=message,
        name=_optional_text(body.get("name"), 200, N_("Invalid name")),
        sentiment=sentiment,  # type: ignore[arg-type]
        url=_optional_text(body.get("url"), 2048, N_("Invalid page URL")) or None,
        tags=_parse_tags(body.get("tags")),
        properties=_parse_properties(body.get("properties")),
        attachments=_parse_attachments(body.get("attachments")),
        nps=nps,
        language=normalize_language(body.get("language")),
        language_given=body.get("language") not in (None, ""),
        ip_address=ip or caller_ip,
        user_agent=user_agent[:1000],
    )


async def create_thread(application: Application, submission: Submission) -> Feedback:
    """Create a thread with its sender, tags and attachments, committed before it returns.

    The sentiment is computed before the thread is written, so it is never visible without one.
    Called inside a transaction, the thread is part of it; otherwise it is written by the
    worker's group commit (:mod:`app.services.thread_writer`).
    """
    label = submission.sentiment or sentiment_analysis.analyze(
        submission.message, submission.language if submission.language_given else None
    )
    return await write_thread(NewThread(application.id, submission, label))


async def load_details(threads: Sequence[Feedback]) -> list[ThreadDetails]:
    """Load replies (with their agents), attachments and tags of many threads at once: three
    plain statements and the tags' one, whatever the number of threads (see ``app.db``)."""
    details = {thread.id: ThreadDetails(thread) for thread in threads}
    if not details:
        return []
    ids = list(details)
    marks = parameters(len(ids))
    rows = await execute(
        f"SELECT {select_columns(Reply, 'r')}, {select_columns(User, 'u')} FROM replies r "
        f"LEFT JOIN users u ON u.id = r.user_id WHERE r.feedback_id IN ({marks}) ORDER BY r.id",
        ids,
    )
    thread_of_reply: dict[int, int] = {}
    for row in rows:
        reply = from_row(Reply, row, "r")
        set_related(reply, "user", from_outer_row(User, row, "u"))
        details[reply.feedback_id].replies.append(reply)
        thread_of_reply[reply.id] = reply.feedback_id
    attached = f"a.feedback_id IN ({marks})"
    if thread_of_reply:
        attached += f" OR a.reply_id IN ({parameters(len(thread_of_reply))})"
    rows = await execute(
        f"SELECT {select_columns(Attachment, 'a')} FROM attachments a WHERE {attached} ORDER BY a.id",
        [*ids, *thread_of_reply],
    )
    for row in rows:
        attachment = from_row(Attachment, row, "a")
        if attachment.feedback_id in details:
            details[attachment.feedback_id].attachments.append(attachment)
        if attachment.reply_id in thread_of_reply:
            owner = details[thread_of_reply[attachment.reply_id]]
            owner.reply_attachments.setdefault(attachment.reply_id, []).append(attachment)
    for feedback_id, tags in (await tags_of_threads(ids)).items():
        details[feedback_id].tags = tags
    return [details[thread.id] for thread in threads]


def check_page(limit: int, offset: int) -> None:
    """The paging bounds shared by every list."""
    if limit < 1:
        raise ValidationError("The limit field must be at least 1.")
    if limit > MAX_LIST_LIMIT:
        raise ValidationError("The limit field must not be greater than %(max)d.", max=MAX_LIST_LIMIT)
    if offset < 0:
        raise ValidationError("The offset field must be at least 0.")


@functools.cache
def select_threads() -> str:
    """The ``SELECT`` of threads (``f``) joined with their senders (``m``); to be followed by
    ``WHERE``, its rows read by :func:`thread_of_row`."""
    return (
        f"SELECT {select_columns(Feedback, 'f')}, {select_columns(Member, 'm')} "
        "FROM feedback f JOIN members m ON m.id = f.member_id"
    )


def newest_first() -> str:
    """The ``ORDER BY`` of threads (``f``) newest first, in the form an index by application and
    state serves on the database in use.

    On PostgreSQL ``-id``: ordered by ``id``, it walked the primary key backwards and filtered by
    state, on the assumption that archived threads are spread evenly among the ids, while the
    newest threads are mostly open, so a page of archived threads read every newer open one
    (30,000 in 12-17 ms). The primary key cannot serve ``-id``; the indexes of migration 0007
    can. SQLite reads the (application, archived, id) indexes of the models by itself.
    """
    return "ORDER BY -f.id" if dialect() == "postgres" else "ORDER BY f.id DESC"


_REVERSED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def id_condition(operator: str, value: int) -> tuple[str, int]:
    """The condition ``f.id <operator> value`` and its parameter, written as the index that
    :func:`newest_first` reads can bound it (``-f.id`` on PostgreSQL)."""
    if dialect() == "postgres":
        return f"-f.id {_REVERSED[operator]} {{}}", -value
    return f"f.id {operator} {{}}", value


def thread_of_row(row: Any) -> Feedback:
    """A thread and its sender from a row of :func:`select_threads`."""
    thread = from_row(Feedback, row, "f")
    set_related(thread, "member", from_row(Member, row, "m"))
    return thread


def threads_page_statement(
    application: Application, archived: bool, limit: int, offset: int
) -> tuple[str, list[object]]:
    """The statement (for :func:`app.db.execute`) of a page of an application's open (or
    archived) threads with their senders, newest first."""
    return (
        f"{select_threads()} WHERE f.application_id = {{}} AND f.archived = {{}} {newest_first()} "
        "LIMIT {} OFFSET {}",
        [application.id, archived, limit, offset],
    )


async def list_threads(
    application: Application, archived: bool, limit: int = 50, offset: int = 0
) -> tuple[list[ThreadDetails], int]:
    """A page of an application's open (or archived) threads, newest first, and their total."""
    check_page(limit, offset)
    rows = await execute(*threads_page_statement(application, archived, limit, offset))
    threads = [thread_of_row(row) for row in rows]
    total = application.archived_threads if archived else application.open_threads
    return await load_details(threads), total


async def get_thread(application: Application, feedback_id: int) -> Feedback:
    """One thread of an application; any other id is 'Invalid feedback'."""
    rows = await execute(
        select_threads() + " WHERE f.id = {} AND f.application_id = {}",
        [feedback_id, application.id],
    )
    if not rows:
        raise NotFound("Invalid feedback")
    return thread_of_row(rows[0])


async def get_thread_details(application: Application, feedback_id: int) -> ThreadDetails:
    """One thread with its replies, attachments and tags."""
    return (await load_details([await get_thread(application, feedback_id)]))[0]


def _archive_work(
    application: Application, thread: Feedback, archived: bool
) -> Callable[[], Awaitable[None]]:
    """The writes that archive or unarchive a thread, to run inside a transaction."""

    async def work() -> None:
        changed = (
            await Feedback.filter(id=thread.id)
            .exclude(archived=archived)
            .update(archived=archived, updated_at=datetime.now(UTC))
        )
        if not changed:
            return
        await move_thread_counts(thread.id, archived)
        step = 1 if archived else -1
        await Application.filter(id=application.id).update(
            open_threads=F("open_threads") - step, archived_threads=F("archived_threads") + step
        )

    return work


def check_sentiment(label: object) -> str:
    """An agent's sentiment label, or the management API's validation error."""
    if not isinstance(label, str) or label not in SENTIMENTS:
        raise ValidationError("The selected sentiment is invalid.")
    return label


def _sentiment_work(thread: Feedback, label: str) -> Callable[[], Awaitable[None]]:
    """The write that records an agent's sentiment, marked corrected so recomputation keeps it."""

    async def work() -> None:
        await Feedback.filter(id=thread.id).update(
            sentiment=label, sentiment_corrected=True, updated_at=datetime.now(UTC)
        )

    return work


async def update_thread(
    application: Application, thread: Feedback, archived: bool | None = None, sentiment: str | None = None
) -> Feedback:
    """Archive/unarchive and/or correct the sentiment of a thread, in one transaction."""
    label = None if sentiment is None else check_sentiment(sentiment)
    steps = []
    if archived is not None:
        steps.append(_archive_work(application, thread, archived))
    if label is not None:
        steps.append(_sentiment_work(thread, label))

    async def work() -> None:
        for step in steps:
            await step()

    try:
        await atomic(work)
    except BaseORMException:
        raise UpdateFailed("Could not update feedback") from None
    return await get_thread(application, thread.id)


async def set_archived(application: Application, thread: Feedback, archived: bool) -> Feedback:
    """Archive or unarchive a thread, moving its counts on the application and its tags."""
    return await update_thread(application, thread, archived=archived)


async def set_sentiment(application: Application, thread: Feedback, label: str) -> Feedback:
    """An agent's correction of a thread's sentiment; recomputation never overwrites it."""
    return await update_thread(application, thread, sentiment=label)


def _sentiment_language(thread: Feedback) -> str | None:
    """The thread's language for the analyzer; "en" may be the default, so detect it then."""
    return None if thread.language in ("", "en") else thread.language


async def recompute_sentiment(application: Application, thread: Feedback | None = None) -> int:
    """Label one thread (or all of an application's) again, skipping agents' corrections.

    Returns how many threads changed label. Threads go in pages of 500 by id, so memory stays flat.
    """
    changed = 0
    last_id = 0
    while True:
        query = Feedback.filter(application_id=application.id, sentiment_corrected=False, id__gt=last_id)
        if thread is not None:
            query = query.filter(id=thread.id)
        page = await query.order_by("id").limit(500).only("id", "message", "language", "sentiment")
        if not page:
            return changed
        for row in page:
            label = sentiment_analysis.analyze(row.message, _sentiment_language(row))
            if label != row.sentiment:
                # Guarded by sentiment_corrected=False: a correction made meanwhile wins.
                changed += await Feedback.filter(id=row.id, sentiment_corrected=False).update(sentiment=label)
        last_id = page[-1].id


async def recompute_all_sentiment(application_id: int | None = None) -> tuple[int, int]:
    """Label every application's threads again (or one application's): after an upgrade that
    improved the analyzers, older threads get the new labels; agents' corrections are kept.

    Returns how many applications were read and how many threads changed label.
    """
    query = Application.all().order_by("id")
    if application_id is not None:
        query = query.filter(id=application_id)
    applications = await query
    if application_id is not None and not applications:
        raise NotFound("Invalid application")
    changed = 0
    for application in applications:
        changed += await recompute_sentiment(application)
    return len(applications), changed
