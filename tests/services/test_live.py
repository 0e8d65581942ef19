"""Live events: announced in the change's transaction, heard after its commit by the subscribers
of its application (and thread) only; nothing on rollback; bounded queues; typing.

On PostgreSQL every event goes through a real NOTIFY and the hub's own LISTEN connection; on
SQLite through the in-process fan-out after the commit.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import asyncpg
import pytest
from tortoise import connections

from app.db import atomic, transactional
from app.repositories.live import MAX_PAYLOAD
from app.services import live
from app.services.live import (
    CATCH_UP,
    CLOSED,
    QUEUE_SIZE,
    REPLY,
    THREADS,
    TYPING,
    Hub,
    LiveEvent,
    Subscription,
    Typing,
    decode,
    encode,
    hub,
)
from tests.factories import make_application, make_customer_reply, make_reply, make_thread, make_user

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WAIT = 3.0  # seconds an expected event may take (a NOTIFY arrives within milliseconds)
QUIET = 0.3  # seconds of silence that say no event comes


@pytest.fixture
async def started(db):
    """The hub, listening on PostgreSQL as a serving process does."""
    await live.start()
    yield hub
    await live.stop()


async def next_event(subscription: Subscription, wait: float = WAIT):
    return await subscription.next(wait)


# --- the wire format ---------------------------------------------------------------------------


def test_events_go_through_the_wire_format_unchanged():
    events = [
        LiveEvent(THREADS, 7, ids=(1, 2, 3)),
        LiveEvent(REPLY, 7, 42, (99,), 5),
        LiveEvent(REPLY, 8, 43, (100,), None),
        LiveEvent(TYPING, 7, 42, (), 5),
    ]

    [payload] = encode(events)

    assert decode(payload) == events


def test_a_huge_batch_is_split_into_payloads_postgresql_takes():
    events = [LiveEvent(THREADS, 1, ids=tuple(range(10**9, 10**9 + 3000))), LiveEvent(THREADS, 2, ids=(5,))]

    payloads = encode(events)

    assert len(payloads) > 1
    assert all(len(payload.encode()) < MAX_PAYLOAD for payload in payloads)
    heard = [event for payload in payloads for event in decode(payload)]
    assert [i for e in heard if e.application_id == 1 for i in e.ids] == list(events[0].ids)
    assert [e.ids for e in heard if e.application_id == 2] == [(5,)]


@pytest.mark.parametrize(
    "payload", ["[", "{}", '[["x", 1, []]]', '[["t", "1", [2]]]', '[["r", 1, 2, ["3"], 0]]']
)
def test_a_malformed_payload_is_refused(payload):
    with pytest.raises((ValueError, TypeError, KeyError)):
        decode(payload)


def test_a_malformed_notification_is_ignored():
    quiet = Hub()

    quiet.received("not json")  # logged, nothing raised


# --- fan-out after commit ----------------------------------------------------------------------


async def test_a_new_thread_reaches_its_applications_inbox_after_the_commit(started):
    application = await make_application(await make_user())
    async with hub.subscribe(application.id) as inbox:
        thread = await make_thread(application)

        event = await next_event(inbox)

    assert event == LiveEvent(THREADS, application.id, ids=(thread.id,))


async def test_another_applications_subscribers_hear_nothing(started):
    owner = await make_user()
    application, other = await make_application(owner), await make_application(owner)
    async with hub.subscribe(other.id) as other_inbox, hub.subscribe(application.id) as inbox:
        thread = await make_thread(application)
        await make_reply(owner, application, thread)

        assert (await next_event(inbox)).ids == (thread.id,)
        assert await next_event(other_inbox, QUIET) is None


async def test_nothing_is_heard_of_a_change_that_rolls_back(started):
    application = await make_application(await make_user())

    @transactional
    async def announce_then_fail() -> None:
        await live.announce_threads({application.id: [123456]})
        raise RuntimeError("rolled back")

    async with hub.subscribe(application.id) as inbox:
        with pytest.raises(RuntimeError):
            await announce_then_fail()

        assert await next_event(inbox, QUIET) is None


async def test_an_event_is_heard_only_once_the_transaction_commits(started):
    application = await make_application(await make_user())
    async with hub.subscribe(application.id) as inbox:
        released = asyncio.Event()
        heard_inside: list[object] = []

        async def work() -> None:
            await live.announce_threads({application.id: [654321]})
            heard_inside.append(await inbox.next(QUIET))
            await released.wait()

        unit = asyncio.ensure_future(atomic(work))
        await asyncio.sleep(QUIET * 2)
        released.set()
        await unit

        assert heard_inside == [None]
        assert (await next_event(inbox)).ids == (654321,)


ANOTHER_PROCESS = """
import asyncio, sys
from app.db import close_database, open_database, transactional
from app.services import live

async def main(url, application_id):
    await open_database(url)
    await transactional(lambda: live.announce_threads({application_id: [424242]}))()
    await close_database()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def test_another_process_change_is_heard_on_postgresql(started, backend, db):
    if backend != "postgres":
        pytest.skip("SQLite fans out in the process that made the change")
    application = await make_application(await make_user())
    env = {key: value for key, value in os.environ.items() if not key.startswith("EARFUL_")}
    async with hub.subscribe(application.id) as inbox:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", ANOTHER_PROCESS, db, str(application.id), cwd=PROJECT_ROOT, env=env
        )
        assert await asyncio.wait_for(process.wait(), 60) == 0

        assert await next_event(inbox) == LiveEvent(THREADS, application.id, ids=(424242,))


