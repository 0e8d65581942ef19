"""The live channel on PostgreSQL: NOTIFY in a change's transaction, and the connection that
LISTENs for every process's notifications (stack notes 2, §18).

A NOTIFY sent inside a transaction is delivered when it commits and dropped when it rolls back,
so a notification never tells of a change that did not happen. Payloads must stay under 8000
bytes: they carry ids only. SQLite has no such channel (app.services.live fans out in process).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information
from tortoise import connections

from app.db import opened_dialect
from app.repositories.sql import select

CHANNEL = "earful_live"
MAX_PAYLOAD = 7900  # bytes; PostgreSQL refuses 8000 and more

log = logging.getLogger("earful.live")


def has_channel() -> bool:
    """Whether this process's database carries notifications between processes: PostgreSQL,
    once opened (False before, so that an app serving without a database opens nothing)."""
    return opened_dialect() == "postgres"


async def notify(payload: str) -> None:
    """Send ``payload`` on the channel: on commit inside a transaction, at once outside one."""
    await select("SELECT pg_notify({}, {})", [CHANNEL, payload])


class Listener:
    """A connection of its own that LISTENs on the channel (never one of the pool's: it stays
    open for good). ``received`` gets every payload, on the event loop; ``lost`` is called once
    when the connection dies (a restart of the server, a proxy's idle timeout, a terminated
    backend), after which this listener hears nothing: open another."""

    def __init__(self, connection: asyncpg.Connection, received: Callable[[str], None]) -> None:
        self._connection = connection
        self._received = received

    @classmethod
    async def open(cls, received: Callable[[str], None], lost: Callable[[], None]) -> Listener:
        """LISTEN on a new connection built from the settings Tortoise parsed (its URL's query
        holds Tortoise's options, which are not libpq's)."""
        client: Any = connections.get("default")
        options: dict[str, Any] = {}
        if client.extra.get("ssl") is not None:
            options["ssl"] = client.extra["ssl"]
        connection = await asyncpg.connect(
            host=client.host,
            port=client.port,
            user=client.user,
            password=client.password,
            database=client.database,
            server_settings=dict(client.server_settings),
            **options,
        )
        listener = cls(connection, received)
        try:
            await connection.add_listener(CHANNEL, listener._on_notification)
        except BaseException:
            await connection.close()
            raise
        connection.add_termination_listener(lambda _connection: lost())
        return listener

    def _on_notification(self, _connection: object, _pid: int, _channel: str, payload: object) -> None:
        self._received(str(payload))

    @property
    def alive(self) -> bool:
        return not self._connection.is_closed()

    async def close(self) -> None:
        """Stop listening and close the connection (quietly, if it is gone already)."""
        if self._connection.is_closed():
            return
        try:
            await asyncio.wait_for(self._connection.close(), 5)
        except (OSError, TimeoutError, asyncpg.PostgresError):
            self._connection.terminate()
