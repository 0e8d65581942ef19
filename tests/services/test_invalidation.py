"""The capture caches and their invalidation (app/services/invalidation.py): entries expire after
two seconds, a change drops them at once in its worker, and through Redis in every other worker.

The Redis tests use the machine's server (127.0.0.1:6379) on a channel of their own; the test
of a Redis that goes away and comes back runs a private ``redis-server`` on a free port.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest

from app.services import applications, blocklist, invalidation
from app.services.invalidation import ApplicationCache, Invalidations, serve_invalidations
from tests.browser.live import free_port
from tests.factories import make_application, make_user

REDIS_URL = "redis://127.0.0.1:6379/13"


class Reads:
    """A loader that counts its reads and returns what ``values`` holds now."""

    def __init__(self) -> None:
        self.values: dict[int, str] = {}
        self.count = 0

    async def __call__(self, application_id: int) -> str | None:
        self.count += 1
        return self.values.get(application_id)


def new_cache(reads: Reads, seconds: float = 60.0) -> ApplicationCache[str]:
    return ApplicationCache(reads, seconds, shared=False)


async def wait_for(condition: Callable[[], Awaitable[bool]], seconds: float = 2.0) -> float:
    """Wait until ``condition`` holds; how long it took (fails after ``seconds``)."""
    started = time.monotonic()
    while not await condition():
        assert time.monotonic() - started < seconds, "the condition never held"
        await asyncio.sleep(0.005)
    return time.monotonic() - started


# --- the cache ------------------------------------------------------------------------------


async def test_an_entry_is_read_once_while_fresh():
    reads = Reads()
    reads.values[1] = "one"
    cache = new_cache(reads)

    assert [await cache.get(1) for _ in range(3)] == ["one"] * 3
    assert reads.count == 1


async def test_an_entry_is_read_again_once_expired():
    reads = Reads()
    reads.values[1] = "one"
    cache = new_cache(reads, seconds=0.05)
    await cache.get(1)
    reads.values[1] = "changed"

    await asyncio.sleep(0.06)

    assert await cache.get(1) == "changed"


async def test_a_forgotten_entry_is_read_again_at_once():
    reads = Reads()
    reads.values[1] = "one"
    cache = new_cache(reads)
    await cache.get(1)
    reads.values[1] = "changed"

    cache.forget(1)

    assert await cache.get(1) == "changed"


async def test_nothing_is_kept_for_an_application_that_does_not_exist():
    reads = Reads()
    cache = new_cache(reads)

    assert await cache.get(5) is None
    assert await cache.get(5) is None
    assert reads.count == 2


async def test_a_value_read_while_a_change_was_forgotten_is_not_kept():
    """A request that read the row before a change, and finishes after the change was dropped,
    must not put the old row back for two seconds."""
    reads = Reads()
    reads.values[1] = "old"
    gate = asyncio.Event()
    cache: ApplicationCache[str]

    async def slow_read(application_id: int) -> str | None:
        value = await reads(application_id)
        await gate.wait()
        return value

    cache = ApplicationCache(slow_read, 60.0, shared=False)
    reading = asyncio.create_task(cache.get(1))
    await asyncio.sleep(0)
    reads.values[1] = "new"
    cache.forget(1)
    gate.set()

    assert await reading == "old"  # what that request read
    assert await cache.get(1) == "new"  # not kept: read again


async def test_the_oldest_entries_go_past_the_size():
    reads = Reads()
    reads.values.update({1: "a", 2: "b", 3: "c"})
    cache = ApplicationCache(reads, 60.0, size=2, shared=False)
    for application_id in (1, 2, 3):
        await cache.get(application_id)

    await cache.get(1)

    assert reads.count == 4


# --- through Redis ----------------------------------------------------------------------------


@pytest.fixture
def prefix() -> str:
    return f"earful-test-{uuid.uuid4().hex}"


class Worker:
    """A worker's caches with its end of the channel, subscribed while the test runs."""

    def __init__(self, url: str, prefix: str) -> None:
        self.reads = Reads()
        self.cache = new_cache(self.reads)
        self.hub = Invalidations(url, prefix, [self.cache])
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self.hub.run(self.stop))

    async def close(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 5)
        await self.hub.close()


@pytest.fixture
async def workers(prefix: str) -> AsyncIterator[Callable[[], Awaitable[Worker]]]:
    started: list[Worker] = []

    async def start(url: str = REDIS_URL) -> Worker:
        worker = Worker(url, prefix)
        started.append(worker)
        await asyncio.wait_for(worker.hub.subscribed.wait(), 5)
        return worker

    yield start
    for worker in started:
        await worker.close()


async def test_a_change_published_by_one_worker_is_dropped_by_the_other_at_once(workers):
    one, two = await workers(), await workers()
    for worker in (one, two):
        worker.reads.values[7] = "key A"
        assert await worker.cache.get(7) == "key A"
    two.reads.values[7] = "key B"  # the row as the database now holds it

    await one.hub.publish(7)
    took = await wait_for(lambda: _changed(two))

    assert took < 0.5  # the two-second expiry would take 2 s
    assert await two.cache.get(7) == "key B"


