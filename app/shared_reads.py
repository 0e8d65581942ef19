"""One PostgreSQL connection for the reads of one page or API answer.

A read outside a transaction takes a connection from the pool and gives it back, statement by
statement: on PostgreSQL that round through the pool and Tortoise's client cost about half of
each statement's time in the worker (benchmarks/notes.md: 77-92 us a statement, 33-43 us on a
connection held), and the hot answers run six to ten statements (token, application, page,
replies, files, tags...). :func:`one_read_connection` lets the reads of one view share a
connection instead, taken at the first read and given back when the view returns.

Holding a connection while waiting for another is how a pool deadlocks: five views each holding
one of the five connections, each waiting for one more to open a transaction. So:

- a transaction's connection is only taken after the view has given its shared one back
  (:func:`give_back_shared_reads`, which :class:`app.db_clients.GuardedAsyncpgClient` calls before
  every outermost transaction); the view takes one again at its next read;
- only the task that opened the scope reads on it; tasks it starts read as usual, on the pool;
- the scope is for views that read the database and wait on nothing else (no request body, no
  file storage, no outgoing call), marked with :func:`reads_on_one_connection`: a view that
  waited on a slow client or a slow bucket while holding a connection would starve the others.

SQLite needs none of this (a worker reads through one connection: app.db), so there the scope
does nothing.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

from tortoise import connections
from tortoise.backends.base.client import BaseDBAsyncClient, PoolConnectionWrapper

from app.db import opened_dialect

P = ParamSpec("P")
T = TypeVar("T")


class SharedConnection:
    """The pooled connection one task's reads share, taken at the first read."""

    __slots__ = ("_client", "_connection", "_fetching", "_wrapper", "owner")

    def __init__(self, client: BaseDBAsyncClient) -> None:
        self._client = client
        self.owner = asyncio.current_task()
        self._wrapper: PoolConnectionWrapper[Any] | None = None
        self._connection: Any = None
        self._fetching = False

    async def fetch(self, statement: str, values: Sequence[object]) -> list[Any]:
        """The rows of a read, on the shared connection (taken from the pool if not held)."""
        if self._connection is None:
            wrapper = self._client.acquire_connection()
            assert isinstance(wrapper, PoolConnectionWrapper)
            self._connection = await wrapper.__aenter__()
            self._wrapper = wrapper
        self._client.log.debug("%s: %s", statement, values)  # as Tortoise logs every statement
        self._fetching = True
        try:
            rows: list[Any] = await self._connection.fetch(statement, *values)
        finally:
            self._fetching = False
        return rows

    async def give_back(self) -> None:
        """Return the connection to the pool, unless a read is running on it (then its task is
        not the one waiting for a transaction, and gives it back when its view returns)."""
        if self._wrapper is None or self._fetching:
            return
        wrapper, self._wrapper, self._connection = self._wrapper, None, None
        await wrapper.__aexit__(None, None, None)


_shared: ContextVar[SharedConnection | None] = ContextVar("earful_shared_reads", default=None)


def shared_connection() -> SharedConnection | None:
    """The connection the running task's reads share, if it opened a scope."""
    shared = _shared.get()
    if shared is None or shared.owner is not asyncio.current_task():
        return None
    return shared


async def give_back_shared_reads() -> None:
    """Give the scope's connection back before waiting for a transaction's (see the module)."""
    shared = _shared.get()
    if shared is not None:
        await shared.give_back()


@asynccontextmanager
async def one_read_connection() -> AsyncIterator[None]:
    """Let the running task's reads outside a transaction share one pooled connection until
    the block ends (PostgreSQL; nothing on SQLite, or inside another such block)."""
    if opened_dialect() != "postgres" or shared_connection() is not None:
        yield
        return
    shared = SharedConnection(connections.get("default"))
    token = _shared.set(shared)
    try:
        yield
    finally:
        _shared.reset(token)
        await shared.give_back()


def reads_on_one_connection(view: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Run a view that only reads the database and waits on nothing else with its reads on one
    connection (:func:`one_read_connection`). Outermost, above the decorator that checks the
    caller, so that the token's or the session's reads share it too."""

    @functools.wraps(view)
    async def reading(*args: P.args, **kwargs: P.kwargs) -> T:
        async with one_read_connection():
            return await view(*args, **kwargs)

    return reading
