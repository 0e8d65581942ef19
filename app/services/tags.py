"""Tags of an application, their colours, and the thread counts kept on every write."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime

from tortoise.exceptions import IntegrityError
from tortoise.expressions import F, Subquery
from tortoise.transactions import in_transaction

from app.db import atomic, execute, from_row, parameters, select_columns, select_models
from app.errors import ValidationError
from app.models import Application, Feedback, FeedbackTag, Tag

PALETTE = (
    "#e5484d",
    "#f76b15",
    "#ffc53d",
    "#46a758",
    "#12a594",
    "#0090ff",
    "#3e63dd",
    "#8e4ec6",
    "#d6409f",
    "#978365",
    "#687076",
    "#29a383",
)
MAX_TAG_LENGTH = 64
MAX_TAGS = 20


def color_for(name: str) -> str:
    """A stable colour for a tag name, so a new tag looks the same everywhere."""
    digest = hashlib.blake2s(name.encode(), digest_size=2).digest()
    return PALETTE[int.from_bytes(digest, "big") % len(PALETTE)]


def normalize_tag(name: str) -> str:
    """Tags are compared and stored trimmed, single-spaced and lower-case."""
    return " ".join(name.split()).lower()


async def list_tags(application_id: int) -> list[Tag]:
    """Every tag of an application, by name (a plain statement: every inbox page reads them)."""
    return await select_models(
        Tag, "t", "WHERE t.application_id = {} ORDER BY t.name, t.id", [application_id]
    )


async def find_tag_id(application_id: int, name: str) -> int | None:
    """The id of an application's tag named ``name`` (normalized), None when it has none."""
    rows = await execute(
        "SELECT id FROM tags WHERE application_id = {} AND name = {}", [application_id, normalize_tag(name)]
    )
    return rows[0]["id"] if rows else None


async def ensure_tags(application_id: int, names: Sequence[str]) -> list[Tag]:
    """Create the tags that do not exist yet (writing first) and return all of them."""
    await Tag.bulk_create(
        [Tag(application_id=application_id, name=name, color=color_for(name)) for name in names],
        ignore_conflicts=True,
    )
    return await Tag.filter(application_id=application_id, name__in=list(names))


async def move_thread_counts(feedback_id: int, archived: bool) -> None:
    """Move a thread's count on each of its tags between open and archived."""
    tag_ids = await FeedbackTag.filter(feedback_id=feedback_id).values_list("tag_id", flat=True)
    if not tag_ids:
        return
    if archived:
        await Tag.filter(id__in=tag_ids).update(
            open_count=F("open_count") - 1, archived_count=F("archived_count") + 1
        )
    else:
        await Tag.filter(id__in=tag_ids).update(
            open_count=F("open_count") + 1, archived_count=F("archived_count") - 1
        )


async def tags_of_threads(feedback_ids: Sequence[int]) -> dict[int, list[Tag]]:
    """The tags of threads, by thread id and then by name, in one plain statement.

    Each tag becomes one object however many of the threads carry it (a page's threads share a
    few tags); building the ORM's statement and a model per link cost a third of a list's time.
    """
    found: dict[int, list[Tag]] = {feedback_id: [] for feedback_id in feedback_ids}
    if not found:
        return found
    rows = await execute(
        f"SELECT l.feedback_id AS thread, {select_columns(Tag, 't')} FROM feedback_tags l "
        f"JOIN tags t ON t.id = l.tag_id WHERE l.feedback_id IN ({parameters(len(found))})",
        list(found),
    )
    tags: dict[int, Tag] = {}
    for row in rows:
        tag = tags.get(row["t.id"])
        if tag is None:
            tag = tags[row["t.id"]] = from_row(Tag, row, "t")
        found[row["thread"]].append(tag)
    for thread_tags in found.values():
        thread_tags.sort(key=lambda tag: (tag.name, tag.id))
    return found


def check_tag_name(name: object) -> str:
    """Validate a tag name typed by an agent and return it normalized."""
    text = normalize_tag(name) if isinstance(name, str) else ""
    if not text:
        raise ValidationError("Enter a tag name.")
    if len(text) > MAX_TAG_LENGTH:
        raise ValidationError("A tag name must not be longer than %(max)d characters.", max=MAX_TAG_LENGTH)
    return text


async def _lock_thread(feedback_id: int) -> bool:
    """Touch the thread first: it takes the write lock (SQLite) or the row lock (PostgreSQL), so a
    concurrent archive waits and the archived flag read next stays true until commit."""
    await Feedback.filter(id=feedback_id).update(updated_at=datetime.now(UTC))
    archived = await Feedback.filter(id=feedback_id).values_list("archived", flat=True)
    return bool(archived and archived[0])


async def add_tag_to_thread(application: Application, thread: Feedback, name: object) -> Tag:
    """Tag a thread (creating the tag if needed) and count it as open or archived, in one transaction.

    Adding a tag the thread already has changes nothing.
    """
    text = check_tag_name(name)

    async def work() -> Tag:
        archived = await _lock_thread(thread.id)
        tag = (await ensure_tags(application.id, [text]))[0]
        try:
            async with in_transaction():  # a savepoint: a duplicate link must not abort the unit
                await FeedbackTag.create(feedback_id=thread.id, tag_id=tag.id)
        except IntegrityError:
            return tag
        if await FeedbackTag.filter(feedback_id=thread.id).count() > MAX_TAGS:
            raise ValidationError("A thread can have at most %(max)d tags.", max=MAX_TAGS)
        counter = "archived_count" if archived else "open_count"
        await Tag.filter(id=tag.id).update(**{counter: F(counter) + 1})
        return tag

    return await atomic(work)


async def remove_tag_from_thread(application: Application, thread: Feedback, tag_id: int) -> None:
    """Untag a thread and uncount it, in one transaction; removing a tag it lacks changes nothing."""

    async def work() -> None:
        archived = await _lock_thread(thread.id)
        tag_ids = Subquery(Tag.filter(id=tag_id, application_id=application.id).values("id"))
        removed = await FeedbackTag.filter(feedback_id=thread.id, tag_id__in=tag_ids).delete()
        if removed:
            counter = "archived_count" if archived else "open_count"
            await Tag.filter(id=tag_id).update(**{counter: F(counter) - 1})

    await atomic(work)
