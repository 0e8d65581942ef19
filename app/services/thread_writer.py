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

from tortoise import connections

from app.db import atomic, dialect, execute, in_open_transaction, insert_statement, parameters, value_groups
from app.models import Feedback
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


async def _upsert_members(items: Sequence[NewThread], now: datetime) -> dict[tuple[int, str], int]:
    """Insert the senders, or update the name of those who give one, and return their ids.

    One statement (``ON CONFLICT ... RETURNING``, PostgreSQL and SQLite >= 3.35), the first of
    the unit: a write, so that SQLite takes its lock at once. Sorted, so that two batches lock
    the same senders in the same order.
    """
    names: dict[tuple[int, str], str] = {}
    for item in items:
        key = (item.application_id, item.submission.email)
        if item.submission.name or key not in names:
            names[key] = item.submission.name
    connection = connections.get("default")
    values: list[object] = []
    for (application_id, email), name in sorted(names.items()):
        values += [application_id, email, name, now, now]
    rows = await connection.execute_query_dict(
        'INSERT INTO "members" ("application_id", "email", "name", "created_at", "updated_at") '
        f"VALUES {value_groups(_postgres(), len(names), 5)} "
        'ON CONFLICT ("application_id", "email") DO UPDATE SET '
        '"name" = CASE WHEN excluded."name" <> \'\' THEN excluded."name" ELSE "members"."name" END, '
        '"updated_at" = CASE WHEN excluded."name" <> \'\' THEN excluded."updated_at" '
        'ELSE "members"."updated_at" END '
        'RETURNING "id", "application_id", "email"',
        values,
    )
    return {(row["application_id"], row["email"]): row["id"] for row in rows}


@dataclass
class Written:
    """Threads written by :func:`insert_threads`, and the ids of the tags they were linked to."""

    threads: list[Feedback]
    tag_ids: dict[tuple[int, str], int]


async def insert_threads(items: Sequence[NewThread]) -> Written:
    """Write new threads with their senders, uploads and tags; run it inside a transaction.

    Statements, whatever the number of threads: the sender upsert, the thread ids, one insert of
    the threads, the tags this worker does not know yet (created if new), one insert of the
    links, one update of the tags' counts and one of each application's; plus one claim per
    thread with uploads.
    """
    now = datetime.now(UTC)
    members = await _upsert_members(items, now)
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
    await _insert("feedback", THREAD_COLUMNS, [_thread_row(thread) for thread in threads])
    for thread in threads:
        thread._saved_in_db = True  # what the ORM's own insert marks: a later save() updates
    for item, thread in zip(items, threads, strict=True):
        await claim_for_thread(item.application_id, thread.id, item.submission.attachments)
    tag_ids = await _tag_new_threads(items, threads)
    for application_id, count in Counter(item.application_id for item in items).items():
        await execute(
            'UPDATE "applications" SET "open_threads" = "open_threads" + {} WHERE "id" = {}',
            [count, application_id],
        )
    return Written(threads, tag_ids)


# Plain statements rather than the ORM's bulk_create and CASE updates: building those queries
# cost more CPU than the rest of a submit's writes together (~250 us per thread in a batch of 16).
THREAD_COLUMNS = (
    "id", "application_id", "member_id", "message", "sentiment", "sentiment_corrected", "archived", "nps",
    "url", "language", "ip_address", "user_agent", "properties", "first_reply_time", "last_reply_at",
    "created_at", "updated_at",
)  # fmt: skip
_PROPERTIES = Feedback._meta.fields_map["properties"]


def _thread_row(thread: Feedback) -> tuple:
    return (
        thread.id, thread.application_id, thread.member_id, thread.message, thread.sentiment,
        thread.sentiment_corrected, thread.archived, thread.nps, thread.url, thread.language,
        thread.ip_address, thread.user_agent, _PROPERTIES.to_db_value(thread.properties, thread),
        thread.first_reply_time, thread.last_reply_at, thread.created_at, thread.updated_at,
    )  # fmt: skip


def _postgres() -> bool:
    return dialect() == "postgres"


