"""Short reads of a SQLite file answered on the event loop's thread (app.quick_reads), and what
goes to the reading connection instead."""

from __future__ import annotations

import threading

import pytest

from app.db import atomic, quick_reader
from app.models import User
from app.quick_reads import QuickReader
from app.repositories.sql import select
from tests.factories import make_user

# A read of some hundred thousand steps, past the budget whatever the database holds.
LONG_READ = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) "
    "SELECT COUNT(*) AS n FROM c"
)


@pytest.fixture
def sqlite_file(db: str, backend: str) -> str:
    if backend != "sqlite":
        pytest.skip("PostgreSQL reads through its pool")
    reader = quick_reader()
    assert reader is not None
    return reader._connection.execute("PRAGMA database_list").fetchone()[2]


async def test_a_short_read_is_answered_on_the_loops_thread(sqlite_file: str) -> None:
    agent = await make_user()

    rows = QuickReader(sqlite_file).fetch("SELECT id, name FROM users WHERE id = ?", [agent.id])

    assert rows == [{"id": agent.id, "name": "Agent Smith"}]


async def test_a_read_past_its_budget_is_not_answered_on_the_loops_thread(sqlite_file: str) -> None:
    assert QuickReader(sqlite_file).fetch(LONG_READ, []) is None


async def test_a_read_past_the_budget_is_answered_by_the_reading_connection(sqlite_file: str) -> None:
    assert await select(LONG_READ) == [{"n": 100_000}]


async def test_an_interrupted_read_leaves_no_old_snapshot_behind(sqlite_file: str) -> None:
    agent = await make_user()
    reader = QuickReader(sqlite_file)
    assert reader.fetch(LONG_READ, []) is None

    await atomic(lambda: User.filter(id=agent.id).update(name="Renamed"))

    assert reader.fetch("SELECT name FROM users WHERE id = ?", [agent.id]) == [{"name": "Renamed"}]


async def test_the_quick_connection_never_writes(sqlite_file: str) -> None:
    agent = await make_user()

    assert QuickReader(sqlite_file).fetch("UPDATE users SET name = 'x' WHERE id = ?", [agent.id]) is None
    assert (await User.get(id=agent.id)).name == "Agent Smith"


async def test_a_read_from_another_thread_goes_to_the_reading_connection(sqlite_file: str) -> None:
    reader = QuickReader(sqlite_file)
    answers: list[object] = []

    worker = threading.Thread(target=lambda: answers.append(reader.fetch("SELECT 1 AS one", [])))
    worker.start()
    worker.join()

    assert answers == [None] and reader.fetch("SELECT 1 AS one", []) == [{"one": 1}]


async def test_the_quick_connection_reads_the_search_file(sqlite_file: str) -> None:
    rows = QuickReader(sqlite_file).fetch(
        "SELECT name FROM search.sqlite_master WHERE type = 'table' LIMIT 1", []
    )

    assert rows is not None


async def test_a_short_read_through_the_repositories_is_answered_on_the_loops_thread(
    sqlite_file: str,
) -> None:
    agent = await make_user()
    reader = quick_reader()
    assert reader is not None
    seen: list[str] = []
    reader._connection.set_trace_callback(seen.append)
    try:
        rows = await select("SELECT name FROM users WHERE id = {}", [agent.id])
    finally:
        reader._connection.set_trace_callback(None)

    assert rows == [{"name": "Agent Smith"}]
    assert seen == [f"SELECT name FROM users WHERE id = {agent.id}"]
