"""Text search of an application's threads: the message, the sender's e-mail and name.

A search matches a substring, case-insensitively (ASCII letters on SQLite, as ``LIKE`` does).
Scanning every thread for a rare word takes time in proportion to the whole inbox and, on
SQLite, held the worker's connection meanwhile. The inbox (:func:`app.services.inbox.search_threads`) now
searches in two ways, each bounded:

1. **Scan the newest threads.** The plain filter runs over the newest ``SCAN_WINDOW`` threads
   below the cursor. A frequent word fills the page there, and a small inbox is all there.
   The senders whose e-mail or name matches are looked up first (:func:`matching_senders`, at
   most ``MAX_SENDERS`` of them), so that the scan tests the text of those senders only
   instead of reading every thread's sender; with more, it reads them all.
2. **Look the text up in trigram indexes** (migration ``0005_search_indexes``: FTS5 tables on
   SQLite, pg_trgm GIN indexes on PostgreSQL), when the scan did not fill the page: the ids of
   the newest ``MAX_CANDIDATES`` threads whose message matches, and of the newest
   ``MAX_CANDIDATES`` threads of the matching senders. When a list is full, older threads were
   not looked at: the page stops at its oldest id (the ``floor``) and the next page goes on
   from there.

On SQLite, new threads and senders reach the FTS5 tables in batches (:func:`index_new_rows`),
not in the capture transaction, where an FTS5 insert cost a large share of SQLite's submit
throughput (benchmarks/notes.md). The tables live in a database file of their own
(app.search_db), so that the indexer's work, FTS5's merges above all, never holds the main
file's write lock. Every web worker runs :func:`run_indexer`; a look-up reads what the file
does not hold yet from the main file, so a search never misses a thread, and the page checks
the text of the candidates again, so none is found by text it no longer has. When the file
lacks too much (being built after an upgrade, or a large deletion being applied), the search
scans instead. (PostgreSQL's GIN indexes
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

from app import search_db
from app.db import transactional
from app.repositories import search, search_index
from app.repositories.inbox import ThreadQuery, count_up_to
from app.repositories.sql import postgres

logger = logging.getLogger("earful.search")

SCAN_WINDOW = 2000
# A word that more than this many threads of the window hold is frequent (frequent_in_window).
FREQUENT_IN_WINDOW = 50
# The newest threads a frequent word is counted among on PostgreSQL (app.services.inbox).
COUNT_WINDOW = 50_000
MAX_CANDIDATES = 2000
MAX_SENDERS = 1000
MIN_INDEXED_LENGTH = 3
# Small, frequent batches keep what look-ups read from the main file short (benchmarks/notes.md
# has the measurements behind these two, from when a batch held the main file's write lock).
INDEX_BATCH = 500
INDEX_INTERVAL = 0.25
# How often an index beside a bulk load looks for rows the load committed.
BULK_INDEX_INTERVAL = 0.5
# The segments of a level that FTS5 merges at once while a bulk load is indexed (see index_in_bulk).
BULK_CRISISMERGE = 8
# The most rows (or removals) the search file may lack for a look-up to read it (and those
# rows from the main file); with more, a search scans.
CATCH_UP = 5000


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


async def frequent_in_window(application_id: int, archived: bool, matching: ThreadQuery) -> int | None:
    """For a frequent word, the oldest id of the newest COUNT_WINDOW threads to count it among
    (0 when there are no more threads than that: all of them); None for a word that is not
    frequent.

    A word is frequent when more than FREQUENT_IN_WINDOW of the newest SCAN_WINDOW threads
    (``matching``: the threads that hold it) hold it, one in forty: PostgreSQL's trigram
    look-up then reads and rechecks every thread with the word, 3-9 µs of each (on up to three
    processes), where a walk of the newest threads costs 1.5 µs of each thread walked
    (benchmarks/notes.md).
    """
    window = await scan_window_floor(application_id, archived, None)
    if window is None:
        return 0
    held = await count_up_to(matching.ids(">=", window), FREQUENT_IN_WINDOW + 1, in_order=True)
    if held <= FREQUENT_IN_WINDOW:
        return None
    floor = await search.scan_window_floor(application_id, archived, None, COUNT_WINDOW)
    return floor or 0


async def _prepared() -> None:
    """Create the search file's tables on the first use in this process (app.search_db)."""
    if not search_db.prepared():
        if await search_db.indexing(search_index.prepare):
            logger.info("search: the search file is new or was rebuilt; indexing every thread")
        search_db.mark_prepared()


async def _index_table(table: str, batch: int) -> int:
    return await search_db.indexing(lambda client: search_index.index_batch(client, table, batch))


async def _apply_removals(batch: int) -> int:
    return await search_db.indexing(lambda client: search_index.apply_removals(client, batch))


