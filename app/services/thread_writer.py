"""The writes that create threads, and the group commit that batches them under load.

A new thread is several statements: upsert the sender, insert the thread, claim its uploads, link
and count its tags, count it on the application. Run one transaction per submit and a busy
worker spends most of its time waiting for its own database round trips: SQLite has one
connection per worker, so submits queue behind each other's transactions, and on PostgreSQL
every submit takes the application's row lock to count itself. So a worker writes the submits
that arrive together in one transaction (group commit): one sender upsert, one multi-row
insert of the threads, one of their tag links, one update of the tags' counts and one of each
application's, one commit, whatever the batch size. A lone submit is written at once, as a
batch of one; submits that arrive while a batch is being written wait for the next one, so
nothing is ever held back by a timer.

Every submit still answers only after its own thread is committed. If a batch fails (a bad
attachment id, a tag id this worker remembered wrongly...), its submits are written again one
transaction each, so one bad submit never fails another.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.db import in_open_transaction, transactional
from app.errors import DomainError
from app.repositories import tags, threads
from app.repositories.threads import NewThreadRow, ThreadRow
from app.services import counters, live, notifications
from app.services.attachments import claim_for_thread
from app.services.tags import ensure_tags
from app.services.webhooks import events

if TYPE_CHECKING:
    from app.services.submissions import Submission

MAX_BATCH = 64


@dataclass(frozen=True)
class NewThread:
    """A validated submission for an application, with its sentiment already computed."""

    application_id: int
    submission: Submission
    sentiment: str
    # Past this many tags in the application, the submit's new tag names are left out.
    tags_per_application: int | None = None


@dataclass
class Written:
    """Threads written by :func:`insert_threads`, and the ids of the tags they were linked to."""

    threads: list[ThreadRow]
    tag_ids: dict[tuple[int, str], int]


def _new_row(item: NewThread) -> NewThreadRow:
    submission = item.submission
    return NewThreadRow(
        application_id=item.application_id,
        email=submission.email,
        name=submission.name,
        message=submission.message,
        sentiment=item.sentiment,
        nps=submission.nps,
        url=submission.url,
        language=submission.language,
        ip_address=submission.ip_address,
        user_agent=submission.user_agent,
        properties=submission.properties,
    )


async def insert_threads(items: Sequence[NewThread]) -> Written:
    """Write new threads with their senders, uploads and tags; run it inside a transaction.

    Statements, whatever the number of threads: the sender upsert (a write first), the thread
    ids, one insert of the threads, the tags this worker does not know yet (created if new), one
    insert of the links, the counters (app.services.counters), the read of the applications'
    webhook endpoints and their notification settings, and on PostgreSQL the one notification
    that tells the open inboxes (app.services.live); plus one claim per thread with uploads,
    and the events and e-mails of the applications that have listeners. The events are built
    from the rows written here (the threads, their senders as the upsert returned them), not
    read back: only the tags and files they were given are read.
    """
    now = datetime.now(UTC)
    rows = [_new_row(item) for item in items]
    senders = await threads.upsert_senders(rows, now)
    ids = await threads.reserve_thread_ids(len(items))
    written = [
        ThreadRow(
            id=thread_id,
            application_id=row.application_id,
            member_id=sender.id,
            message=row.message,
            sentiment=row.sentiment,
            sentiment_corrected=False,
            archived=False,
            nps=row.nps,
            url=row.url,
            language=row.language,
            ip_address=row.ip_address,
            user_agent=row.user_agent,
            properties=row.properties,
            first_reply_time=None,
            last_reply_at=now,
            created_at=now,
            updated_at=now,
            member=sender,
        )
        for thread_id, row, sender in zip(
            ids, rows, [senders[(row.application_id, row.email)] for row in rows], strict=True
        )
    ]
    await threads.insert_threads(written)
    for item, thread in zip(items, written, strict=True):
        await claim_for_thread(item.application_id, thread.id, item.submission.attachments)
    tag_ids, gained = await _tag_new_threads(items, written)
    by_application: dict[int, list[int]] = defaultdict(list)
    for thread in written:
        by_application[thread.application_id].append(thread.id)
    given = list(zip(written, items, strict=True))
    await events.announce_new_threads(
        written,
        with_files={thread.id for thread, item in given if item.submission.attachments},
        with_tags={thread.id for thread, item in given if item.submission.tags},
    )
    await live.announce_threads(by_application)
    await notifications.threads_created(written, [item.submission for item in items])
    # The counters last: their UPDATEs lock rows that every writer of an application shares (its
    # row, its tags' rows) until the commit, so taken last they are held for the commit alone,
    # not for the events' reads and writes above, which other servers' group commits would wait
    # out. Applications, then tags, each in id order: the order in which archiving takes them
    # (app.services.counters).
    for application_id in sorted(by_application):
        await counters.threads_added(application_id, opened=len(by_application[application_id]))
    await counters.tag_links_added({tag_id: (count, 0) for tag_id, count in gained.items()})
    return Written(written, tag_ids)


class KnownTags:
    """Ids of the tags that committed writes created or found, by (application, name).

    Most submits reuse a handful of tags, and tags are never deleted, so once a worker knows a
    tag's id it links threads to it without looking it up. Ids are learnt only after their
    transaction commits; a batch that fails forgets everything, in case an id went stale.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._ids: dict[tuple[int, str], int] = {}

    def get(self, application_id: int, name: str) -> int | None:
        return self._ids.get((application_id, name))

    def learn(self, found: dict[tuple[int, str], int]) -> None:
        if len(self._ids) + len(found) > self.size:
            self._ids.clear()
        self._ids.update(found)

    def clear(self) -> None:
        self._ids.clear()


