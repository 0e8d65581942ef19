"""Text search of an application's threads: the message, the sender's e-mail and name.

A search matches a substring, case-insensitively (ASCII letters on SQLite, as ``LIKE`` does).
Scanning every thread for a rare word takes time in proportion to the whole inbox and, on
SQLite, held the worker's connection meanwhile. The inbox (:func:`app.services.inbox.search_threads`) now
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
not in the capture transaction, where an FTS5 insert cost a large share of SQLite's submit
throughput (benchmarks/notes.md). Every web worker runs :func:`run_indexer`, and a look-up
first indexes whatever is left, so a search never misses a thread. (PostgreSQL's GIN indexes
take new rows into a pending list, cheaply, in the capture transaction itself.)

PostgreSQL guesses the number of rows a ``LIKE '%text%'`` matches from the pattern's length
alone, so its guesses can be wrong by orders of magnitude either way, and the look-up
runs with plain index scans switched off: it can then only read the trigram index. Text shorter
than three characters or holding ``%`` or ``_`` (which FTS5 cannot look up) is always scanned.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from app.db import transactional
from app.repositories import search
from app.repositories.sql import postgres

logger = logging.getLogger("earful.search")

SCAN_WINDOW = 2000
MAX_CANDIDATES = 2000
MAX_SENDERS = 1000
MIN_INDEXED_LENGTH = 3
# A batch holds SQLite's write lock while FTS5 takes it in, so batches stay small and frequent
# (benchmarks/notes.md has the measurements behind these two).
INDEX_BATCH = 500
INDEX_INTERVAL = 0.25


@dataclass
class Candidates:
    """The threads that may match, newest first, and the id below which none was looked at."""

    ids: list[int]
    floor: int | None = None


def indexed(text: str) -> bool:
    """Whether the trigram indexes can look ``text`` up (FTS5 ignores LIKE with ESCAPE)."""
    return len(text) >= MIN_INDEXED_LENGTH and "%" not in text and "_" not in text


async def scan_window_floor(application_id: int, archived: bool, before: int | None) -> int | None:
    """The oldest id of the newest SCAN_WINDOW threads below the cursor; None when there are
    no more threads than that (the scan then covers them all)."""
    return await search.scan_window_floor(application_id, archived, before, SCAN_WINDOW)


@transactional
async def _index_batch(table: str, batch: int) -> int:
    """Add the next ``batch`` rows of ``table`` to its FTS5 table, in one transaction; the
    writers' queue orders every write, so ids committed later are always greater."""
    return await search.index_batch(table, batch)


async def index_new_rows(batch: int = INDEX_BATCH) -> int:
    """Add every thread and sender not yet in the SQLite search tables, ``batch`` rows per
    transaction; how many were added.

    A no-op on PostgreSQL. Reads first, so an idle server does not write four times a second.
    """
    if postgres():
        return 0
    added = 0
    for table in search.INDEXED_TABLES:
        while await search.unindexed(table):
            added += await _index_batch(table, batch)
    return added


@transactional
async def _set_automerge(level: int) -> None:
    await search.set_automerge(level)


async def index_in_bulk(batch: int) -> int:
    """:func:`index_new_rows` after a bulk load (``earful seed``), with FTS5's automatic merging
    of segments paused while it runs: at seven million threads, indexing the next 100,000 took
    30 s with it and 6-7 s without. It is on again afterwards, and merges as new rows come."""
    if postgres():
        return 0
    await _set_automerge(0)
    try:
        return await index_new_rows(batch)
    finally:
        await _set_automerge(search.DEFAULT_AUTOMERGE)


async def run_indexer(stop: asyncio.Event) -> None:
    """Index new rows every INDEX_INTERVAL seconds until ``stop`` is set (SQLite only)."""
    if postgres():
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
    the text is too common for the indexes to help (more than MAX_SENDERS senders match).

    When a list is full, older threads were not looked at: the page stops at its oldest id (the
    ``floor``) and the next page goes on from there. On SQLite, whatever is not indexed yet is
    indexed first, so a search never misses a thread.
    """
    if not postgres():
        await index_new_rows()
    found = await search.candidates(application_id, archived, text, before, MAX_CANDIDATES, MAX_SENDERS)
    if found is None:
        return None
    lists = list(found)
    floors = [ids[-1] for ids in lists if len(ids) == MAX_CANDIDATES]
    floor = max(floors, default=None)
    ids = sorted({i for ids in lists for i in ids if floor is None or i >= floor}, reverse=True)
    return Candidates(ids, floor)
