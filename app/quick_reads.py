"""Short reads of a SQLite file on the event loop's own thread.

A worker reads its SQLite file through a connection of its own (app.db) in aiosqlite's
thread: each statement is handed to that thread and its rows handed back, which wakes a thread
and then the event loop, two switches through the kernel. Measured here (benchmarks/notes.md):
65-140 us of CPU a statement on top of what SQLite took, against 10 us for a user's row and
270 us for a page of fifty threads; a page or a list runs five to six statements. The handing
over is what lets a long read (a count, a text search, a statistics page) run beside the
worker's other requests.

So a read first runs here, on the loop's thread, on a read-only connection of the same files,
with a budget of SQLite's virtual machine steps (:data:`STEPS`: about ten times what a page of
threads takes; a count spends them in 0.2 ms here). A read that goes past it is interrupted and runs again
in aiosqlite's thread as before, so a long read blocks the loop for at most that budget (and
costs that much more CPU once). Anything else this connection cannot answer at once (the
database busy, an error) goes there too, and answers or raises as it always did.

The connection refuses to write (``query_only``), reads the last committed state beside the
writer (WAL), never waits for a lock (``busy_timeout`` 0: that wait belongs off the loop), and
attaches the search file as every connection of the app does (app.search_db).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from app.search_db import SCHEMA, search_file

# Tortoise's logger of statements: a read answered here is logged as Tortoise logs the others
# (the tests count statements through it).
statements_log = logging.getLogger("tortoise.db_client")

# The virtual machine steps a read may take on the loop's thread, checked every CHECK_EVERY.
STEPS = 20_000
CHECK_EVERY = 1_000


class QuickReader:
    """A read-only connection of a SQLite file (with its search file) used on one thread."""

    def __init__(self, path: str, steps: int = STEPS) -> None:
        self._connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._thread = threading.get_ident()
        self._checks = 0
        self._most_checks = steps // CHECK_EVERY
        self._connection.execute("PRAGMA busy_timeout = 0")
        self._connection.execute("PRAGMA query_only = ON")
        self._connection.execute(f"ATTACH DATABASE ? AS {SCHEMA}", [str(search_file(path))])
        self._connection.set_progress_handler(self._check, CHECK_EVERY)

    def _check(self) -> int:
        self._checks += 1
        return 1 if self._checks > self._most_checks else 0

    def fetch(self, statement: str, values: Sequence[object]) -> list[Mapping[str, Any]] | None:
        """The rows of a read as dicts of their columns, or None when it is not for here (another
        thread, past the budget, busy, any error): then it runs in aiosqlite's thread."""
        if threading.get_ident() != self._thread:
            return None
        self._checks = 0
        cursor = self._connection.cursor()
        try:
            rows = cursor.execute(statement, values).fetchall()
            names = [column[0] for column in cursor.description]
        except sqlite3.Error:
            return None
        finally:
            cursor.close()  # an interrupted read must not keep its snapshot open
        statements_log.debug("%s: %s", statement, values)
        return [dict(zip(names, row, strict=True)) for row in rows]

    def close(self) -> None:
        self._connection.close()