async def test_a_reply_reaches_its_threads_page_only(started):
    owner = await make_user()
    application = await make_application(owner)
    thread = await make_thread(application, email="rita@example.org")
    other_thread = await make_thread(application)
    async with (
        hub.subscribe(application.id, thread.id) as page,
        hub.subscribe(application.id, other_thread.id) as other_page,
        hub.subscribe(application.id) as inbox,
    ):
        reply = await make_reply(owner, application, thread)
        answer = await make_customer_reply(application, thread, "rita@example.org")

        assert await next_event(page) == LiveEvent(REPLY, application.id, thread.id, (reply.id,), owner.id)
        assert await next_event(page) == LiveEvent(REPLY, application.id, thread.id, (answer.id,), None)
        assert await next_event(other_page, QUIET) is None
        # The inbox hears no reply; the threads made before it subscribed may still be announced.
        while (event := await next_event(inbox, QUIET)) is not None:
            assert event.kind == THREADS and set(event.ids) <= {thread.id, other_thread.id}


async def test_a_group_commit_sends_one_notification_for_its_batch(started, queries):
    application = await make_application(await make_user())
    await make_thread(application)  # warm: tags and the writer exist
    async with hub.subscribe(application.id) as inbox:
        queries.statements.clear()
        threads = await asyncio.gather(*(make_thread(application) for _ in range(6)))

        wanted = {thread.id for thread in threads}
        heard: set[int] = set()
        while heard != wanted:  # the warm thread's notification may come first
            event = await next_event(inbox)
            assert isinstance(event, LiveEvent)
            heard |= set(event.ids) & wanted

    notifications = [statement for statement in queries.statements if "pg_notify" in statement]
    if connections.get("default").capabilities.dialect == "postgres":
        assert 1 <= len(notifications) < len(threads)  # one per transaction, not one per thread
    else:
        assert notifications == []


# --- typing ------------------------------------------------------------------------------------


async def test_typing_reaches_the_threads_page_and_names_the_writer_to_others(started):
    ann, bob = await make_user(name="Ann"), await make_user(name="Bob")
    application = await make_application(ann)
    thread = await make_thread(application)
    async with hub.subscribe(application.id, thread.id) as page:
        await live.typing(ann, application, thread)

        assert await next_event(page) == LiveEvent(TYPING, application.id, thread.id, (), ann.id)

    assert [user.name for user in await live.writers(bob, thread)] == ["Ann"]
    assert await live.writers(ann, thread) == []  # nobody is told of their own typing


async def test_typing_expires_and_a_reply_ends_it(started, monkeypatch):
    ann, bob = await make_user(name="Ann"), await make_user(name="Bob")
    application = await make_application(ann)
    thread = await make_thread(application)
    now = [1000.0]
    monkeypatch.setattr(hub, "clock", lambda: now[0])
    async with hub.subscribe(application.id, thread.id) as page:
        await live.typing(ann, application, thread)
        await next_event(page)
        assert [u.name for u in await live.writers(bob, thread)] == ["Ann"]

        now[0] += live.TYPING_SECONDS + 0.1
        assert await live.writers(bob, thread) == []

        now[0] += live.PING_INTERVAL
        await live.typing(ann, application, thread)
        await next_event(page)
        await make_reply(ann, application, thread)
        await next_event(page)
        assert await live.writers(bob, thread) == []


async def test_pings_closer_than_the_interval_are_dropped(started, monkeypatch):
    ann = await make_user()
    application = await make_application(ann)
    thread = await make_thread(application)
    now = [50.0]
    monkeypatch.setattr(hub, "clock", lambda: now[0])
    async with hub.subscribe(application.id, thread.id) as page:
        await live.typing(ann, application, thread)
        await live.typing(ann, application, thread)
        now[0] += live.PING_INTERVAL
        await live.typing(ann, application, thread)

        assert (await next_event(page)).kind == TYPING
        assert (await next_event(page)).kind == TYPING
        assert await next_event(page, QUIET) is None


def test_typing_remembers_a_bounded_number_of_writers():
    state = Typing(seconds=5, size=3)
    for user in range(5):
        state.note(1, user, now=0)

    assert state.writers(1, now=1) == [2, 3, 4]
    assert state.writers(1, now=6) == []


# --- bounds, stopping, reconnecting ------------------------------------------------------------


async def test_a_slow_subscriber_is_told_to_catch_up_instead_of_growing():
    subscription = Subscription(1, None, size=QUEUE_SIZE)
    for number in range(QUEUE_SIZE + 5):
        subscription.offer(LiveEvent(THREADS, 1, ids=(number,)))

    assert await subscription.next(QUIET) is CATCH_UP  # what waited is dropped: the page catches up
    later = []
    while (event := await subscription.next(QUIET)) is not None:
        later.append(event)
    assert [event.ids for event in later] == [(number,) for number in range(QUEUE_SIZE + 1, QUEUE_SIZE + 5)]


async def test_stopping_closes_every_stream(db):
    await live.start()
    async with hub.subscribe(1) as inbox:
        inbox.offer(LiveEvent(THREADS, 1, ids=(1,)))

        await live.stop()

        assert await inbox.next(QUIET) is CLOSED
    assert hub.subscriber_count() == 0


async def test_a_lost_listen_connection_is_replaced_and_pages_catch_up(started, backend, db, monkeypatch):
    if backend != "postgres":
        pytest.skip("SQLite has no LISTEN connection")
    monkeypatch.setattr(live, "RECONNECT_DELAYS", (0.05,))
    application = await make_application(await make_user())
    async with hub.subscribe(application.id) as inbox:
        admin = await asyncpg.connect("postgresql://" + db.split("://", 1)[1])
        try:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND datname = current_database() AND query LIKE 'LISTEN%'"
            )
        finally:
            await admin.close()

        assert await next_event(inbox) is CATCH_UP
        assert hub.listening
        thread = await make_thread(application)
        assert (await next_event(inbox)).ids == (thread.id,)
