"""Statements for bulk loads and upkeep across tables: ids, sequences and planner statistics."""

from __future__ import annotations

from typing import Literal

from app.repositories.sql import postgres, script, select_one

Table = Literal["members", "feedback", "replies", "feedback_tags", "tags", "outbound_emails"]


async def highest_id(table: Table) -> int:
    """The highest id the table has used. On SQLite that includes deleted rows (AUTOINCREMENT
    never reuses an id), which the search index relies on: it indexes ids above a watermark."""
    if postgres():
        row = await select_one(f'SELECT COALESCE(MAX("id"), 0) AS top FROM "{table}"')
    else:
        row = await select_one(
            f'SELECT MAX(COALESCE(MAX("id"), 0), COALESCE((SELECT "seq" FROM "sqlite_sequence" '
            f'WHERE "name" = \'{table}\'), 0)) AS top FROM "{table}"'
        )
    return int(row["top"]) if row else 0


async def move_sequences_past_ids(tables: tuple[Table, ...]) -> None:
    """After rows were written with explicit ids, the next generated ids come after them
    (PostgreSQL; SQLite's AUTOINCREMENT follows the highest id by itself). Inside a transaction."""
    if not postgres():
        return
    for table in tables:
        await select_one(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
            f'(SELECT COALESCE(MAX("id"), 1) FROM "{table}"))'
        )


async def refresh_statistics(tables: tuple[Table, ...]) -> None:
    """Let the query planner see the new sizes of the tables.

    On SQLite the main file only: a bare ``ANALYZE`` also analyzes every attached database, so
    it read the whole search index (app.search_db) holding that file's write lock, and the
    indexer still catching up beside ``earful seed`` gave up after the busy timeout ("database
    is locked" at the end of a ten-million-thread seed)."""
    await script(f"ANALYZE {', '.join(tables)}" if postgres() else "ANALYZE main")


# The page cache of the connection that bulk-loads on SQLite (earful seed), in KiB.
BULK_LOAD_CACHE_KIB = 1024 * 1024


async def prepare_bulk_load() -> None:
    """Settings for this process's bulk load (``earful seed``). On SQLite, for its connection:

    - a page cache of 1 GiB instead of the default 2 MB: inserts into the indexes of millions of
      rows (threads by sender, senders by e-mail) land at random pages, which then stay in
      memory rather than being read again for every batch;
    - temporary files in memory: every multi-row ``INSERT`` into a table with indexes keeps a
      statement journal (to undo that statement alone), which SQLite writes to a temporary file
      by default; a million-thread seed wrote 10.4 GB for a 1.1 GB database, most of it those
      journals, and 3.3 GB with them in memory, at the same peak memory (they are dropped at the
      end of each statement), and ten million threads seeded in 518 s instead of 596.

    PostgreSQL's cache and temporary files are the server's."""
    if not postgres():
        await script(f"PRAGMA cache_size = -{BULK_LOAD_CACHE_KIB}")
        await script("PRAGMA temp_store = MEMORY")
