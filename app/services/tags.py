"""Tags of an application, their colours, and the thread counts kept on every write."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from tortoise.expressions import F

from app.models import FeedbackTag, Tag

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
    """Every tag of an application, by name."""
    return await Tag.filter(application_id=application_id).order_by("name", "id")


async def ensure_tags(application_id: int, names: Sequence[str]) -> list[Tag]:
    """Create the tags that do not exist yet (writing first) and return all of them."""
    await Tag.bulk_create(
        [Tag(application_id=application_id, name=name, color=color_for(name)) for name in names],
        ignore_conflicts=True,
    )
    return await Tag.filter(application_id=application_id, name__in=list(names))


async def tag_new_thread(application_id: int, feedback_id: int, names: Sequence[str]) -> None:
    """Link a new (open) thread to its tags and count it on each of them."""
    if not names:
        return
    tags = await ensure_tags(application_id, names)
    await FeedbackTag.bulk_create([FeedbackTag(feedback_id=feedback_id, tag_id=tag.id) for tag in tags])
    await Tag.filter(id__in=[tag.id for tag in tags]).update(open_count=F("open_count") + 1)


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
