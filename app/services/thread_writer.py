"""The writes that create threads, and the group commit that batches them under load.

A new thread is several statements: upsert the sender, insert the thread, claim its uploads, link
and count its tags, count it on the application. Run one transaction per submit and a busy
worker spends most of its time waiting for its own database round trips: SQLite has one
connection per worker, so submits queue behind each other's transactions, and on PostgreSQL
every submit takes the application's row lock to count itself. So a worker writes the submits
that arrive together in one transaction (group commit): one sender upsert, one insert per
thread, one link insert and one counter update per application and tag, one commit, whatever
the batch size. A lone submit is written at once, as a batch of one; submits that arrive while
a batch is being written wait for the next one, so nothing is ever held back by a timer.

Every submit still answers only after its own thread is committed. If a batch fails (a bad
attachment id, a tag deleted meanwhile...), its submits are written again one transaction each,
so one bad submit never fails another.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tortoise import connections
from tortoise.expressions import Case, F, When

from app.db import atomic, in_open_transaction
from app.models import Application, Feedback, FeedbackTag, Member, Tag
from app.services.attachments import claim_for_thread
from app.services.tags import ensure_tags

if TYPE_CHECKING:
    from app.services.feedback import Submission

MAX_BATCH = 64


@dataclass(frozen=True)
class NewThread:
    """A validated submission for an application, with its sentiment already computed."""

    application_id: int
    submission: Submission
    sentiment: str


async def _upsert_members(items: Sequence[NewThread]) -> dict[tuple[int, str], int]:
    """Insert the senders, or update the name of those who give one, and return their ids.

    This is the first statement of the unit: a write, so that SQLite takes its lock at once.
    """
    names: dict[tuple[int, str], str] = {}
    for item in items:
        key = (item.application_id, item.submission.email)
        if item.submission.name or key not in names:
            names[key] = item.submission.name
    # Sorted, so that two batches lock the same senders in the same order.
    ordered = sorted(names.items())
    named = [Member(application_id=a, email=e, name=n) for (a, e), n in ordered if n]
    unnamed = [Member(application_id=a, email=e, name="") for (a, e), n in ordered if not n]
    if named:
        await Member.bulk_create(
            named, on_conflict=["application_id", "email"], update_fields=["name", "updated_at"]
        )
    if unnamed:
        await Member.bulk_create(unnamed, ignore_conflicts=True)
    ids: dict[tuple[int, str], int] = {}
    emails: dict[int, list[str]] = defaultdict(list)
    for application_id, email in names:
        emails[application_id].append(email)
    for application_id, addresses in emails.items():
        rows = await Member.filter(application_id=application_id, email__in=addresses).values_list(
            "id", "email"
        )
        ids.update({(application_id, email): member_id for member_id, email in rows})
    return ids


async def insert_threads(items: Sequence[NewThread]) -> list[Feedback]:
    """Write new threads with their senders, uploads and tags; run it inside a transaction.

    Statements, whatever the number of threads: the sender upsert and look-up, the thread ids,
    one insert of the threads, the tags (created if new), one insert of the links, one update of
    the tags' counts and one of each application's; plus one claim per thread with uploads.
    """
    members = await _upsert_members(items)
    now = datetime.now(UTC)
    ids = await _reserve_thread_ids(len(items))
    threads = [
        Feedback(
            id=thread_id,
            application_id=item.application_id,
            member_id=members[(item.application_id, item.submission.email)],
            message=item.submission.message,
            sentiment=item.sentiment,
            nps=item.submission.nps,
            url=item.submission.url,
            language=item.submission.language,
            ip_address=item.submission.ip_address,
            user_agent=item.submission.user_agent,
            properties=item.submission.properties,
            created_at=now,
            updated_at=now,
            last_reply_at=now,
        )
        for thread_id, item in zip(ids, items, strict=True)
    ]
    await Feedback.bulk_create(threads)
    for item, thread in zip(items, threads, strict=True):
        await claim_for_thread(item.application_id, thread.id, item.submission.attachments)
    await _tag_new_threads(items, threads)
    for application_id, count in Counter(item.application_id for item in items).items():
        await Application.filter(id=application_id).update(open_threads=F("open_threads") + count)
    return threads


async def _reserve_thread_ids(count: int) -> list[int]:
    """Take ``count`` new thread ids, so that the threads go in one multi-row insert.

    PostgreSQL draws them from the id sequence. SQLite has no sequence to draw from, but the unit
    already holds the database's write lock (its first statement is a write), so the next ids
    after ``sqlite_sequence`` (AUTOINCREMENT: ids of deleted threads are never reused) are ours;
    inserting them moves the sequence on.
    """
    connection = connections.get("default")
    if connection.capabilities.dialect == "postgres":
        _, rows = await connection.execute_query(
            "SELECT nextval(pg_get_serial_sequence('feedback', 'id')) FROM generate_series(1, $1)", [count]
        )
        return sorted(row[0] for row in rows)
    _, rows = await connection.execute_query("SELECT seq FROM sqlite_sequence WHERE name = 'feedback'")
    last = rows[0][0] if rows else 0
    return list(range(last + 1, last + 1 + count))


async def _tag_new_threads(items: Sequence[NewThread], threads: Sequence[Feedback]) -> None:
    """Link new (open) threads to their tags and count them on each tag."""
    wanted: dict[int, set[str]] = defaultdict(set)
    for item in items:
        wanted[item.application_id].update(item.submission.tags)
    tag_ids: dict[tuple[int, str], int] = {}
    for application_id, names in wanted.items():
        if names:
            for tag in await ensure_tags(application_id, sorted(names)):
                tag_ids[(application_id, tag.name)] = tag.id
    if not tag_ids:
        return
    links = [
        FeedbackTag(feedback_id=thread.id, tag_id=tag_ids[(item.application_id, name)])
        for item, thread in zip(items, threads, strict=True)
        for name in item.submission.tags
    ]
    await FeedbackTag.bulk_create(links)
    gained = Counter(link.tag_id for link in links)
    # One statement for every tag: separate updates could lock two tags in opposite orders in
    # two workers' batches, a deadlock PostgreSQL only breaks after a second.
    await Tag.filter(id__in=sorted(gained)).update(
        open_count=Case(
            *(When(id=tag_id, then=F("open_count") + count) for tag_id, count in sorted(gained.items())),
            default=F("open_count"),
        )
    )


@dataclass
class _Pending:
    item: NewThread
    done: asyncio.Future[Feedback] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ThreadWriter:
    """One event loop's group commit of new threads (see the module's docstring)."""

    def __init__(self) -> None:
        self._queue: list[_Pending] = []
        self._draining = False

    async def write(self, item: NewThread) -> Feedback:
        """Write one new thread with whatever else is waiting, and return it once committed."""
        pending = _Pending(item)
        self._queue.append(pending)
        if not self._draining:
            self._draining = True
            asyncio.get_running_loop().create_task(self._drain())
        # Shielded: a client that hangs up must not cancel a write other submits share.
        return await asyncio.shield(pending.done)

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
                await self._write_batch(batch)
        finally:
            self._draining = False

    async def _write_batch(self, batch: list[_Pending]) -> None:
        if len(batch) > 1:
            try:
                threads = await atomic(lambda: insert_threads([pending.item for pending in batch]))
            except Exception:  # retried one by one below, where the error is reported
                pass
            else:
                for pending, thread in zip(batch, threads, strict=True):
                    pending.done.set_result(thread)
                return
        for pending in batch:
            try:
                thread = (await atomic(lambda item=pending.item: insert_threads([item])))[0]
            except Exception as error:  # handed to the submit that caused it
                pending.done.set_exception(error)
            else:
                pending.done.set_result(thread)


_writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ThreadWriter] = weakref.WeakKeyDictionary()


async def write_thread(item: NewThread) -> Feedback:
    """Create one thread: in the caller's transaction if there is one, else by group commit."""
    if in_open_transaction():
        return (await insert_threads([item]))[0]
    loop = asyncio.get_running_loop()
    writer = _writers.get(loop)
    if writer is None:
        writer = _writers[loop] = ThreadWriter()
    return await writer.write(item)