async def _insert(table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    statement = insert_statement(table, columns, len(rows), _postgres())
    await connections.get("default").execute_query(statement, [value for row in rows for value in row])


async def _reserve_thread_ids(count: int) -> list[int]:
    """Take ``count`` new thread ids, so that the threads go in one multi-row insert.

    PostgreSQL draws them from the id sequence. SQLite has no sequence to draw from, but the unit
    already holds the database's write lock (its first statement is a write), so the next ids
    after ``sqlite_sequence`` (AUTOINCREMENT: ids of deleted threads are never reused) are ours;
    inserting them moves the sequence on.
    """
    connection = connections.get("default")
    if _postgres():
        _, rows = await connection.execute_query(
            "SELECT nextval(pg_get_serial_sequence('feedback', 'id')) FROM generate_series(1, $1)", [count]
        )
        return sorted(row[0] for row in rows)
    _, rows = await connection.execute_query("SELECT seq FROM sqlite_sequence WHERE name = 'feedback'")
    last = rows[0][0] if rows else 0
    return list(range(last + 1, last + 1 + count))


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
    items: Sequence[NewThread], threads: Sequence[Feedback]
) -> dict[tuple[int, str], int]:
    """Link new (open) threads to their tags and count them on each tag; returns the tag ids."""
    tag_ids: dict[tuple[int, str], int] = {}
    missing: dict[int, set[str]] = defaultdict(set)
    for item in items:
        for name in item.submission.tags:
            tag_id = known_tags.get(item.application_id, name)
            if tag_id is None:
                missing[item.application_id].add(name)
            else:
                tag_ids[(item.application_id, name)] = tag_id
    for application_id, names in missing.items():
        for tag in await ensure_tags(application_id, sorted(names)):
            tag_ids[(application_id, tag.name)] = tag.id
    if not tag_ids:
        return tag_ids
    links = [
        (thread.id, tag_ids[(item.application_id, name)])
        for item, thread in zip(items, threads, strict=True)
        for name in item.submission.tags
    ]
    await _insert("feedback_tags", ("feedback_id", "tag_id"), links)
    gained = sorted(Counter(tag_id for _, tag_id in links).items())
    # One statement for every tag: separate updates could lock two tags in opposite orders in
    # two workers' batches, a deadlock PostgreSQL only breaks after a second.
    cases = " ".join('WHEN {} THEN "open_count" + {}' for _ in gained)
    await execute(
        f'UPDATE "tags" SET "open_count" = CASE "id" {cases} END WHERE "id" IN ({parameters(len(gained))})',
        [value for pair in gained for value in pair] + [tag_id for tag_id, _ in gained],
    )
    return tag_ids


@dataclass
class _Pending:
    item: NewThread
    done: asyncio.Future[Feedback] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ThreadWriter:
    """One event loop's group commit of new threads (see the module's docstring)."""

    def __init__(self) -> None:
        self._queue: list[_Pending] = []
        self._batch: list[_Pending] = []
        self._drainer: asyncio.Task[None] | None = None  # held: the loop keeps tasks weakly

    async def write(self, item: NewThread) -> Feedback:
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
        if task.cancelled() or task.exception() is not None:
            error = asyncio.CancelledError() if task.cancelled() else task.exception()
            for pending in (*self._batch, *self._queue):
                if not pending.done.done():
                    pending.done.set_exception(error)  # type: ignore[arg-type]
            self._batch, self._queue = [], []

    async def _write_batch(self, batch: list[_Pending]) -> None:
        if len(batch) > 1 and await self._try(batch):
            return
        for pending in batch:
            if await self._try([pending]):
                continue
            # Once more without the tag ids this worker knew, and this time report the error.
            try:
                written = await atomic(lambda item=pending.item: insert_threads([item]))
            except Exception as error:  # handed to the submit that caused it
                pending.done.set_exception(error)
            else:
                known_tags.learn(written.tag_ids)
                pending.done.set_result(written.threads[0])

    async def _try(self, batch: list[_Pending]) -> bool:
        """Write a batch in one transaction; on failure forget the known tags and say so."""
        try:
            written = await atomic(lambda: insert_threads([pending.item for pending in batch]))
        except Exception:  # the caller retries, then reports
            known_tags.clear()
            return False
        known_tags.learn(written.tag_ids)
        for pending, thread in zip(batch, written.threads, strict=True):
            pending.done.set_result(thread)
        return True


_writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ThreadWriter] = weakref.WeakKeyDictionary()


async def write_thread(item: NewThread) -> Feedback:
    """Create one thread: in the caller's transaction if there is one, else by group commit."""
    if in_open_transaction():
        return (await insert_threads([item])).threads[0]
    loop = asyncio.get_running_loop()
    writer = _writers.get(loop)
    if writer is None:
        writer = _writers[loop] = ThreadWriter()
    return await writer.write(item)
