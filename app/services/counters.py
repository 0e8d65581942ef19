"""The counters Earful keeps on write, moved in one place by every writer.

Lists and pages never count by scanning: an application's open and archived threads and its
replies, each tag's open and archived threads, the replies of each UTC day and the first-reply
statistics are stored, and every change that moves them calls these functions inside its own
transaction (a submit, a reply, archive and unarchive, a customer's answer that reopens a
thread, tagging and untagging, the seed's bulk load, deletion). Nothing else writes those
columns, so a new writer cannot forget one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from app.repositories import applications, replies, tags

if TYPE_CHECKING:
    from app.repositories.deletion import DoomedThread


async def threads_added(application_id: int, opened: int = 0, archived: int = 0) -> None:
    """New threads of an application, open or archived."""
    await applications.add_to_counters(application_id, open_threads=opened, archived_threads=archived)


async def tag_links_added(moves: Mapping[int, tuple[int, int]]) -> None:
    """Threads gained (or, negative, lost) by tags: tag id -> (open threads, archived threads)."""
    await tags.add_to_counts(moves)


async def thread_moved(application_id: int, feedback_id: int, archived: bool) -> None:
    """A thread was archived (or unarchived): it moves between its application's open and
    archived threads, and between those of each of its tags."""
    step = 1 if archived else -1
    await applications.add_to_counters(application_id, open_threads=-step, archived_threads=step)
    tag_ids = (await tags.tag_ids_of_threads([feedback_id]))[feedback_id]
    await tags.add_to_counts({tag_id: (-step, step) for tag_id in tag_ids})


async def threads_moved(application_id: int, feedback_ids: Sequence[int], archived: bool) -> None:
    """Threads were archived (or unarchived) together (a bulk action): :func:`thread_moved` for
    each, in three statements whatever their number."""
    if not feedback_ids:
        return
    step = len(feedback_ids) if archived else -len(feedback_ids)
    await applications.add_to_counters(application_id, open_threads=-step, archived_threads=step)
    per_tag = await tags.links_per_tag(feedback_ids)
    sign = 1 if archived else -1
    await tags.add_to_counts({tag_id: (-sign * count, sign * count) for tag_id, count in per_tag.items()})


async def thread_tagged(tag_id: int, archived: bool, step: int = 1) -> None:
    """A thread gained (``step`` 1) or lost (-1) a tag."""
    await tags.add_to_counts({tag_id: (0, step) if archived else (step, 0)})


async def replies_added(
    application_id: int, days: Mapping[date, int], first_reply_total: int = 0, first_reply_count: int = 0
) -> None:
    """New replies and notes, by UTC day, and the first public replies among them (their waits
    in seconds, summed, and how many)."""
    await applications.add_to_counters(
        application_id,
        reply_count=sum(days.values()),
        first_reply_total=first_reply_total,
        first_reply_count=first_reply_count,
    )
    await replies.add_to_reply_days(application_id, days)


async def reply_added(application_id: int, written_at: datetime, first_reply_time: int | None = None) -> None:
    """One new reply or note; ``first_reply_time`` when it is its thread's first public reply."""
    first = first_reply_time is not None
    await replies_added(
        application_id,
        {written_at.astimezone(UTC).date(): 1},
        first_reply_total=first_reply_time or 0,
        first_reply_count=1 if first else 0,
    )


async def replies_removed(application_id: int, days: Mapping[date, int]) -> None:
    """Replies that were never a thread's first public reply (a customer's answers) were
    deleted, counted by UTC day: the application's reply count and reply days go down."""
    if not days:
        return
    await applications.add_to_counters(application_id, reply_count=-sum(days.values()))
    await replies.add_to_reply_days(application_id, {day: -count for day, count in days.items()})
    await replies.drop_empty_reply_days(application_id)


async def threads_removed(
    application_id: int,
    removed: Sequence[DoomedThread],
    reply_days: Mapping[date, int],
    tag_links: Sequence[tuple[int, int]],
) -> None:
    """Threads of an application were deleted, with their replies (counted by UTC day) and
    their tag links ((tag id, thread id)): everything they were counted in goes down."""
    archived = {thread.id: thread.archived for thread in removed}
    first = [thread.first_reply_time for thread in removed if thread.first_reply_time is not None]
    archived_count = sum(archived.values())
    await applications.add_to_counters(
        application_id,
        open_threads=-(len(removed) - archived_count),
        archived_threads=-archived_count,
        reply_count=-sum(reply_days.values()),
        first_reply_total=-sum(first),
        first_reply_count=-len(first),
    )
    if reply_days:
        await replies.add_to_reply_days(application_id, {day: -count for day, count in reply_days.items()})
        await replies.drop_empty_reply_days(application_id)
    lost_open = Counter(tag_id for tag_id, feedback_id in tag_links if not archived[feedback_id])
    lost_archived = Counter(tag_id for tag_id, feedback_id in tag_links if archived[feedback_id])
    await tags.add_to_counts(
        {tag_id: (-lost_open[tag_id], -lost_archived[tag_id]) for tag_id in lost_open | lost_archived}
    )
