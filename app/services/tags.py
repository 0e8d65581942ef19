"""Tags of an application, their colours, and the thread counts kept on every write."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime

from app.db import transactional
from app.errors import NotFound, ValidationError
from app.repositories import tags, threads
from app.repositories.applications import ApplicationRow
from app.repositories.tags import TagRow
from app.repositories.threads import ThreadRow
from app.services import counters
from app.services.validation import storable
from app.services.webhooks import events

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
SEARCH_LIMIT = 20


def color_for(name: str) -> str:
    """A stable colour for a tag name, so a new tag looks the same everywhere."""
    digest = hashlib.blake2s(name.encode(), digest_size=2).digest()
    return PALETTE[int.from_bytes(digest, "big") % len(PALETTE)]


def normalize_tag(name: str) -> str:
    """Tags are compared and stored trimmed, single-spaced and lower-case."""
    return " ".join(name.split()).lower()


async def list_tags(application_id: int) -> list[TagRow]:
    """Every tag of an application, by name."""
    return await tags.tags_of_application(application_id)


async def find_tag_id(application_id: int, name: str) -> int | None:
    """The id of an application's tag named ``name`` (normalized), None when it has none."""
    return await tags.tag_id(application_id, normalize_tag(name))


async def find_tag(application_id: int, name: str) -> TagRow | None:
    """An application's tag named ``name`` (normalized) with its thread counts, None when it has none."""
    return await tags.tag_named(application_id, normalize_tag(name))


async def search_tags(application_id: int, text: object, limit: int = SEARCH_LIMIT) -> list[TagRow]:
    """At most ``limit`` tags of an application whose name contains ``text``, by name: what a
    tag picker offers (or the tags page shows), instead of every tag of the application."""
    query = storable(normalize_tag(text)[:MAX_TAG_LENGTH]) if isinstance(text, str) else ""
    return await tags.search_tags(application_id, query, limit)


async def ensure_tags(application_id: int, names: Sequence[str], most: int | None = None) -> list[TagRow]:
    """Create the tags that do not exist yet and return all of them (inside a transaction).

    With ``most``, an application that has that many tags gets no new one: the new names are
    left out of the answer, silently, because a submit's feedback matters more than its tags.
    Concurrent PostgreSQL transactions may each take the last places, so the count can pass
    ``most`` by a few batches' tags; it stays bounded.
    """
    if most is None:
        return await tags.ensure_tags(
            application_id, {name: color_for(name) for name in names}, datetime.now(UTC)
        )
    found = await tags.tags_named(application_id, names)
    known = {tag.name for tag in found}
    new = [name for name in names if name not in known]
    room = most - await tags.count_up_to(application_id, most) if new else 0
    if room <= 0:
        return found
    created = await tags.ensure_tags(
        application_id, {name: color_for(name) for name in new[:room]}, datetime.now(UTC)
    )
    return [*found, *created]


async def tags_of_threads(feedback_ids: Sequence[int]) -> dict[int, list[TagRow]]:
    """The tags of threads, by thread id and then by name."""
    return await tags.tags_of_threads(feedback_ids)


def check_tag_name(name: object) -> str:
    """Validate a tag name typed by an agent and return it normalized."""
    text = normalize_tag(name) if isinstance(name, str) else ""
    if not text:
        raise ValidationError("Enter a tag name.")
    if len(text) > MAX_TAG_LENGTH:
        raise ValidationError("A tag name must not be longer than %(max)d characters.", max=MAX_TAG_LENGTH)
    return text


async def _lock_thread(feedback_id: int) -> bool:
    """Touch the thread first: it takes its row lock (PostgreSQL), so a concurrent archive waits
    and the archived flag read next stays true until commit."""
    archived = await threads.touch(feedback_id, datetime.now(UTC))
    if archived is None:
        raise NotFound("Invalid feedback")
    return archived


@transactional
async def add_tag_to_thread(
    application: ApplicationRow, thread: ThreadRow, name: object, most: int | None = None
) -> TagRow:
    """Tag a thread (creating the tag if needed) and count it as open or archived, in one transaction.

    Adding a tag the thread already has changes nothing. With ``most``, an application that has
    that many tags gets no new one: unlike a submit's tags, an agent typed this one and is told.
    """
    text = check_tag_name(name)
    archived = await _lock_thread(thread.id)
    found = await ensure_tags(application.id, [text], most)
    if not found:
        raise ValidationError(
            "This application has %(max)d tags, the most it may have: choose an existing tag or delete one.",
            max=most,
        )
    tag = found[0]
    if not await tags.link(thread.id, tag.id):
        return tag
    if await tags.links_of_thread(thread.id) > MAX_TAGS:
        raise ValidationError("A thread can have at most %(max)d tags.", max=MAX_TAGS)
    await counters.thread_tagged(tag.id, archived)
    await events.announce_threads(events.UPDATED, {application.id: [thread.id]})
    return tag


@transactional
async def remove_tag_from_thread(application: ApplicationRow, thread: ThreadRow, tag_id: int) -> None:
    """Untag a thread and uncount it, in one transaction; removing a tag it lacks changes nothing."""
    archived = await _lock_thread(thread.id)
    if await tags.unlink(application.id, thread.id, tag_id):
        await counters.thread_tagged(tag_id, archived, step=-1)
        await events.announce_threads(events.UPDATED, {application.id: [thread.id]})
