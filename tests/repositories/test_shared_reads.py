"""The reads of one view share one PostgreSQL connection, and never deadlock the pool for it."""

from __future__ import annotations

import asyncio

import pytest
from tortoise import connections

from app.db import atomic
from app.repositories import accounts
from app.repositories.sql import select_one
from app.shared_reads import one_read_connection, shared_connection
from tests.factories import make_user

PID = "SELECT pg_backend_pid() AS pid"


@pytest.fixture
def postgres(backend: str) -> None:
    if backend != "postgres":
        pytest.skip("a pool of PostgreSQL connections")


def _pool():  # type: ignore[no-untyped-def]
    return connections.get("default")._pool


async def _pid(sleep: float = 0) -> int:
    row = await select_one("SELECT pg_backend_pid() AS pid, pg_sleep({}) AS slept", [sleep])
    assert row is not None
    return int(row["pid"])


async def test_a_scope_keeps_its_connection_out_of_the_pool_between_its_reads(db, postgres):
    async with one_read_connection():
        first = await _pid()
        others = [asyncio.create_task(_pid(0.2)) for _ in range(3)]
        await asyncio.sleep(0.05)  # the others hold their connections now
        second = await _pid()
        taken_by_others = set(await asyncio.gather(*others))

    assert second == first
    assert first not in taken_by_others


async def test_a_task_started_in_a_scope_reads_on_the_pool(db, postgres):
    async with one_read_connection():
        own = await _pid()
        # Run together on one connection, two reads would fail ("another operation is in progress").
        started = asyncio.create_task(_pid(0.1))
        while_it_runs = await _pid(0.1)
        other = await started

    assert while_it_runs == own
    assert other != own


async def test_the_connection_goes_back_to_the_pool_when_the_scope_ends(db, postgres):
    async with one_read_connection():
        await _pid()
        assert _pool().get_idle_size() < _pool().get_size()

    assert _pool().get_idle_size() == _pool().get_size()
    assert shared_connection() is None


async def test_a_cancelled_view_gives_its_connection_back(db, postgres):
    async def view() -> None:
        async with one_read_connection():
            await _pid(5)

    running = asyncio.create_task(view())
    await asyncio.sleep(0.2)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running

    assert _pool().get_idle_size() == _pool().get_size()
    assert await _pid() > 0


async def test_views_that_fill_the_pool_can_all_open_a_transaction(db, postgres):
    """Each view holds a connection when it opens its transaction: with every connection held,
    the transactions would wait for each other for ever if the views kept theirs."""
    agent = await make_user()
    views = _pool().get_max_size()
    all_have_read = asyncio.Barrier(views)

    async def view() -> int:
        async with one_read_connection():
            await _pid()
            await all_have_read.wait()
            await atomic(lambda: accounts.end_sessions(agent.id))
            return await _pid()

    pids = await asyncio.wait_for(asyncio.gather(*(view() for _ in range(views))), 10)

    assert len(pids) == views


async def test_a_scope_shares_nothing_on_sqlite(db, backend):
    if backend != "sqlite":
        pytest.skip("SQLite reads through the worker's one reading connection")
    async with one_read_connection():
        assert shared_connection() is None
        assert await select_one("SELECT 1 AS one") == {"one": 1}
