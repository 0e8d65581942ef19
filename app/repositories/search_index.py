"""The statements of SQLite's search file (app.search_db): its FTS5 tables, filled in batches
from the main file's threads and senders and kept in step with what changes or goes.

``search.search_progress`` holds three marks. ``feedback`` and ``members``: the highest id
indexed; rows are indexed in id order, and the main file's writers commit ids in order, so
every row up to the mark is in the index. ``removals``: the last row of ``main.search_removals``
applied. The main file's triggers (migration ``0018_search_database``) add a removal for every
thread or sender deleted, or whose indexed text changed; applying it deletes the row from the
index and indexes the text of the row again if it is still there.

Functions taking ``client`` run on the indexer's connection, in its transaction
(:func:`app.search_db.indexing`), and write nothing but ``search.*``; the others read on the
app's connections, which attach the search file too.
"""

from __future__ import annotations

from collections.abc import Sequence

from tortoise.backends.base.client import BaseDBAsyncClient

from app.repositories.sql import change, change_on, parameters, select, select_on

# Each indexed table of the main file: its FTS5 table in the search file, the columns indexed.
INDEXED = {"feedback": ("feedback_search", "message"), "members": ("members_search", "email, name")}
INDEXED_TABLES = tuple(INDEXED)
REMOVALS = "removals"
# FTS5's own defaults: segments are merged as they accumulate, a little with every write once
# a level holds four; a level that reaches sixteen is merged at once, in the writing transaction.
DEFAULT_AUTOMERGE = 4
DEFAULT_CRISISMERGE = 16

# Contentful tables: FTS5 keeps its own copy of the text, since its LIKE reads the text of
# each candidate row, and it cannot read a table of another database file.
_SCHEMA = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS search.feedback_search USING fts5(message, tokenize='trigram')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS search.members_search USING fts5(email, name, tokenize='trigram')",
    "CREATE TABLE IF NOT EXISTS search.search_progress "
    "(name VARCHAR(16) NOT NULL PRIMARY KEY, last_id INT NOT NULL)",
    "INSERT OR IGNORE INTO search.search_progress (name, last_id) "
    "VALUES ('feedback', 0), ('members', 0), ('removals', 0)",
)
_DROP = (
    "DROP TABLE IF EXISTS search.feedback_search",
    "DROP TABLE IF EXISTS search.members_search",
    "DROP TABLE IF EXISTS search.search_progress",
)
_PROGRESS = "(SELECT last_id FROM search.search_progress WHERE name = {})"
# The highest id the main file ever gave (AUTOINCREMENT: never lower after a delete); a search
# file whose marks are beyond it was built from another main file (one restored from a backup).
_AHEAD = (
    "SELECT 1 AS one FROM search.search_progress p "
    "WHERE p.last_id > coalesce((SELECT seq FROM main.sqlite_sequence s WHERE s.name = "
    "CASE p.name WHEN 'removals' THEN 'search_removals' ELSE p.name END), 0) LIMIT 1"
)


async def _tables_exist(client: BaseDBAsyncClient) -> bool:
    rows = await select_on(client, "SELECT 1 AS one FROM search.sqlite_master WHERE name = 'search_progress'")
    return bool(rows)


async def prepare(client: BaseDBAsyncClient) -> bool:
    """Create the search file's tables where missing, and empty them when the file is ahead of
    the main file; whether the index was (re)started empty."""
    restart = not await _tables_exist(client) or bool(await select_on(client, _AHEAD))
    if restart:
        for statement in _DROP:
            await change_on(client, statement)
    for statement in _SCHEMA:
        await change_on(client, statement)
    return restart


def _waiting(table: str) -> str:
    source = "search_removals" if table == REMOVALS else table
    return f"(SELECT count(*) FROM (SELECT 1 FROM main.{source} WHERE id > {_PROGRESS} LIMIT {{}}))"


_KINDS = (*INDEXED_TABLES, REMOVALS)
_BACKLOG = "SELECT {} AS feedback, {} AS members, {} AS removals".format(*map(_waiting, _KINDS))


async def backlog(limit: int) -> dict[str, int]:
    """How many rows of each indexed table, and how many removals, wait for the indexer (by
    ``feedback``, ``members`` and ``removals``), each counted up to ``limit``; one statement."""
    [row] = await select(_BACKLOG, [value for kind in _KINDS for value in (kind, limit)])
    return {kind: int(row[kind]) for kind in _KINDS}


async def index_batch(client: BaseDBAsyncClient, table: str, batch: int) -> int:
    """Add the next ``batch`` rows of ``table`` to its FTS5 table; how many."""
    search_table, indexed_columns = INDEXED[table]
    next_rows = f"SELECT id FROM main.{table} WHERE id > {_PROGRESS} ORDER BY id LIMIT {{}}"
    added = await change_on(
        client,
        f"INSERT INTO search.{search_table} (rowid, {indexed_columns}) "
        f"SELECT id, {indexed_columns} FROM main.{table} WHERE id IN ({next_rows})",
        [table, batch],
    )
    await change_on(
        client,
        f"UPDATE search.search_progress SET last_id = coalesce((SELECT max(id) FROM ({next_rows})), last_id) "
        "WHERE name = {}",
        [table, batch, table],
    )
    return added


async def apply_removals(client: BaseDBAsyncClient, batch: int) -> int:
    """Apply the next ``batch`` removals: their rows leave the index, and those still in the
    main file come back with their current text; how many removals."""
    removals = await select_on(
        client,
        f"SELECT id, name, row_id FROM main.search_removals WHERE id > {_PROGRESS} ORDER BY id LIMIT {{}}",
        [REMOVALS, batch],
    )
    if not removals:
        return 0
    for table, (search_table, indexed_columns) in INDEXED.items():
        ids = sorted({int(row["row_id"]) for row in removals if row["name"] == table})
        if ids:
            await _reindex(client, table, search_table, indexed_columns, ids)
    await change_on(
        client,
        "UPDATE search.search_progress SET last_id = {} WHERE name = {}",
        [int(removals[-1]["id"]), REMOVALS],
    )
    return len(removals)


async def _reindex(
    client: BaseDBAsyncClient, table: str, search_table: str, indexed_columns: str, ids: Sequence[int]
) -> None:
    marks = parameters(len(ids))
    await change_on(client, f"DELETE FROM search.{search_table} WHERE rowid IN ({marks})", ids)
    await change_on(
        client,
        f"INSERT INTO search.{search_table} (rowid, {indexed_columns}) "
        f"SELECT id, {indexed_columns} FROM main.{table} WHERE id IN ({marks}) AND id <= {_PROGRESS}",
        [*ids, table],
    )


async def forget_applied_removals() -> int:
    """Delete the removals the index has applied from the main file (in the app's transaction;
    sqlite_sequence keeps the highest id, which :func:`prepare` compares)."""
    return await change(f"DELETE FROM search_removals WHERE id <= {_PROGRESS}", [REMOVALS])


async def set_merging(client: BaseDBAsyncClient, automerge: int, crisismerge: int) -> None:
    """FTS5's merging of index segments for both search tables: ``automerge`` (0 pauses it) and
    ``crisismerge``, the segments of a level merged at once. The settings are kept in the file."""
    for search_table, _ in INDEXED.values():
        for option, value in (("automerge", automerge), ("crisismerge", crisismerge)):
            await change_on(
                client,
                f"INSERT INTO search.{search_table} ({search_table}, rank) VALUES ('{option}', {{}})",
                [value],
            )