async def index_new_rows(batch: int = INDEX_BATCH) -> int:
    """Bring the SQLite search file up to date, ``batch`` rows per transaction: add every
    thread and sender not yet in it, and apply every removal; how many rows and removals.

    A no-op on PostgreSQL. Reads first, so an idle server does not write four times a second.
    """
    if not search_db.available():
        return 0
    await _prepared()
    added = removed = 0
    waiting = await search_index.backlog(1)
    while any(waiting.values()):
        for table in search_index.INDEXED_TABLES:
            if waiting[table]:
                added += await _index_table(table, batch)
        if waiting[search_index.REMOVALS]:
            removed += await _apply_removals(batch)
        waiting = await search_index.backlog(1)
    if removed:  # one write to the main file for the whole pass
        await _forget_applied_removals()
    return added + removed


@transactional
async def _forget_applied_removals() -> None:
    await search_index.forget_applied_removals()


async def _within_reach() -> bool:
    """Whether the search file lacks at most CATCH_UP rows of each kind, which a look-up reads
    from the main file instead."""
    await _prepared()
    waiting = await search_index.backlog(CATCH_UP + 1)
    return max(waiting.values()) <= CATCH_UP


async def index_in_bulk(batch: int, loaded: asyncio.Event | None = None) -> int:
    """:func:`index_new_rows` for a bulk load (``earful seed``), with FTS5's automatic merging
    of segments paused while it runs: at seven million threads, indexing the next 100,000 took
    30 s with it and 6-7 s without. Meanwhile a level is merged at once when it holds eight
    segments instead of FTS5's sixteen: with sixteen, the load left levels of up to fifteen
    segments, and the first live batches after it, with automatic merging on again, brought one
    to sixteen and merged it whole (3.1 s of CPU in the worker for one batch of 32 new threads at
    a million threads, where a batch takes 0.2 ms and the periodic merges 5-15 ms). With eight,
    the first merge after the load took 73 ms. Merging the index into one segment (FTS5's
    ``optimize``) would also do, but took 34 s at ten million threads after the load, where the
    smaller levels cost the load 7.7 s of 584 (and nothing measurable at a million: the index
    keeps up with the rows; benchmarks/notes.md).

    With ``loaded`` it runs beside the load, which the search file's write lock of its own
    allows: it indexes what the load has committed, in id order, and returns once ``loaded``
    is set and everything is indexed.
    """
    if not search_db.available():
        return 0
    await _prepared()
    await search_db.indexing(lambda client: search_index.set_merging(client, 0, BULK_CRISISMERGE))
    try:
        done = 0
        while True:
            last_pass = loaded is None or loaded.is_set()
            added = await index_new_rows(batch)
            done += added
            if last_pass:
                return done
            if not added and loaded is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(loaded.wait(), BULK_INDEX_INTERVAL)
    finally:
        await search_db.indexing(
            lambda client: search_index.set_merging(
                client, search_index.DEFAULT_AUTOMERGE, search_index.DEFAULT_CRISISMERGE
            )
        )


async def run_indexer(stop: asyncio.Event) -> None:
    """Index new rows every INDEX_INTERVAL seconds until ``stop`` is set (SQLite only)."""
    if not search_db.available():
        return
    while not stop.is_set():
        try:
            await index_new_rows()
        except Exception:
            logger.exception("search: indexing new rows failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), INDEX_INTERVAL)


async def matching_senders(application_id: int, text: str) -> list[int] | None:
    """The application's senders whose e-mail or name holds ``text``, from the trigram indexes;
    None when the indexes would not help: more than MAX_SENDERS match, or SQLite's search file
    lacks more than CATCH_UP rows. On SQLite some may no longer hold the text (changed, not
    indexed again yet): a scan tests their text again (:meth:`ThreadQuery.containing_among`)."""
    if not postgres() and not (search_db.available() and await _within_reach()):
        return None
    return await search.matching_senders(application_id, text, MAX_SENDERS)


async def look_up(
    application_id: int, archived: bool, text: str, before: int | None, senders: list[int]
) -> Candidates:
    """The threads below ``before`` whose message holds ``text``, or whose sender is one of
    ``senders`` (:func:`matching_senders`), from the trigram indexes.

    When a list is full, older threads were not looked at: the page stops at its oldest id (the
    ``floor``) and the next page goes on from there. On SQLite, what the search file does not
    hold yet is read from the main file, so a search never misses a thread. A look-up only
    reads: it never waits for the indexer, whose transactions may hold the search file for
    seconds while FTS5 merges at ten million threads. Some candidates may no longer hold the
    text (changed, not indexed again yet): the page reads the candidates with the text condition.
    """
    lists = list(await search.candidates(application_id, archived, text, before, MAX_CANDIDATES, senders))
    floors = [ids[-1] for ids in lists if len(ids) == MAX_CANDIDATES]
    floor = max(floors, default=None)
    ids = sorted({i for ids in lists for i in ids if floor is None or i >= floor}, reverse=True)
    return Candidates(ids, floor)
