"""Text search of an application's threads: the message, the sender's e-mail and name.

A search matches a substring, case-insensitively (ASCII letters on SQLite, as ``LIKE`` does).
Scanning every thread for a rare word took 2-9 s at a million threads and, on SQLite, held the
worker's only connection meanwhile. The inbox (:func:`app.services.inbox.search_threads`) now
searches in two ways, each bounded:

1. **Scan the newest threads.** The plain filter runs over the newest ``SCAN_WINDOW`` threads
   below the cursor. A frequent word fills the page there, and a small inbox is all there.
2. **Look the text up in trigram indexes** (migration ``0005_search_indexes``: FTS5 tables on
   SQLite, pg_trgm GIN indexes on PostgreSQL), when the scan did not fill the page: the ids of
   the newest ``MAX_CANDIDATES`` threads whose message matches, and of the newest
   ``MAX_CANDIDATES`` threads of senders whose e-mail or name matches (at most
   ``MAX_SENDERS`` of them). When a list is full, older threads were not looked at: the page
   stops at its oldest id (the ``floor``) and the next page goes on from there.

On SQLite, new threads and senders reach the FTS5 tables in batches (:func:`index_new_rows`),
not in the capture transaction: an FTS5 insert there cost ~0.5 ms of CPU per submit and a
third of SQLite's submit throughput. Every web worker runs :func:`run_indexer`, and a look-up
first indexes whatever is left, so a search never misses a thread. (PostgreSQL's GIN indexes
take new rows into a pending list, cheaply, in the capture transaction itself.)

PostgreSQL guesses the number of rows a ``LIKE '%text%'`` matches from the pattern's length
alone (it guessed 223 for a word in 140,000 messages, 28,000 for one in none), so the look-up
runs with plain index scans switched off: it can then only read the trigram index. Text shorter
than three characters or holding ``%`` or ``_`` (which FTS5 cannot look up) is always scanned.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from tortoise import connections
from tortoise.expressions import Q
from tortoise.filters import escape_like
from tortoise.queryset import QuerySet
from tortoise.transactions import in_transaction

from app.db import atomic, dialect, execute
from app.models import Feedback, Member
from app.services.feedback import id_condition, newest_first

logger = logging.getLogger("earful.search")

SCAN_WINDOW = 2000
MAX_CANDIDATES = 2000
MAX_SENDERS = 1000
MIN_INDEXED_LENGTH = 3

# CROSS JOIN fixes the join order: SQLite would otherwise scan the application's threads and
# probe the index once per thread whenever its statistics make that look cheaper.
_SQLITE_MESSAGE_MATCHES = (
    "SELECT s.rowid AS id FROM feedback_search s CROSS JOIN feedback f ON f.id = s.rowid "
    "WHERE s.message LIKE ? AND f.application_id = ? AND f.archived = ? AND s.rowid < ? "
    "ORDER BY s.rowid DESC LIMIT ?"
)
_SQLITE_SENDER_MATCHES = (
    "SELECT id FROM (SELECT m.id FROM members_search s CROSS JOIN members m ON m.id = s.rowid "
    "WHERE s.email LIKE ? AND m.application_id = ? LIMIT ?) "
    "UNION SELECT id FROM (SELECT m.id FROM members_search s CROSS JOIN members m ON m.id = s.rowid "
    "WHERE s.name LIKE ? AND m.application_id = ? LIMIT ?)"
)
_NO_CURSOR = 2**63 - 1

# A batch holds SQLite's write lock while FTS5 takes it in: ~7 ms for 200 rows, 43 ms for
# 1,000, 190 ms for 5,000 at a million threads. Small batches four times a second kept the
# capture p99 within ~15 ms of a run without indexing (batches of 5,000 once a second: ~40 ms).
INDEX_BATCH = 500
INDEX_INTERVAL = 0.25
_INDEXED = {"feedback": ("feedback_search", "message"), "members": ("members_search", "email, name")}


@dataclass
class Candidates:
    """The threads that may match, newest first, and the id below which none was looked at."""

    ids: list[int]
    floor: int | None = None


# The plain scan of an inbox page (``f`` the thread, ``m`` its sender): the message, the
# sender's e-mail or name contains the pattern. The same expression as the ORM's ``icontains``,
# which the trigram indexes of PostgreSQL serve.
SCAN_CONDITION = "({})".format(
    " OR ".join(
        f"UPPER(CAST({column} AS VARCHAR)) LIKE UPPER({{}}) ESCAPE '\\'"
        for column in ("f.message", "m.email", "m.name")
    )
)


def contains_pattern(text: str) -> str:
    """The LIKE pattern of "contains ``text``", its wildcards taken literally."""
    return f"%{escape_like(text)}%"


def indexed(text: str) -> bool:
    """Whether the trigram indexes can look ``text`` up (FTS5 ignores LIKE with ESCAPE)."""
    return len(text) >= MIN_INDEXED_LENGTH and "%" not in text and "_" not in text


def _threads_below(
    application_id: int, archived: bool, before: int | None, **filters: object
) -> QuerySet[Feedback]:
    """The application's open (or archived) threads below the cursor, newest first."""
    threads = Feedback.filter(application_id=application_id, archived=archived, **filters)
    if before is not None:
        threads = threads.filter(id__lt=before)
    return threads.order_by("-id")


