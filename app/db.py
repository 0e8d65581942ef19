"""Database wiring: the Tortoise configuration, migrations, connections and transactions.

Every write runs in :func:`transactional` (the app's connections refuse any other: see
app.db_clients); every statement is written in app.repositories.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import os
import pkgutil
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from tortoise import Tortoise, connections
from tortoise.backends.base.client import BaseDBAsyncClient, TransactionalDBClient
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.migrations.api.migrate import migrate
from tortoise.transactions import in_transaction

from app.private_files import create_private_file
from app.quick_reads import QuickReader
from app.search_db import AttachesSearch, close_search_database, open_search_database, search_file
from app.writer_queue import WriterQueue

T = TypeVar("T")

MODELS_MODULE = "app.models"
MIGRATIONS_MODULE = "migrations"


async def _keep_session(connection: object) -> None:
    """What a PostgreSQL connection needs when it goes back to the pool: nothing more.

    asyncpg's default reset runs ``RESET ALL``, ``UNLISTEN *``, ``CLOSE ALL`` and an advisory
    unlock, one more round trip after every statement run outside a transaction. Earful never
    changes session settings, listens, keeps cursors or takes advisory locks, and asyncpg still
    rolls back a transaction left open whatever this does.
    """


def connection_settings(database_url: str) -> str | dict[str, Any]:
    """The Tortoise connection for a database URL as Earful opens it: the URL itself for SQLite
    (its pragmas travel in it, see app.config.sqlite_url), asyncpg's pool with a lighter reset
    for PostgreSQL. The benchmark's reference app opens its database with this too, so that the
    two compare on the same footing (tests/test_bench_reference.py)."""
    if not database_url.startswith(("postgres://", "asyncpg://")):
        return database_url
    connection = expand_db_url(database_url)
    connection["credentials"]["reset"] = _keep_session
    return connection


def tortoise_config(database_url: str, guarded: bool = False) -> dict[str, Any]:
    """Return the Tortoise configuration for one database URL (SQLite or PostgreSQL).

    ``guarded``: the connections refuse writes outside a transaction (app.db_clients); the app
    runs with them, migrations (which manage their own transactions) without.
    """
    connection = connection_settings(database_url)
    if guarded:
        connection = connection if isinstance(connection, dict) else expand_db_url(connection)
        connection = {**connection, "engine": "app.db_clients"}
    return {
        "connections": {"default": connection},
        "apps": {
            "models": {
                "models": [MODELS_MODULE],
                "default_connection": "default",
                "migrations": MIGRATIONS_MODULE,
            }
        },
        "use_tz": True,
        "timezone": "UTC",
    }


def _is_sqlite_file(database_url: str) -> bool:
    return database_url.startswith("sqlite://") and ":memory:" not in database_url


def sqlite_file(database_url: str) -> Path | None:
    """The file of a SQLite database URL; None for PostgreSQL and in-memory databases."""
    if not _is_sqlite_file(database_url):
        return None
    return Path(database_url.removeprefix("sqlite://").split("?", 1)[0])


def ensure_sqlite_directory(database_url: str) -> None:
    """Create the folder and the file of a SQLite database and of its search database
    (app.search_db), private to this user (see app/private_files.py), so that the first
    connection opens them and never creates them 0644."""
    path = sqlite_file(database_url)
    if path is not None:
        create_private_file(path)
        create_private_file(search_file(path))


async def upgrade_database(database_url: str) -> None:
    """Apply every pending migration; running it again applies nothing."""
    ensure_sqlite_directory(database_url)
    try:
        await migrate(config=tortoise_config(database_url))
    finally:
        await Tortoise.close_connections()


@functools.cache
def migration_names() -> frozenset[str]:
    """The migrations this code brings (``0015_webhooks_notifications_receipts`` ...): a database
    is up to date for it when each is applied, whatever newer ones a later release applied."""
    package = importlib.import_module(MIGRATIONS_MODULE)
    return frozenset(
        module.name for module in pkgutil.iter_modules(package.__path__) if module.name[:4].isdigit()
    )


# SQLite serves a process through one connection, so a read waited behind every statement of
# the worker's open write transactions. A second connection of the same file takes the plain
# reads made outside a transaction (see execute); in WAL mode they read the last committed
# state beside the writer. It is kept out of the ORM's configuration: with two connections
# there, every in_transaction() would have to name its own. PostgreSQL's pool and in-memory
# databases need none.
_reader: dict[str, BaseDBAsyncClient] = {}
_quick: dict[str, QuickReader] = {}

# The dialect of the database open_database opened: repositories ask for it on every statement,
# and Tortoise's connection lookup walks its context each time.
_opened: dict[str, str] = {}


def opened_dialect() -> str | None:
    """``postgres`` or ``sqlite`` once :func:`open_database` has run in this process, else None."""
    return _opened.get("dialect")


async def open_database(database_url: str) -> None:
    """Initialise the ORM for a serving process (see stack notes §1 for the global fallback),
    and on a SQLite file the reading connection and the search indexer's (app.search_db)."""
    ensure_sqlite_directory(database_url)
    await Tortoise.init(config=tortoise_config(database_url, guarded=True), _enable_global_fallback=True)
    _opened["dialect"] = connections.get("default").capabilities.dialect
    if _is_sqlite_file(database_url):
        reader = AttachesSearch(connection_name="reader", **expand_db_url(database_url)["credentials"])
        await reader.create_connection(with_db=True)
        _reader["sqlite"] = reader
        _quick["sqlite"] = QuickReader(reader.filename)
        await open_search_database(database_url)


