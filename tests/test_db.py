"""SQLite writers of every worker process take turns on a kernel lock beside the database."""

from __future__ import annotations

import asyncio
import sys

import pytest
from tortoise import connections

from app.db import atomic, writer_queue
from app.models import User

# Another process tries to take the writers' lock without waiting: prints "taken" or "busy".
TRY_LOCK = """
import fcntl, os, sys
descriptor = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("busy")
else:
    print("taken")
"""


async def _other_process_tries(path: str) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", TRY_LOCK, path, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    return out.decode().strip()


@pytest.fixture
def writers_file(backend: str) -> str:
    if backend != "sqlite":
        pytest.skip("PostgreSQL locks rows, it needs no writers' queue")
    return f"{connections.get('default').filename}.writers"


async def test_a_transaction_holds_the_writers_lock_against_other_processes(writers_file: str) -> None:
    seen: list[str] = []

    async def work() -> None:
        await User.filter(id=0).update(name="nobody")
        seen.append(await _other_process_tries(writers_file))

    await atomic(work)

    assert seen == ["busy"]
    assert await _other_process_tries(writers_file) == "taken"


async def test_transactions_of_one_process_take_turns(writers_file: str) -> None:
    inside = 0
    most = 0

    async def work() -> None:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        await asyncio.sleep(0.01)
        inside -= 1

    await asyncio.gather(*(atomic(work) for _ in range(5)))

    assert most == 1


async def test_a_nested_unit_does_not_wait_for_its_own_turn(writers_file: str) -> None:
    async def inner() -> str:
        return "done"

    async def outer() -> str:
        return await atomic(inner)

    assert await asyncio.wait_for(atomic(outer), timeout=5) == "done"
    async with writer_queue.turn():
        assert await _other_process_tries(writers_file) == "busy"
