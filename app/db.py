"""Database wiring: the Tortoise configuration, migrations and the transaction helper."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from tortoise import Tortoise, connections
from tortoise.backends.base.client import TransactionalDBClient
from tortoise.backends.base.config_generator import expand_db_url
from tortoise.migrations.api.migrate import migrate
from tortoise.transactions import in_transaction

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


def ensure_sqlite_directory(database_url: str) -> None:
    """Create the folder of a SQLite file so that the first connection can open it."""
    if database_url.startswith("sqlite://") and ":memory:" not in database_url:
        path = database_url.removeprefix("sqlite://").split("?", 1)[0]
        Path(path).parent.mkdir(parents=True, exist_ok=True)


async def upgrade_database(database_url: str) -> None:
    """Apply every pending migration; running it again applies nothing."""
    ensure_sqlite_directory(database_url)
    try:
        await migrate(config=tortoise_config(database_url))
    finally:
        await Tortoise.close_connections()


async def open_database(database_url: str) -> None:
    """Initialise the ORM for a serving process (see stack notes §1 for the global fallback)."""
    ensure_sqlite_directory(database_url)
    await Tortoise.init(config=tortoise_config(database_url), _enable_global_fallback=True)


async def close_database() -> None:
    """Close the ORM's connections of this process."""
    await Tortoise.close_connections()


async def atomic(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` in one transaction, shielded from the cancellation of the request.

    Quart cancels a handler when its client disconnects; on SQLite a transaction cancelled
    half-way can leave the connection lock held for good (stack notes §3). Shielding lets the
    unit finish (commit or roll back) on its own. Units should write before they read, so that
    two SQLite workers never fail on a read snapshot that turns into a write.
    """

    async def unit() -> T:
        async with in_transaction():
            return await work()

    return await asyncio.shield(unit())


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