def quick_reader() -> QuickReader | None:
    """The connection that answers short reads on the loop's thread (app.quick_reads), on a
    SQLite file."""
    return _quick.get("sqlite")


def reading_connection() -> BaseDBAsyncClient:
    """The connection for a read made outside a transaction: the worker's reading connection on
    a SQLite file, else the default one."""
    reader = _reader.get("sqlite")
    return reader if reader is not None else connections.get("default")


async def close_database() -> None:
    """Close the ORM's connections of this process, the reading connection and the indexer's."""
    _opened.pop("dialect", None)
    await close_search_database()
    quick = _quick.pop("sqlite", None)
    if quick is not None:
        quick.close()
    reader = _reader.pop("sqlite", None)
    if reader is not None:
        await reader.close()
    await Tortoise.close_connections()


def _main_database_file() -> str | None:
    client = connections.get("default")
    if client.capabilities.dialect != "sqlite":
        return None
    return getattr(client, "filename", None)


writer_queue = WriterQueue(_main_database_file)


async def atomic(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` in one transaction, shielded from the cancellation of the request.

    Quart cancels a handler when its client disconnects; on SQLite a transaction cancelled
    half-way can leave the connection lock held for good (stack notes §3). Shielding lets the
    unit finish (commit or roll back) on its own. On SQLite a unit first waits for its turn
    among the writers of every worker (:class:`WriterQueue`), and every write waits there (the
    app's connections refuse writes outside a transaction: app.db_clients), so no other worker
    commits while the unit runs and it may read before it writes. A unit nested in another (a
    savepoint) already has its turn.
    """
    nested = in_open_transaction()
    turn = nullcontext() if nested else writer_queue.turn()
    _units_begun.set(_units_begun.get() + 1)  # in the caller's context: the unit runs in a task

    async def unit() -> T:
        if nested:
            async with in_transaction():
                return await work()
        callbacks: list[Callable[[], None]] = []
        _after_commit.set(callbacks)
        async with turn, in_transaction():
            result = await work()
        for callback in callbacks:
            callback()
        return result

    return await asyncio.shield(unit())


# How many units the running task (a request) has begun, nested ones too (see units_begun).
_units_begun: ContextVar[int] = ContextVar("earful_units_begun", default=0)


def units_begun() -> int:
    """How many transactions the running task has begun so far: a value it read before the
    count moved may have been changed by its own writes since."""
    return _units_begun.get()


# What to do once the outermost transaction of the running task commits (see after_commit).
_after_commit: ContextVar[list[Callable[[], None]] | None] = ContextVar("earful_after_commit", default=None)


def after_commit(callback: Callable[[], None]) -> None:
    """Call ``callback`` once the transaction the caller runs in has committed (at once outside
    one): a worker woken to send what the transaction queued must find it committed. Not called
    when the transaction rolls back."""
    callbacks = _after_commit.get() if in_open_transaction() else None
    if callbacks is None:
        callback()
    else:
        callbacks.append(callback)


P = ParamSpec("P")


def transactional(function: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Run every call of ``function`` in one transaction (see :func:`atomic`): the one way the
    app writes. Inside another transaction the call joins it (a savepoint)."""

    @functools.wraps(function)
    async def in_one_transaction(*args: P.args, **kwargs: P.kwargs) -> T:
        return await atomic(lambda: function(*args, **kwargs))

    return in_one_transaction


def in_open_transaction() -> bool:
    """Whether the running task is inside a transaction (``atomic`` or ``in_transaction``)."""
    return isinstance(connections.get("default"), TransactionalDBClient)


def _cli_database_url() -> str:
    """Database of the ``tortoise`` command-line tool (``make migration``)."""

    from app.config import sqlite_url

    data_dir = Path(os.environ.get("EARFUL_DATA_DIR") or "./data")
    return os.environ.get("EARFUL_DATABASE_URL") or sqlite_url(data_dir / "earful.sqlite3")


TORTOISE_ORM = tortoise_config(_cli_database_url())