known_tags = KnownTags(size=100_000)


async def _tag_new_threads(
    items: Sequence[NewThread], written: Sequence[ThreadRow]
) -> tuple[dict[tuple[int, str], int], Counter[int]]:
    """Link new (open) threads to their tags; the tag ids, and how many threads each tag gained
    (for the caller to count, last)."""
    tag_ids: dict[tuple[int, str], int] = {}
    missing: dict[int, set[str]] = defaultdict(set)
    most: dict[int, int | None] = {}
    for item in items:
        most[item.application_id] = item.tags_per_application
        for name in item.submission.tags:
            tag_id = known_tags.get(item.application_id, name)
            if tag_id is None:
                missing[item.application_id].add(name)
            else:
                tag_ids[(item.application_id, name)] = tag_id
    for application_id, names in missing.items():
        for tag in await ensure_tags(application_id, sorted(names), most[application_id]):
            tag_ids[(application_id, tag.name)] = tag.id
    if not tag_ids:
        return tag_ids, Counter()
    links = [
        (thread.id, tag_ids[(item.application_id, name)])
        for item, thread in zip(items, written, strict=True)
        for name in item.submission.tags
        if (item.application_id, name) in tag_ids
    ]
    await tags.insert_links(links)
    return tag_ids, Counter(tag_id for _, tag_id in links)


@dataclass
class _Pending:
    item: NewThread
    done: asyncio.Future[ThreadRow] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ThreadWriter:
    """One event loop's group commit of new threads (see the module's docstring)."""

    def __init__(self) -> None:
        self._queue: list[_Pending] = []
        self._batch: list[_Pending] = []
        self._drainer: asyncio.Task[None] | None = None  # held: the loop keeps tasks weakly

    async def write(self, item: NewThread) -> ThreadRow:
        """Write one new thread with whatever else is waiting, and return it once committed."""
        pending = _Pending(item)
        self._queue.append(pending)
        if self._drainer is None:
            self._drainer = asyncio.get_running_loop().create_task(self._drain())
            self._drainer.add_done_callback(self._drained)
        # Shielded: a client that hangs up must not cancel a write other submits share.
        return await asyncio.shield(pending.done)

    async def _drain(self) -> None:
        while self._queue:
            self._batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            await self._write_batch(self._batch)
        self._batch = []

    def _drained(self, task: asyncio.Task[None]) -> None:
        """When the writer stops, cancelled (the worker is stopping) or broken, every submit
        still waiting gets an error: none may wait for ever."""
        self._drainer = None
        error = asyncio.CancelledError() if task.cancelled() else task.exception()
        if error is not None:
            for pending in (*self._batch, *self._queue):
                if not pending.done.done():
                    pending.done.set_exception(error)
            self._batch, self._queue = [], []

    async def _write_batch(self, batch: list[_Pending]) -> None:
        """Write a batch in one transaction; when that fails, each of its submits in its own,
        so that one bad submit never fails another."""
        if len(batch) > 1:
            try:
                written = await _write_unit([pending.item for pending in batch])
            except DomainError:
                pass  # a submit's own mistake (an upload that is not free): find whose
            except Exception:
                known_tags.clear()  # a database error may come from a stale tag id
            else:
                self._done(batch, written)
                return
        for pending in batch:
            try:
                written = await _write_alone(pending.item)
            except Exception as error:  # handed to the submit that caused it
                pending.done.set_exception(error)
            else:
                self._done([pending], written)

    @staticmethod
    def _done(batch: list[_Pending], written: Written) -> None:
        known_tags.learn(written.tag_ids)
        for pending, thread in zip(batch, written.threads, strict=True):
            pending.done.set_result(thread)


async def _write_alone(item: NewThread) -> Written:
    """Write one submit; after a database error, once more without the tag ids this worker
    knew. A domain error (the submit's own mistake) is raised at once and flushes nothing, so
    that no client can flush the known tags at will."""
    try:
        return await _write_unit([item])
    except DomainError:
        raise
    except Exception:
        known_tags.clear()
        return await _write_unit([item])


@transactional
async def _write_unit(items: list[NewThread]) -> Written:
    return await insert_threads(items)


_writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ThreadWriter] = weakref.WeakKeyDictionary()


async def write_thread(item: NewThread) -> ThreadRow:
    """Create one thread: in the caller's transaction if there is one, else by group commit."""
    if in_open_transaction():
        return (await insert_threads([item])).threads[0]
    loop = asyncio.get_running_loop()
    writer = _writers.get(loop)
    if writer is None:
        writer = _writers[loop] = ThreadWriter()
    return await writer.write(item)
