"""What threads are shown with, read for many threads at once: their replies (with their
agents), their files and their replies' files, and their tags.

On PostgreSQL the three queries go in one statement (:func:`app.repositories.sql.select_together`):
a list of threads, one thread and the thread page each saved two round trips. SQLite runs them
in turn, the files once the replies' ids are known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.repositories import attachments, replies, tags
from app.repositories.attachments import AttachmentRow, attachment_of
from app.repositories.replies import ReplyRow, reply_of
from app.repositories.sql import postgres, select_together
from app.repositories.tags import TagRow


@dataclass(slots=True)
class ThreadParts:
    """The replies (oldest first) and files (in upload order) of some threads, and their tags
    by thread when they were asked for."""

    replies: list[ReplyRow]
    attachments: list[AttachmentRow]
    tags: dict[int, list[TagRow]] | None


async def parts_of_threads(feedback_ids: Sequence[int], with_tags: bool = True) -> ThreadParts:
    """The replies, files and (``with_tags``) tags of threads: one statement on PostgreSQL,
    two or three on SQLite; none for no thread."""
    if not feedback_ids:
        return ThreadParts([], [], {} if with_tags else None)
    if not postgres():
        found = await replies.replies_of_threads(feedback_ids)
        files = await attachments.attachments_of(feedback_ids, [reply.id for reply in found])
        return ThreadParts(found, files, await tags.tags_of_threads(feedback_ids) if with_tags else None)
    queries = [
        replies.replies_of_threads_query(feedback_ids),
        attachments.files_of_threads_and_their_replies_query(feedback_ids),
    ]
    if with_tags:
        queries.append(tags.tags_of_threads_query(feedback_ids))
    rows = await select_together(queries)
    return ThreadParts(
        [reply_of(row) for row in rows[0]],
        [attachment_of(row) for row in rows[1]],
        tags.tags_by_thread(feedback_ids, rows[2]) if with_tags else None,
    )
