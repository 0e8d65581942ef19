"""Live updates: what the open inbox and thread pages hear of, from every process.

A writer announces its change inside its transaction (``announce_threads`` by the thread
writer's group commit, ``announce_reply`` by the replies' writers), with ids only. On PostgreSQL
that is one NOTIFY per call (app.repositories.live), delivered to every process's LISTEN
connection when the transaction commits and never when it rolls back; each process then fans
the events out to its subscribers (the pages' event streams, app/views/live.py). On SQLite,
which has no such channel, the process that committed fans them out itself after the commit
(``app.db.after_commit``): with several worker processes on one SQLite file, a page hears of the
changes its own process made, and of the others only when it reloads.

A subscription is scoped to one application (and, for a thread page, one thread): an event of
another application never reaches it. Its queue is bounded: a client too slow to keep up loses
events and is told to catch up (``CATCH_UP``), which the pages do by asking for what is newer than
what they show. A notification may also be missed while the LISTEN connection is replaced;
pages catch up on every reconnect the same way.

An agent writing a reply pings ``typing`` (throttled); every process keeps who is typing on which
thread for ``TYPING_SECONDS``, so the thread page can ask any process who is writing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from app.db import after_commit, in_open_transaction
from app.repositories import live as channel
from app.repositories.accounts import UserRow, users_by_ids
from app.repositories.applications import ApplicationRow
from app.repositories.replies import ReplyRow
from app.repositories.threads import ThreadRow

log = logging.getLogger("earful.live")

THREADS: Final = "threads"  # new threads of an application: ``ids`` are theirs
REPLY: Final = "reply"  # a new reply, note or customer answer: ``ids`` is the reply's
TYPING: Final = "typing"  # an agent is writing a reply on a thread
KINDS = {"t": THREADS, "r": REPLY, "w": TYPING}
CODES = {kind: code for code, kind in KINDS.items()}

QUEUE_SIZE = 100  # events waiting per subscriber before it is told to catch up
TYPING_SECONDS = 6.0  # how long "is writing" lasts after a ping
PING_INTERVAL = 2.0  # a user's pings on one thread closer than this are dropped
MAX_TYPING = 10_000  # threads and pings remembered, beyond which the oldest are dropped
RECONNECT_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0)  # seconds between attempts to LISTEN again


@dataclass(frozen=True)
class LiveEvent:
    """Something a page may want to show: ids only, never content."""

    kind: str
    application_id: int
    feedback_id: int | None = None
    ids: tuple[int, ...] = ()
    user_id: int | None = None


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


CATCH_UP: Final = _Marker("CATCH_UP")  # events may have been missed: the page should catch up
CLOSED: Final = _Marker("CLOSED")  # the process is stopping: the stream ends


# --- the wire format -------------------------------------------------------------------------


def _code(event: LiveEvent) -> list[object]:
    if event.kind == THREADS:
        return [CODES[THREADS], event.application_id, list(event.ids)]
    return [CODES[event.kind], event.application_id, event.feedback_id, list(event.ids), event.user_id or 0]


def encode(events: Sequence[LiveEvent]) -> list[str]:
    """The payloads that carry ``events``: compact JSON, one payload unless they would not fit
    in one notification (a batch of thousands of threads)."""
    payloads: list[str] = []
    batch: list[list[object]] = []
    size = 2
    for event in events:
        coded = _code(event)
        length = len(json.dumps(coded, separators=(",", ":"))) + 1
        if batch and size + length > channel.MAX_PAYLOAD:
            payloads.append(json.dumps(batch, separators=(",", ":")))
            batch, size = [], 2
        if event.kind == THREADS and length > channel.MAX_PAYLOAD:  # split one application's ids
            half = len(event.ids) // 2
            payloads += encode(
                [
                    LiveEvent(THREADS, event.application_id, ids=event.ids[:half]),
                    LiveEvent(THREADS, event.application_id, ids=event.ids[half:]),
                ]
            )
            continue
        batch.append(coded)
        size += length
    if batch:
        payloads.append(json.dumps(batch, separators=(",", ":")))
    return payloads


def _ids(value: object) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(type(item) is int for item in value):
        raise ValueError("ids")
    return tuple(value)


def decode(payload: str) -> list[LiveEvent]:
    """The events of a payload; a malformed one raises ValueError."""
    events: list[LiveEvent] = []
    items = json.loads(payload)
    if not isinstance(items, list):
        raise ValueError("payload")
    for item in items:
        if not isinstance(item, list) or not item or item[0] not in KINDS:
            raise ValueError("event")
        kind = KINDS[item[0]]
        if kind == THREADS and len(item) == 3 and type(item[1]) is int:
            events.append(LiveEvent(THREADS, item[1], ids=_ids(item[2])))
        elif (
            kind != THREADS
            and len(item) == 5
            and all(type(value) is int for value in (item[1], item[2], item[4]))
        ):
            events.append(LiveEvent(kind, item[1], item[2], _ids(item[3]), item[4] or None))
        else:
            raise ValueError("event")
    return events


# --- subscribers -----------------------------------------------------------------------------


class Subscription:
    """One open page's stream: the events of its application (and thread), in a bounded queue."""

    def __init__(self, application_id: int, feedback_id: int | None, size: int = QUEUE_SIZE) -> None:
        self.application_id = application_id
        self.feedback_id = feedback_id
        self._queue: asyncio.Queue[LiveEvent | _Marker] = asyncio.Queue(size)

    def wants(self, event: LiveEvent) -> bool:
        """An inbox hears of new threads; a thread page of its thread's replies and typing."""
        if event.application_id != self.application_id:
            return False
        if self.feedback_id is None:
            return event.kind == THREADS
        return event.kind in (REPLY, TYPING) and event.feedback_id == self.feedback_id

    def offer(self, event: LiveEvent | _Marker) -> None:
        """Queue an event without waiting. When the queue is full (or the process stops), what
        waits is dropped for one CATCH_UP (or CLOSED): the page asks for what is newer than what
        it shows, which covers every event dropped."""
        if event is CLOSED or event is CATCH_UP:
            self._drain()
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self._drain()
            self._queue.put_nowait(CATCH_UP)

    def _drain(self) -> None:
        while not self._queue.empty():
            self._queue.get_nowait()

    async def next(self, wait: float) -> LiveEvent | _Marker | None:
        """The next event, CATCH_UP, CLOSED, or None when nothing came within ``wait`` seconds."""
        try:
            return await asyncio.wait_for(self._queue.get(), wait)
        except TimeoutError:
            return None