def scan_window_statement(
    application_id: int, archived: bool, before: int | None
) -> tuple[str, list[object]]:
    """The statement (for :func:`app.db.execute`) of the id just below the newest SCAN_WINDOW
    threads below the cursor, read off the index by state (see
    :func:`app.services.feedback.newest_first`: on PostgreSQL, ordered by ``id``, it walked every
    newer thread of the other state, 125 ms behind 90,000 of them)."""
    conditions, values = ["f.application_id = {}", "f.archived = {}"], [application_id, archived]
    if before is not None:
        condition, value = id_condition("<", before)
        conditions.append(condition)
        values.append(value)
    return (
        f"SELECT f.id AS id FROM feedback f WHERE {' AND '.join(conditions)} {newest_first()} "
        "LIMIT 1 OFFSET {}",
        [*values, SCAN_WINDOW],
    )


async def scan_window_floor(application_id: int, archived: bool, before: int | None) -> int | None:
    """The oldest id of the newest SCAN_WINDOW threads below the cursor; None when there are
    no more threads than that (the scan then covers them all)."""
    oldest = await execute(*scan_window_statement(application_id, archived, before))
    return oldest[0]["id"] + 1 if oldest else None


async def _sqlite_ids(sql: str, values: list) -> list[int]:
    _, rows = await connections.get("default").execute_query(sql, values)
    return [row["id"] for row in rows]


async def _matching_senders(application_id: int, text: str, sqlite: bool) -> list[int]:
    pattern = f"%{text}%"
    if sqlite:
        cap = MAX_SENDERS + 1
        return await _sqlite_ids(
            _SQLITE_SENDER_MATCHES, [pattern, application_id, cap, pattern, application_id, cap]
        )
    return await (
        Member.filter(application_id=application_id)
        .filter(Q(email__icontains=text) | Q(name__icontains=text))
        .limit(MAX_SENDERS + 1)
        .values_list("id", flat=True)
    )


async def _threads_with_message(
    application_id: int, archived: bool, text: str, before: int | None, sqlite: bool
) -> list[int]:
    if sqlite:
        cursor = before if before is not None else _NO_CURSOR
        return await _sqlite_ids(
            _SQLITE_MESSAGE_MATCHES, [f"%{text}%", application_id, archived, cursor, MAX_CANDIDATES]
        )
    threads = _threads_below(application_id, archived, before, message__icontains=text)
    return await threads.limit(MAX_CANDIDATES).values_list("id", flat=True)


async def _threads_of_senders(
    application_id: int, archived: bool, senders: list[int], before: int | None
) -> list[int]:
    if not senders:
        return []
    threads = _threads_below(application_id, archived, before, member_id__in=senders)
    return await threads.limit(MAX_CANDIDATES).values_list("id", flat=True)


async def _look_up(
    application_id: int, archived: bool, text: str, before: int | None, sqlite: bool
) -> Candidates | None:
    senders = await _matching_senders(application_id, text, sqlite)
    if len(senders) > MAX_SENDERS:
        return None
    lists = [
        await _threads_with_message(application_id, archived, text, before, sqlite),
        await _threads_of_senders(application_id, archived, senders, before),
    ]
    floors = [found[-1] for found in lists if len(found) == MAX_CANDIDATES]
    floor = max(floors, default=None)
    ids = sorted({i for found in lists for i in found if floor is None or i >= floor}, reverse=True)
    return Candidates(ids, floor)


def _sqlite() -> bool:
    return dialect() == "sqlite"


async def _unindexed(table: str) -> bool:
    _, rows = await connections.get("default").execute_query(
        f"SELECT 1 FROM {table} WHERE id > (SELECT last_id FROM search_progress WHERE name = ?) LIMIT 1",
        [table],
    )
    return bool(rows)


async def _index_batch(table: str, batch: int) -> int:
    """Add the next ``batch`` rows of ``table`` to its FTS5 table, in one transaction.

    Writes before it reads (see :func:`app.db.atomic`); the writers' queue orders every write,
    so ids committed later are always greater than the ones indexed here.
    """
    search_table, columns = _INDEXED[table]
    next_rows = (
        f"SELECT id FROM {table} WHERE id > (SELECT last_id FROM search_progress WHERE name = ?) "
        "ORDER BY id LIMIT ?"
    )

    async def work() -> int:
        connection = connections.get("default")
        added, _ = await connection.execute_query(
            f"INSERT INTO {search_table} (rowid, {columns}) SELECT id, {columns} FROM {table} "
            f"WHERE id IN ({next_rows})",
            [table, batch],
        )
        await connection.execute_query(
            f"UPDATE search_progress SET last_id = coalesce((SELECT max(id) FROM ({next_rows})), last_id) "
            "WHERE name = ?",
            [table, batch, table],
        )
        return added

    return await atomic(work)


async def index_new_rows(batch: int = INDEX_BATCH) -> int:
    """Add every thread and sender not yet in the SQLite search tables, ``batch`` rows per
    transaction; how many were added.

    A no-op on PostgreSQL. Reads first, so an idle server does not write four times a second.
    """
    if not _sqlite():
        return 0
    added = 0
    for table in _INDEXED:
        while await _unindexed(table):
            added += await _index_batch(table, batch)
    return added


async def run_indexer(stop: asyncio.Event) -> None:
    """Index new rows every INDEX_INTERVAL seconds until ``stop`` is set (SQLite only)."""
    if not _sqlite():
        return
    while not stop.is_set():
        try:
            await index_new_rows()
        except Exception:
            logger.exception("search: indexing new rows failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), INDEX_INTERVAL)


async def look_up(application_id: int, archived: bool, text: str, before: int | None) -> Candidates | None:
    """The threads below ``before`` that match ``text``, from the trigram indexes; None when
    the text is too common for the indexes to help (more than MAX_SENDERS senders match)."""
    if _sqlite():
        await index_new_rows()
        return await _look_up(application_id, archived, text, before, sqlite=True)
    async with in_transaction() as connection:
        await connection.execute_script("SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off")
        return await _look_up(application_id, archived, text, before, sqlite=False)
