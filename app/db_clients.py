"""Database clients that refuse to write outside a transaction.

Every write of the app runs in :func:`app.db.transactional`, which holds the SQLite writers'
queue (so that a write never waits in SQLite's busy loop, and a transaction that reads before it
writes cannot fail) and shields the unit from the request's cancellation. A write made outside it
would skip both: so the app's connections (:func:`app.db.open_database`) are these clients, which
raise :class:`WriteOutsideTransaction` at once, in production as in the tests, for any INSERT,
UPDATE or DELETE, whether the ORM or a repository sends it. Inside a transaction Tortoise uses
its own wrapper classes, so the check never runs there. Schema changes (migrations, ``ANALYZE``)
are not writes in this sense.

Tortoise finds the client class through the ``engine`` module named in its configuration:
:func:`get_client_class` is that hook.
"""

from __future__ import annotations

import re
from typing import Any

from tortoise.backends.asyncpg.client import AsyncpgDBClient, TransactionWrapper
from tortoise.backends.base.client import (
    BaseDBAsyncClient,
    TransactionalDBClient,
    TransactionContext,
    TransactionContextPooled,
)
from tortoise.backends.sqlite.client import SqliteClient

from app.search_db import AttachesSearch
from app.shared_reads import give_back_shared_reads

_WRITE = re.compile(
    r"^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b|^\s*WITH\b.*\b(?:INSERT|UPDATE|DELETE)\b", re.I | re.S
)


class WriteOutsideTransaction(RuntimeError):
    """A write was sent outside :func:`app.db.transactional` (a bug, never the user's input)."""


def check_not_a_write(query: str) -> None:
    """Raise :class:`WriteOutsideTransaction` when ``query`` (one statement or a script) writes."""
    if any(_WRITE.match(statement) for statement in query.split(";")):
        raise WriteOutsideTransaction(f"a write outside a transaction: {query[:120]}")


class WriteGuard(BaseDBAsyncClient):
    """The check, before every way a client sends SQL; mixed in ahead of a backend's client."""

    async def execute_insert(self, query: str, values: list[Any]) -> Any:
        check_not_a_write(query)
        return await super().execute_insert(query, values)

    async def execute_many(self, query: str, values: list[list[Any]]) -> None:
        check_not_a_write(query)
        await super().execute_many(query, values)

    async def execute_query(self, query: str, values: list[Any] | None = None) -> Any:
        check_not_a_write(query)
        return await super().execute_query(query, values)

    async def execute_query_dict(self, query: str, values: list[Any] | None = None) -> list[dict[str, Any]]:
        check_not_a_write(query)
        rows: list[dict[str, Any]] = await super().execute_query_dict(query, values)
        return rows

    async def execute_script(self, query: str) -> None:
        check_not_a_write(query)
        await super().execute_script(query)


class GuardedSqliteClient(WriteGuard, AttachesSearch):
    """SQLite: reads as usual (the search file attached: app.search_db); writes only inside a
    transaction."""


class _TransactionAfterSharedReads(TransactionContextPooled):
    """A transaction that takes its connection only once the task's shared read connection is
    back in the pool (app.shared_reads): waiting for one while holding the other could leave
    every view of a full pool waiting for the others."""

    __slots__ = ()

    async def __aenter__(self) -> TransactionalDBClient:
        await give_back_shared_reads()
        return await super().__aenter__()


class GuardedAsyncpgClient(WriteGuard, AsyncpgDBClient):
    """PostgreSQL: reads as usual; writes only inside a transaction; a transaction gives back
    the shared read connection first."""

    def _in_transaction(self) -> TransactionContext:
        return _TransactionAfterSharedReads(TransactionWrapper(self), self._pool_init_lock)


def get_client_class(db_info: dict[str, Any]) -> type[SqliteClient | AsyncpgDBClient]:
    """Tortoise's hook: the guarded client of the configured database."""
    if "file_path" in db_info.get("credentials", {}):
        return GuardedSqliteClient
    return GuardedAsyncpgClient