class Typing:
    """Who is writing a reply on which thread, for TYPING_SECONDS after each ping."""

    def __init__(self, seconds: float = TYPING_SECONDS, size: int = MAX_TYPING) -> None:
        self.seconds = seconds
        self.size = size
        self._until: dict[tuple[int, int], float] = {}  # (thread, user) -> when it ends

    def note(self, feedback_id: int, user_id: int, now: float) -> None:
        if len(self._until) >= self.size:
            self._forget_expired(now)
            while len(self._until) >= self.size:
                del self._until[next(iter(self._until))]
        self._until.pop((feedback_id, user_id), None)  # newest last, for the eviction above
        self._until[(feedback_id, user_id)] = now + self.seconds

    def stop(self, feedback_id: int, user_id: int) -> None:
        self._until.pop((feedback_id, user_id), None)

    def writers(self, feedback_id: int, now: float) -> list[int]:
        """The users writing on the thread now, by id."""
        return sorted(
            user for (thread, user), until in self._until.items() if thread == feedback_id and until > now
        )

    def _forget_expired(self, now: float) -> None:
        for key in [key for key, until in self._until.items() if until <= now]:
            del self._until[key]

    def clear(self) -> None:
        self._until.clear()


class Hub:
    """The subscribers of this process, the typing state, and the LISTEN connection."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.typing = Typing()
        self._subscriptions: dict[int, set[Subscription]] = {}
        self._pings: dict[tuple[int, int], float] = {}
        self._users = 0  # starts not yet matched by a stop
        self._listener: channel.Listener | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._stopping = False

    # Fan-out ---------------------------------------------------------------------------------

    def deliver(self, events: Iterable[LiveEvent]) -> None:
        """Hand events to this process's subscribers (and note typing); never waits."""
        now = self.clock()
        for event in events:
            if event.kind == TYPING and event.feedback_id is not None and event.user_id is not None:
                self.typing.note(event.feedback_id, event.user_id, now)
            elif event.kind == REPLY and event.feedback_id is not None and event.user_id is not None:
                self.typing.stop(event.feedback_id, event.user_id)
            for subscription in list(self._subscriptions.get(event.application_id, ())):
                if subscription.wants(event):
                    subscription.offer(event)

    def received(self, payload: str) -> None:
        """A notification from the channel (any process's): its events, to the subscribers."""
        try:
            events = decode(payload)
        except (ValueError, TypeError, KeyError):
            log.warning("ignored a malformed live notification: %.200s", payload)
            return
        self.deliver(events)

    @contextlib.asynccontextmanager
    async def subscribe(
        self, application_id: int, feedback_id: int | None = None
    ) -> AsyncIterator[Subscription]:
        """A subscription for the block (look the application and thread up as the user first)."""
        subscription = Subscription(application_id, feedback_id)
        self._subscriptions.setdefault(application_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            subscribers = self._subscriptions.get(application_id)
            if subscribers is not None:
                subscribers.discard(subscription)
                if not subscribers:
                    del self._subscriptions[application_id]

    def subscriber_count(self) -> int:
        return sum(len(subscribers) for subscribers in self._subscriptions.values())

    def ping_allowed(self, feedback_id: int, user_id: int) -> bool:
        """Whether a typing ping goes out: at most one per user and thread every PING_INTERVAL."""
        now = self.clock()
        key = (feedback_id, user_id)
        if now - self._pings.get(key, -PING_INTERVAL) < PING_INTERVAL:
            return False
        if len(self._pings) >= MAX_TYPING:
            self._pings = {k: at for k, at in self._pings.items() if now - at < PING_INTERVAL}
        self._pings[key] = now
        return True

    # Start and stop ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen for every process's notifications (PostgreSQL); nothing to open on SQLite.
        Each start is matched by a stop; the first opens, the last closes."""
        self._users += 1
        if self._users > 1:
            return
        self._stopping = False
        if channel.has_channel():
            self._listener = await channel.Listener.open(self.received, self._lost)

    async def stop(self) -> None:
        """End every stream of this process (their pages reconnect elsewhere) and stop
        listening."""
        self._users = max(0, self._users - 1)
        if self._users:
            return
        self._stopping = True
        for subscribers in list(self._subscriptions.values()):
            for subscription in list(subscribers):
                subscription.offer(CLOSED)
        if self._reconnecting is not None:
            self._reconnecting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reconnecting
            self._reconnecting = None
        if self._listener is not None:
            await self._listener.close()
            self._listener = None
        self.typing.clear()
        self._pings.clear()

    @property
    def listening(self) -> bool:
        return self._listener is not None and self._listener.alive

    def _lost(self) -> None:
        """The LISTEN connection died: open another, and have every page catch up meanwhile."""
        if self._stopping or self._reconnecting is not None:
            return
        log.warning("the live channel's connection was lost; listening again")
        self._reconnecting = asyncio.get_running_loop().create_task(self._listen_again())

    async def _listen_again(self) -> None:
        attempt = 0
        while not self._stopping:
            await asyncio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])
            attempt += 1
            try:
                listener = await channel.Listener.open(self.received, self._lost)
            except Exception as error:  # the database may be away for a while
                log.warning("listening again failed (%s); retrying", error)
                continue
            self._listener, self._reconnecting = listener, None
            for subscribers in list(self._subscriptions.values()):
                for subscription in list(subscribers):
                    subscription.offer(CATCH_UP)  # events may have been missed meanwhile
            if not listener.alive:  # lost again while this task still ran: its loss was ignored
                self._lost()
            return


hub = Hub()


# --- what writers and pages call -------------------------------------------------------------


async def _announce(events: list[LiveEvent]) -> None:
    if not events:
        return
    if channel.has_channel():
        for payload in encode(events):
            await channel.notify(payload)
    else:
        after_commit(lambda: hub.deliver(events))


async def announce_threads(threads_by_application: Mapping[int, Sequence[int]]) -> None:
    """Tell the open inboxes of new threads, inside the transaction that writes them: one
    notification for the whole batch."""
    assert in_open_transaction(), "live events are sent in the transaction of their change"
    await _announce(
        [
            LiveEvent(THREADS, application_id, ids=tuple(ids))
            for application_id, ids in threads_by_application.items()
            if ids
        ]
    )


async def announce_reply(reply: ReplyRow) -> None:
    """Tell the open pages of the thread of a new reply, note or customer answer, inside the
    transaction that writes it."""
    assert in_open_transaction(), "live events are sent in the transaction of their change"
    await _announce([LiveEvent(REPLY, reply.application_id, reply.feedback_id, (reply.id,), reply.user_id)])


async def typing(user: UserRow, application: ApplicationRow, thread: ThreadRow) -> None:
    """Tell the thread's open pages that the user is writing a reply (look the thread up as the
    user first). Pings closer than PING_INTERVAL are dropped; nothing is written."""
    if not hub.ping_allowed(thread.id, user.id):
        return
    event = LiveEvent(TYPING, application.id, thread.id, (), user.id)
    if channel.has_channel():
        for payload in encode([event]):
            await channel.notify(payload)
    else:
        hub.deliver([event])


async def writers(user: UserRow, thread: ThreadRow) -> list[UserRow]:
    """The other agents writing a reply on the thread now, by name."""
    ids = [found for found in hub.typing.writers(thread.id, hub.clock()) if found != user.id]
    return await users_by_ids(ids)


def subscribe(
    application: ApplicationRow, thread: ThreadRow | None = None
) -> contextlib.AbstractAsyncContextManager[Subscription]:
    """Subscribe a page to its application's events (and its thread's), looked up as the user."""
    return hub.subscribe(application.id, None if thread is None else thread.id)


async def start() -> None:
    """Open this process's end of the channel (see :meth:`Hub.start`)."""
    await hub.start()


async def stop() -> None:
    """Close every stream of this process and its end of the channel (see :meth:`Hub.stop`)."""
    await hub.stop()
