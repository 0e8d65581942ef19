"""The counters Earful keeps on write, moved in one place by every writer.

Lists and pages never count by scanning: an application's open and archived threads and its
replies, each tag's open and archived threads, the replies of each UTC day and the first-reply
statistics are stored, and every change that moves them calls these functions inside its own
transaction (a submit, a reply, archive and unarchive, a customer's answer that reopens a
thread, tagging and untagging, the seed's bulk load; deletion next). Nothing else writes those
columns, so a new writer cannot forget one.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime

from app.repositories import applications, replies, tags


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
    tag_ids = await tags.tag_ids_of_thread(feedback_id)
    await tags.add_to_counts({tag_id: (-step, step) for tag_id in tag_ids})


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
