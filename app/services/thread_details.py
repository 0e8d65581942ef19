"""A thread with everything its representation shows, loaded in a fixed number of statements
(the management API's answers, the pages, and the webhook events all read threads this way)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from app.repositories import attachments, tags, thread_parts
from app.repositories.attachments import AttachmentRow
from app.repositories.replies import ReplyRow
from app.repositories.tags import TagLabel
from app.repositories.threads import ThreadRow
from app.services.tag_labels import labels_of_threads


@dataclass
class ThreadDetails:
    """A thread with everything its representation shows, loaded in a fixed number of queries."""

    thread: ThreadRow
    replies: list[ReplyRow] = field(default_factory=list)
    attachments: list[AttachmentRow] = field(default_factory=list)
    reply_attachments: dict[int, list[AttachmentRow]] = field(default_factory=dict)
    tags: list[TagLabel] = field(default_factory=list)
    """By name; what a representation shows of a tag is its label (app.services.tag_labels)."""


async def load_details(
    loaded: Sequence[ThreadRow], known_tags: dict[int, list[TagLabel]] | None = None
) -> list[ThreadDetails]:
    """Load replies (with their agents), attachments and tags of many threads at once, in a
    fixed number of statements whatever the number of threads (app.repositories.thread_parts:
    one on PostgreSQL; on SQLite three, two when their ``known_tags`` are given or the threads
    were read with their tag ids), and one more for the labels of tags this worker has not
    shown yet."""
    if not loaded:
        return []
    ids = list(dict.fromkeys(thread.id for thread in loaded))
    read_with_tags = all(thread.tag_ids is not None for thread in loaded)
    parts = await thread_parts.parts_of_threads(ids, with_tags=known_tags is None and not read_with_tags)
    if known_tags is None:
        known_tags = await labels_of_threads(loaded, _tag_ids(loaded, parts))
    return _assembled(loaded, parts, known_tags)


async def load_thread_details(application_id: int, feedback_id: int) -> ThreadDetails | None:
    """One thread of an application with everything its representation shows (one statement
    on PostgreSQL: app.repositories.thread_parts); None when the application has no such
    thread."""
    found = await thread_parts.thread_with_parts(application_id, feedback_id)
    return None if found is None else await details_of(*found)


async def details_of(thread: ThreadRow, parts: thread_parts.ThreadParts) -> ThreadDetails:
    """One thread with the parts read for it (by app.repositories.thread_parts), and its tags'
    labels."""
    return _assembled([thread], parts, await labels_of_threads([thread], _tag_ids([thread], parts)))[0]


def _tag_ids(loaded: Sequence[ThreadRow], parts: thread_parts.ThreadParts) -> Mapping[int, Sequence[int]]:
    """Each thread's tag ids: read with its parts, or with the thread (``ThreadRow.tag_ids``)."""
    if parts.tag_ids is not None:
        return parts.tag_ids
    return {thread.id: thread.tag_ids or () for thread in loaded}


def _assembled(
    loaded: Sequence[ThreadRow], parts: thread_parts.ThreadParts, tags_by_thread: dict[int, list[TagLabel]]
) -> list[ThreadDetails]:
    """The threads with their parts, in the order of ``loaded``."""
    details = {thread.id: ThreadDetails(thread) for thread in loaded}
    thread_of_reply: dict[int, int] = {}
    for reply in parts.replies:
        details[reply.feedback_id].replies.append(reply)
        thread_of_reply[reply.id] = reply.feedback_id
    for attachment in parts.attachments:
        if attachment.feedback_id in details:
            details[attachment.feedback_id].attachments.append(attachment)
        if attachment.reply_id in thread_of_reply:
            owner = details[thread_of_reply[attachment.reply_id]]
            owner.reply_attachments.setdefault(attachment.reply_id, []).append(attachment)
    for feedback_id, thread_tags in tags_by_thread.items():
        details[feedback_id].tags = thread_tags
    return [details[thread.id] for thread in loaded]


async def new_thread_details(
    written: Sequence[ThreadRow], with_files: Collection[int], with_tags: Collection[int]
) -> list[ThreadDetails]:
    """Threads a transaction has just written, each with its sender, as :func:`load_details`
    would read them: no replies yet, so only the tags of ``with_tags`` and the files of
    ``with_files`` (thread ids) are read, one statement each, and none for an empty set."""
    details = {thread.id: ThreadDetails(thread) for thread in written}
    filed = [feedback_id for feedback_id in details if feedback_id in with_files]
    for attachment in await attachments.attachments_of(filed) if filed else []:
        if attachment.feedback_id is not None:  # read by thread: always set
            details[attachment.feedback_id].attachments.append(attachment)
    tagged = [thread for thread in written if thread.id in with_tags]
    tag_ids = await tags.tag_ids_of_threads([thread.id for thread in tagged])
    for feedback_id, thread_tags in (await labels_of_threads(tagged, tag_ids)).items():
        details[feedback_id].tags = thread_tags
    return list(details.values())
