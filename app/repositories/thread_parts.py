"""What threads are shown with, read for many threads at once: their replies (with their
agents), their files and their replies' files, and their tags' ids when the threads were read
without them (app.services.tag_labels turns ids into labels; a page of threads and one thread
read them with the thread: ``ThreadRow.tag_ids``).

On PostgreSQL the queries go in one statement (:func:`app.repositories.sql.select_together`),
with the thread itself when one thread is read by id; the thread page also reads what it shows
beside the thread in that statement (:func:`thread_with_parts_and`). SQLite runs them in turn,
the files once the replies' ids are known: reading the tag ids with the threads spares it one
statement of a list or a thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.repositories import attachments, replies, tags, threads
from app.repositories.attachments import AttachmentRow, attachment_of
from app.repositories.replies import ReplyRow, reply_of
from app.repositories.sql import Row, postgres, select_together
from app.repositories.threads import ThreadRow, thread_of


@dataclass(slots=True)
class ThreadParts:
    """The replies (oldest first) and files (in upload order) of some threads, and their tag
    ids by thread when they were asked for."""

    replies: list[ReplyRow]
    attachments: list[AttachmentRow]
    tag_ids: dict[int, list[int]] | None


async def parts_of_threads(feedback_ids: Sequence[int], with_tags: bool = True) -> ThreadParts:
    """The replies, files and (``with_tags``) tag ids of threads: one statement on PostgreSQL,
    two or three on SQLite; none for no thread."""
    if not feedback_ids:
        return ThreadParts([], [], {} if with_tags else None)
    if not postgres():
        found = await replies.replies_of_threads(feedback_ids)
        files = await attachments.attachments_of(feedback_ids, [reply.id for reply in found])
        return ThreadParts(found, files, await tags.tag_ids_of_threads(feedback_ids) if with_tags else None)
    rows = await select_together(parts_queries(feedback_ids, with_tags))
    return _parts_of_rows(feedback_ids, with_tags, rows)


async def thread_with_parts(application_id: int, feedback_id: int) -> tuple[ThreadRow, ThreadParts] | None:
    """One thread of an application with its sender and tag ids, and its parts; None when the application
    has no such thread. On PostgreSQL in one statement: the parts of a thread of another
    application are read with it, then dropped unseen."""
    found = await thread_with_parts_and(application_id, feedback_id, ())
    return None if found is None else found[:2]


async def thread_with_parts_and(
    application_id: int, feedback_id: int, also: Sequence[tuple[str, Sequence[object]]]
) -> tuple[ThreadRow, ThreadParts, list[list[Row]]] | None:
    """:func:`thread_with_parts`, and the rows of the queries ``also`` (what a page shows
    beside the thread: its agents, its plan...), in the same statement on PostgreSQL, where
    each costs a round trip of its own otherwise; on SQLite in turn, once the thread is found.
    None when the application has no such thread."""
    if not postgres():
        thread = await threads.thread_by_id(application_id, feedback_id, with_tag_ids=True)
        if thread is None:
            return None
        return thread, await parts_of_threads([feedback_id], with_tags=False), await select_together(also)
    rows = await select_together([*one_thread_queries(application_id, feedback_id), *also])
    if not rows[0]:
        return None
    parts_end = len(rows) - len(also)
    return thread_of(rows[0][0]), _parts_of_rows([feedback_id], False, rows[1:parts_end]), rows[parts_end:]


def one_thread_queries(application_id: int, feedback_id: int) -> list[tuple[str, list[object]]]:
    """The queries :func:`thread_with_parts` reads together: the thread with its tag ids, then
    its replies and files."""
    return [
        threads.thread_by_id_query(application_id, feedback_id, with_tag_ids=True),
        *parts_queries([feedback_id], False),
    ]


def parts_queries(feedback_ids: Sequence[int], with_tags: bool) -> list[tuple[str, list[object]]]:
    """The queries :func:`parts_of_threads` reads together on PostgreSQL."""
    queries = [
        replies.replies_of_threads_query(feedback_ids),
        attachments.files_of_threads_and_their_replies_query(feedback_ids),
    ]
    if with_tags:
        queries.append(tags.tag_links_query(feedback_ids))
    return queries


def _parts_of_rows(
    feedback_ids: Sequence[int], with_tags: bool, rows: Sequence[Sequence[Row]]
) -> ThreadParts:
    return ThreadParts(
        [reply_of(row) for row in rows[0]],
        [attachment_of(row) for row in rows[1]],
        tags.tag_ids_by_thread(feedback_ids, rows[2]) if with_tags else None,
    )
