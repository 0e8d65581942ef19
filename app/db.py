"""Database wiring: the Tortoise configuration, migrations, the transaction helper and plain statements."""

from __future__ import annotations

import asyncio
import fcntl
import functools
import os
import sqlite3
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, nullcontext
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

from tortoise import Tortoise, connections
from tortoise.backends.base.client import BaseDBAsyncClient, TransactionalDBClient
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.backends.sqlite import SqliteClient
from tortoise.migrations.api.migrate import migrate
from tortoise.models import Model
from tortoise.transactions import in_transaction

T = TypeVar("T")
M = TypeVar("M", bound=Model)

MODELS_MODULE = "app.models"
MIGRATIONS_MODULE = "migrations"


async def _keep_session(connection: object) -> None:
    """What a PostgreSQL connection needs when it goes back to the pool: nothing more.

    asyncpg's default reset runs ``RESET ALL``, ``UNLISTEN *``, ``CLOSE ALL`` and an advisory
    unlock, one more round trip after every statement run outside a transaction. Earful never
    changes session settings, listens, keeps cursors or takes advisory locks, and asyncpg still
    rolls back a transaction left open whatever this does.
    """


def _connection(database_url: str) -> str | dict[str, Any]:
    if not database_url.startswith(("postgres://", "asyncpg://")):
        return database_url
    connection = expand_db_url(database_url)
    connection["credentials"]["reset"] = _keep_session
    return connection


