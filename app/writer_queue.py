"""A queue of the writers of a SQLite file, across the worker processes that share it."""

from __future__ import annotations

import asyncio
import fcntl
import os
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class WriterQueue:
    """Worker processes queue for a SQLite file's write lock on a kernel lock instead of polling.

    Two workers writing to one SQLite file: the one that finds the database locked sleeps in
    SQLite's busy handler (1, 2, 5, 10 ... 100 ms steps) and retries, so a write that waited
    once often waits far longer than the writer before it took. Taking an ``flock`` on a file
    beside the database first makes the kernel wake the next writer the moment the lock is
    released. PostgreSQL (row locks) and in-memory databases need none of this.

    ``database_file``: the file whose writers queue here, None when there is none to queue for
    (the main database's, or the search database's: app.search_db).
    """

    def __init__(self, database_file: Callable[[], str | None]) -> None:
        self._database_file = database_file
        self._files: dict[str, int] = {}
        self._local: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def _descriptor(self) -> int | None:
        path = self._database_file()
        if not path or path == ":memory:":
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
