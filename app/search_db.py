"""SQLite's search index in a database file of its own, beside the main one.

The FTS5 tables of the inbox's text search (:mod:`app.services.search`) live in
``<name>-search.sqlite3`` next to ``<name>.sqlite3``, attached to every connection of the app
as the schema ``search``. SQLite has one write lock per database file. While the indexer adds
a batch of new threads, FTS5 also merges the segments of its index; at ten million threads a
merge step took 1.4-3.5 s (benchmarks/notes.md), and in the main file every capture waited
for it. In a file of its own a merge holds up only the next batch of the index.

The indexer has a connection of its own (:func:`indexing`) whose transactions write only
``search.*``: they take the search file's write lock alone and read the main file as it was
when they began (WAL). Indexers of several worker processes queue for that lock on an
``flock`` beside the search file, as the main file's writers do (app.writer_queue).

The search file is derived data: what the main file's threads and senders say, up to its
progress marks (app.repositories.search_index). It is created empty when missing and filled in
the background, and it is rebuilt when it is ahead of the main file (a main file restored from
a backup). Back up the main file; the search file may be deleted while the server is stopped.
PostgreSQL keeps its trigram indexes in the database itself, and an in-memory SQLite database
has no search file (its searches scan).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.backends.sqlite.client import SqliteClient

from app.writer_queue import WriterQueue

T = TypeVar("T")

SCHEMA = "search"
# The search file's own settings: each connection sets them for the schema it attaches (the
# URL's pragmas reach only the main file).
_PRAGMAS = ("journal_mode=WAL", "synchronous=NORMAL", "journal_size_limit=16384")


def search_file(main_file: str | Path) -> Path:
    """The search database of a SQLite file: ``earful.sqlite3`` -> ``earful-search.sqlite3``."""
    path = Path(main_file)
    return path.with_name(f"{path.stem}-search{path.suffix}")


class AttachesSearch(SqliteClient):
    """A SQLite client whose connection attaches the search file as ``search``."""

    async def _post_connect(self) -> None:
        await super()._post_connect()
        if self.filename == ":memory:" or self._connection is None:
            return
        await self._connection.execute(f"ATTACH DATABASE ? AS {SCHEMA}", [str(search_file(self.filename))])
        for pragma in _PRAGMAS:
            cursor = await self._connection.execute(f"PRAGMA {SCHEMA}.{pragma}")
            await cursor.close()


class _Indexer:
    """The indexer's connection of this process, and the queue of the search file's writers."""

    def __init__(self) -> None:
        self.client: AttachesSearch | None = None
        self.prepared = False
        self.writers = WriterQueue(self._file)

    def _file(self) -> str | None:
        return None if self.client is None else str(search_file(self.client.filename))


_indexer = _Indexer()


def available() -> bool:
    """Whether this process opened a search file (a SQLite file database)."""
    return _indexer.client is not None


def prepared() -> bool:
    """Whether this process has made sure of the search file's tables (app.services.search)."""
    return _indexer.prepared


def mark_prepared() -> None:
    """Note that the search file's tables are there, until the file is closed."""
    _indexer.prepared = True


async def open_search_database(database_url: str) -> None:
    """Open the indexer's connection of a SQLite file database (see the module's text)."""
    credentials: dict[str, Any] = expand_db_url(database_url)["credentials"]
    client = AttachesSearch(connection_name="search-indexer", **credentials)
    await client.create_connection(with_db=True)
    _indexer.client = client


async def close_search_database() -> None:
    """Close the indexer's connection, if open."""
    client, _indexer.client = _indexer.client, None
    _indexer.prepared = False
    if client is not None:
        await client.close()


async def indexing(work: Callable[[BaseDBAsyncClient], Awaitable[T]]) -> T:
    """Run ``work`` in one transaction of the indexer's connection, its turn taken among the
    search file's writers, shielded from cancellation like app.db.atomic. ``work`` gets the
    transaction's client; it must write nothing but ``search.*``."""
    client = _indexer.client
    if client is None:
        raise RuntimeError("no search database is open (open_search_database)")

    async def unit() -> T:
        async with _indexer.writers.turn(), client._in_transaction() as transaction:
            return await work(transaction)

    return await asyncio.shield(unit())