def tortoise_config(database_url: str) -> dict[str, Any]:
    """Return the Tortoise configuration for one database URL (SQLite or PostgreSQL)."""
    return {
        "connections": {"default": _connection(database_url)},
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


def ensure_sqlite_directory(database_url: str) -> None:
    """Create the folder of a SQLite file so that the first connection can open it."""
    if _is_sqlite_file(database_url):
        path = database_url.removeprefix("sqlite://").split("?", 1)[0]
        Path(path).parent.mkdir(parents=True, exist_ok=True)


async def upgrade_database(database_url: str) -> None:
    """Apply every pending migration; running it again applies nothing."""
    ensure_sqlite_directory(database_url)
    try:
        await migrate(config=tortoise_config(database_url))
    finally:
        await Tortoise.close_connections()


# SQLite serves a process through one connection, so a read waited behind every statement of
# the worker's open write transactions. A second connection of the same file takes the plain
# reads made outside a transaction (see execute); in WAL mode they read the last committed
# state beside the writer. It is kept out of the ORM's configuration: with two connections
# there, every in_transaction() would have to name its own. PostgreSQL's pool and in-memory
# databases need none.
_reader: dict[str, BaseDBAsyncClient] = {}


async def open_database(database_url: str) -> None:
    """Initialise the ORM for a serving process (see stack notes §1 for the global fallback),
    and on a SQLite file the reading connection."""
    ensure_sqlite_directory(database_url)
    await Tortoise.init(config=tortoise_config(database_url), _enable_global_fallback=True)
    _row_readers.clear()
    if _is_sqlite_file(database_url):
        reader = SqliteClient(connection_name="reader", **expand_db_url(database_url)["credentials"])
        await reader.create_connection(with_db=True)
        _reader["sqlite"] = reader


async def close_database() -> None:
    """Close the ORM's connections of this process, and the reading connection."""
    reader = _reader.pop("sqlite", None)
    if reader is not None:
        await reader.close()
    await Tortoise.close_connections()


class _WriterQueue:
    """Worker processes queue for SQLite's write lock on a kernel lock instead of polling.

    Two workers writing to one SQLite file: the one that finds the database locked sleeps in
    SQLite's busy handler (1, 2, 5, 10 ... 100 ms steps) and retries, so a write that waited
    once often waits far longer than the writer before it took. Taking an ``flock`` on a file
    beside the database first makes the kernel wake the next writer the moment the lock is
    released. PostgreSQL (row locks) and in-memory databases need none of this.
    """

    def __init__(self) -> None:
        self._files: dict[str, int] = {}
        self._local: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def _descriptor(self) -> int | None:
        client = connections.get("default")
        path = getattr(client, "filename", None)
        if client.capabilities.dialect != "sqlite" or not path or path == ":memory:":
            return None
        if path not in self._files:
            self._files[path] = os.open(f"{path}.writers", os.O_RDWR | os.O_CREAT, 0o600)
        return self._files[path]

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold the database's writer lock for the block (nothing to hold on PostgreSQL).

        An ``flock`` belongs to the open file, which the tasks of a process share, so they
        first queue on an asyncio lock of their own.
        """
        descriptor = self._descriptor()
        if descriptor is None:
            yield
            return
        local = self._local.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with local:
            await asyncio.to_thread(fcntl.flock, descriptor, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(descriptor, fcntl.LOCK_UN)


writer_queue = _WriterQueue()


async def atomic(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` in one transaction, shielded from the cancellation of the request.

    Quart cancels a handler when its client disconnects; on SQLite a transaction cancelled
    half-way can leave the connection lock held for good (stack notes §3). Shielding lets the
    unit finish (commit or roll back) on its own. Units should write before they read, so that
    two SQLite workers never fail on a read snapshot that turns into a write. On SQLite a unit
    first waits for its turn among the writers of every worker (:class:`_WriterQueue`); a unit
    nested in another (a savepoint) already has it.
    """
    turn = nullcontext() if in_open_transaction() else writer_queue.turn()

    async def unit() -> T:
        async with turn, in_transaction():
            return await work()

    return await asyncio.shield(unit())


def value_groups(postgres: bool, rows: int, columns: int) -> str:
    """The VALUES groups of a multi-row insert: ``(?, ?), (?, ?)`` on SQLite, ``($1, $2), ($3, $4)``
    on PostgreSQL."""
    if postgres:
        return ", ".join(
            "(" + ", ".join(f"${row * columns + column + 1}" for column in range(columns)) + ")"
            for row in range(rows)
        )
    return ", ".join("(" + ", ".join("?" * columns) + ")" for _ in range(rows))


@functools.lru_cache(maxsize=512)
def insert_statement(table: str, columns: tuple[str, ...], rows: int, postgres: bool) -> str:
    """A multi-row ``INSERT`` of ``rows`` rows into ``columns``; the values are parameters."""
    names = ", ".join(f'"{name}"' for name in columns)
    return f'INSERT INTO "{table}" ({names}) VALUES {value_groups(postgres, rows, len(columns))}'


def dialect() -> str:
    """The default connection's database: ``"sqlite"`` or ``"postgres"``."""
    return connections.get("default").capabilities.dialect


def parameter_marks(count: int) -> list[str]:
    """The marks of ``count`` statement parameters: ``?`` on SQLite, ``$1``... on PostgreSQL."""
    if dialect() == "postgres":
        return [f"${number}" for number in range(1, count + 1)]
    return ["?"] * count


def date_parameter(day: date) -> date | str:
    """A date as a statement parameter: asyncpg takes the date, SQLite stores ISO text."""
    return day if dialect() == "postgres" else day.isoformat()


def parameters(count: int) -> str:
    """``{}, {}, ...``: ``count`` parameters of an :func:`execute` template (an ``IN`` list)."""
    return ", ".join("{}" for _ in range(count))


async def execute(template: str, values: list[object]) -> list[Any]:
    """Run a plain statement whose ``{}`` are its parameters (in order); returns its rows, read
    by column name.

    Outside a transaction a plain statement is a read (every write runs in ``atomic``); on a
    SQLite file it goes to the worker's reading connection (see :func:`open_database`).
    SQLite's rows become dicts: ``sqlite3.Row`` finds a column by comparing names one by one, and
    reading a thread's columns from it cost three times reading them from a dict built once.
    """
    client = connections.get("default")
    if _reader and not isinstance(client, TransactionalDBClient):
        client = _reader["sqlite"]
    _, rows = await client.execute_query(template.format(*parameter_marks(len(values))), values)
    if rows and isinstance(rows[0], sqlite3.Row):
        names = rows[0].keys()
        return [dict(zip(names, row, strict=True)) for row in rows]
    return rows


# Plain reads into model objects. The hot lists (a page of threads with their replies,
# attachments and tags) read their rows with plain statements: building the ORM's statements
# (fifty ids each) cost a third of a feedback list's CPU time. Rows become model objects with
# the ORM's own conversions (see _row_reader).


@functools.lru_cache(maxsize=64)
def select_columns(model: type[Model], alias: str) -> str:
    """``alias."column" AS "alias.column"`` for every column of ``model``, for :func:`from_row`."""
    return ", ".join(
        f'{alias}."{column}" AS "{alias}.{column}"' for column in model._meta.fields_db_projection.values()
    )


_row_readers: dict[tuple[type[Model], str], Callable[[Any], Any]] = {}


def _row_reader(model: type[M], alias: str) -> Callable[[Any], M]:
    """The function that makes a ``model`` object of a row's columns under ``alias``.

    It does what the ORM's ``Model._init_from_db`` does, field by field with the ORM's own
    conversions: columns the driver already returns as Python values are taken as they are,
    fields with the default converter get their type applied, the others their
    ``to_python_value``. The ORM's constructor also takes the row as keyword arguments and
    sets four bookkeeping attributes through the model's ``__setattr__``; a page of 50 threads
    builds ~200 objects, and that was a third of the construction's cost. Which fields fall in
    which group depends on the database, so the readers are made again when it is opened
    (:func:`open_database`); a test compares the two constructors on every model.
    """
    key = (model, alias)
    reader = _row_readers.get(key)
    if reader is not None:
        return reader
    meta = model._meta
    native = [(f"{alias}.{column}", name) for column, name, _ in meta.db_native_fields]
    typed = [(f"{alias}.{column}", name, field.field_type) for column, name, field in meta.db_default_fields]
    converted = [
        (f"{alias}.{column}", name, field.to_python_value) for column, name, field in meta.db_complex_fields
    ]
    custom_pk = meta.db_pk_column not in meta.generated_db_fields
    new, set_attribute = model.__new__, object.__setattr__

    def read(row: Any) -> M:
        values = {name: row[column] for column, name in native}
        for column, name, kind in typed:
            value = row[column]
            values[name] = None if value is None else kind(value)
        for column, name, convert in converted:
            values[name] = convert(row[column])
        values.update(_partial=False, _saved_in_db=True, _custom_generated_pk=custom_pk, _await_when_save={})
        instance = new(model)
        set_attribute(instance, "__dict__", values)
        return instance

    _row_readers[key] = read
    return read


def from_row(model: type[M], row: Any, alias: str) -> M:
    """The ``model`` object whose columns a row holds under ``alias`` (see :func:`select_columns`)."""
    return _row_reader(model, alias)(row)


def from_outer_row(model: type[M], row: Any, alias: str) -> M | None:
    """:func:`from_row` for the side of an outer join, None where the row has no match."""
    return None if row[f"{alias}.id"] is None else from_row(model, row, alias)


async def select_models(model: type[M], alias: str, clause: str, values: list[object]) -> list[M]:
    """The ``model`` objects of the rows of its table (named ``alias``) that ``clause`` (joins,
    ``WHERE``, ``ORDER BY``, with :func:`execute`'s ``{}`` parameters) selects."""
    rows = await execute(
        f'SELECT {select_columns(model, alias)} FROM "{model._meta.db_table}" {alias} {clause}', values
    )
    return [from_row(model, row, alias) for row in rows]


def set_related(instance: Model, name: str, related: Model | None) -> None:
    """Attach a loaded related object, as the ORM's ``select_related`` does."""
    object.__setattr__(instance, f"_{name}", related)


def in_open_transaction() -> bool:
    """Whether the running task is inside a transaction (``atomic`` or ``in_transaction``)."""
    return isinstance(connections.get("default"), TransactionalDBClient)


def _cli_database_url() -> str:
    """Database of the ``tortoise`` command-line tool (``make migration``)."""
    import os

    from app.config import sqlite_url

    data_dir = Path(os.environ.get("EARFUL_DATA_DIR") or "./data")
    return os.environ.get("EARFUL_DATABASE_URL") or sqlite_url(data_dir / "earful.sqlite3")


TORTOISE_ORM = tortoise_config(_cli_database_url())