async def _changed(worker: Worker) -> bool:
    return await worker.cache.get(7) == "key B"


async def test_a_message_drops_only_its_application(workers):
    one, two = await workers(), await workers()
    two.reads.values.update({7: "seven", 8: "eight"})
    await two.cache.get(7)
    await two.cache.get(8)

    await one.hub.publish(7)
    await wait_for(lambda: _read_again(two, 3))

    await two.cache.get(8)
    assert two.reads.count == 3


async def _read_again(worker: Worker, count: int) -> bool:
    await worker.cache.get(7)
    return worker.reads.count >= count


async def test_a_rotated_key_reaches_another_workers_capture_cache(db, prefix, workers):
    owner = await make_user()
    application = await make_application(owner)
    other = await workers()  # another worker: its own cache of applications
    other.cache.load = applications._capture_cache.load
    old_key = application.key_api
    assert (await other.cache.get(application.id)).key_api == old_key
    stop = asyncio.Event()
    here = asyncio.create_task(serve_invalidations(REDIS_URL, prefix, stop))
    try:
        await wait_for(lambda: _serving())

        new_key = await applications.rotate_key(application, "api")

        took = await wait_for(lambda: _key_is(other, application.id, new_key))
    finally:
        stop.set()
        await asyncio.wait_for(here, 5)
    assert took < 0.5


async def _serving() -> bool:
    hub = invalidation._current.get("hub")
    return hub is not None and hub.subscribed.is_set()


async def _key_is(worker: Worker, application_id: int, key: str) -> bool:
    found = await worker.cache.get(application_id)
    return found is not None and found.key_api == key


async def test_a_blocklist_change_reaches_another_workers_cache(db, prefix, workers):
    owner = await make_user()
    application = await make_application(owner)
    other = await workers()
    other.cache.load = blocklist._cache.load
    assert not (await other.cache.get(application.id)).blocks_email("spam@example.org")
    stop = asyncio.Event()
    here = asyncio.create_task(serve_invalidations(REDIS_URL, prefix, stop))
    try:
        await wait_for(lambda: _serving())

        await blocklist.add_entry(application, "spam@example.org")

        took = await wait_for(lambda: _blocks(other, application.id))
    finally:
        stop.set()
        await asyncio.wait_for(here, 5)
    assert took < 0.5


async def _blocks(worker: Worker, application_id: int) -> bool:
    return (await worker.cache.get(application_id)).blocks_email("spam@example.org")


async def test_a_change_drops_the_entry_in_its_own_worker_without_redis(db):
    owner = await make_user()
    application = await make_application(owner)
    await applications.authenticate_capture(application.id, application.key_api, "missing")

    await applications.rotate_key(application, "api")

    with pytest.raises(Exception, match="Not authorized"):
        await applications.authenticate_capture(application.id, application.key_api.swapcase(), "missing")
    assert invalidation._current == {}


async def test_a_redis_out_of_reach_neither_fails_a_change_nor_stops_the_subscriber(prefix, caplog):
    hub = Invalidations("redis://127.0.0.1:1/0", prefix, [])
    stop = asyncio.Event()
    with caplog.at_level(logging.WARNING, "earful.invalidation"):
        await hub.publish(7)
        await hub.publish(8)
        task = asyncio.create_task(hub.run(stop))
        await asyncio.sleep(0.2)
        assert not task.done()
        stop.set()
        await asyncio.wait_for(task, 2)
    await hub.close()

    assert caplog.text.count("could not publish a change") == 1  # once per minute, not per change


class PrivateRedis:
    """A redis-server of the test's own on a free port, to stop and start again."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.server: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.server = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(5)
            self.server = None


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    redis = PrivateRedis()
    yield redis
    redis.stop()


async def test_a_subscriber_cut_off_subscribes_again_and_drops_what_it_missed(private_redis, workers):
    private_redis.start()
    one, two = await workers(private_redis.url), await workers(private_redis.url)
    two.reads.values[7] = "before"
    await two.cache.get(7)

    private_redis.stop()
    await wait_for(lambda: _not_subscribed(two))
    two.reads.values[7] = "changed while Redis was away"  # its message is lost
    private_redis.start()

    await asyncio.wait_for(two.hub.subscribed.wait(), 5)
    assert await two.cache.get(7) == "changed while Redis was away"
    await asyncio.wait_for(one.hub.subscribed.wait(), 5)
    two.reads.values[7] = "after"
    await one.hub.publish(7)
    await wait_for(lambda: _value_is(two, "after"))


async def _not_subscribed(worker: Worker) -> bool:
    return not worker.hub.subscribed.is_set()


async def _value_is(worker: Worker, value: str) -> bool:
    return await worker.cache.get(7) == value
