"""Counters that two transactions move together are locked in one order, so they never deadlock.

A deadlock on PostgreSQL costs a second (``deadlock_timeout``) and fails one of the two
transactions: under two servers' submits on one database it was the p99 of capture.
"""

from __future__ import annotations

import asyncio

import pytest

from app.db import transactional
from app.repositories import maintenance, tags
from app.services.tags import ensure_tags
from tests.factories import make_application, make_thread, make_user


async def test_tag_counts_moved_in_two_transactions_never_deadlock(backend: str) -> None:
    if backend != "postgres":
        pytest.skip("SQLite runs one writing transaction at a time")
    application = await make_application(await make_user())
    made = {tag.name: tag for tag in await transactional(ensure_tags)(application.id, ["first", "second"])}
    first, second = made["first"], made["second"]
    # Every update writes a row's new version further on in the table, so a scan of the table
    # now meets the second tag before the first: the order the rows are found in is not the ids'.
    for _ in range(3):
        await transactional(tags.add_to_counts)({first.id: (1, 0)})
    # With statistics (autovacuum keeps them), PostgreSQL reads a table this small by scanning it.
    await maintenance.refresh_statistics(("tags",))
    first_held, go_on = asyncio.Event(), asyncio.Event()

    @transactional
    async def first_then_second() -> None:
        await tags.add_to_counts({first.id: (1, 0)})
        first_held.set()
        await go_on.wait()
        await tags.add_to_counts({second.id: (1, 0)})

    @transactional
    async def both_at_once() -> None:
        await tags.add_to_counts({first.id: (1, 0), second.id: (1, 0)})

    one = asyncio.create_task(first_then_second())
    await first_held.wait()
    other = asyncio.create_task(both_at_once())
    await asyncio.sleep(0.3)  # the other transaction is now waiting for a lock
    go_on.set()

    await asyncio.wait_for(asyncio.gather(one, other), timeout=10)
    counts = {tag.name: tag.open_count for tag in await tags.tags_of_application(application.id)}
    assert counts == {"first": 5, "second": 2}


async def test_tag_counts_moved_after_linking_threads_in_two_transactions_never_deadlock(
    backend: str,
) -> None:
    if backend != "postgres":
        pytest.skip("SQLite runs one writing transaction at a time")
    application = await make_application(await make_user())
    made = {tag.name: tag for tag in await transactional(ensure_tags)(application.id, ["first", "second"])}
    first, second = made["first"].id, made["second"].id
    threads = [await make_thread(application), await make_thread(application)]
    linked: list[int] = []
    both_linked, go_on = asyncio.Event(), asyncio.Event()

    # As two group commits do: link new threads to the tags (a link's foreign key holds a share
    # lock on its tag until commit), then move the tags' counts.
    @transactional
    async def link_then_count(thread_id: int) -> None:
        await tags.insert_links([(thread_id, first), (thread_id, second)])
        linked.append(thread_id)
        if len(linked) == len(threads):
            both_linked.set()
        await go_on.wait()
        await tags.add_to_counts({first: (1, 0), second: (1, 0)})

    units = [asyncio.create_task(link_then_count(thread.id)) for thread in threads]
    await both_linked.wait()
    go_on.set()

    await asyncio.wait_for(asyncio.gather(*units), timeout=10)
    counts = {tag.name: tag.open_count for tag in await tags.tags_of_application(application.id)}
    assert counts == {"first": 2, "second": 2}
