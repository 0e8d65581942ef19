"""The per-worker caches of what belongs to an application (the capture API's application row
and blocklist, the agents the pages offer to assign), and how a change to an application
reaches every one of them.

Widgets post at the rate their users type, so each worker keeps what the capture API reads on
every request for ``CACHE_SECONDS``. A change (a key rotated, uploads or capture switched off,
the allowed origins, the blocklist) calls :func:`application_changed` after its commit, which
drops the application from this worker's caches at once. Without Redis the other workers see
the change within those two seconds, as before.

With ``EARFUL_REDIS_URL`` the change is also published on one channel (``<prefix>:applications``,
the message is the application's id), and every worker process of every host subscribes to it
(:func:`serve_invalidations`, a background task of app/workers.py) and drops that application
from its caches as the message arrives: the change applies everywhere at once. The two-second
expiry stays: Redis delivers a message at most once, to whoever is subscribed at that moment,
so while a worker is cut off (Redis restarting, a network failure) the expiry is what bounds how
stale an entry gets; on every (re)subscription the worker drops everything it holds, since what
was published meanwhile is lost. A publish that fails is logged and the change still applies
through the expiry.

The client is redis-py's asyncio one, not coredis (which the rate limits use through
``limits``): coredis's pub/sub reconnects inside a consumer task of its own, so the subscriber
never learns that messages were missed, and while Redis is down that task spins (1.2 s of CPU
in 3 s, measured); with its retries off, redis-py raises when the connection goes, and this loop
backs off, subscribes again and drops its caches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger("earful.invalidation")

CACHE_SECONDS = 2.0
# A Redis that does not answer must not hold the request that made a change for long.
PUBLISH_TIMEOUT_SECONDS = 0.5
# The subscriber tries again after this long, doubling up to RETRY_MAX_SECONDS while Redis is away.
RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 10.0
# The subscriber pings an idle connection this often, to notice one that died silently.
HEALTH_CHECK_SECONDS = 10
# An outage is logged once in this many seconds, not once per change.
LOG_EVERY_SECONDS = 60.0

T = TypeVar("T")


class ApplicationCache(Generic[T]):
    """Values read per application (``load``), kept by this worker for ``seconds``: an entry
    expires, or is dropped at once by :meth:`forget`. ``load`` returning None is not kept."""

    def __init__(
        self,
        load: Callable[[int], Awaitable[T | None]],
        seconds: float = CACHE_SECONDS,
        size: int = 10_000,
        shared: bool = True,
    ) -> None:
        """``shared`` caches are the process's own, dropped by :func:`application_changed` and by
        the subscriber; a test makes its own with ``shared=False``."""
        self.load = load
        self.seconds = seconds
        self.size = size
        self._entries: OrderedDict[int, tuple[float, T]] = OrderedDict()
        # Moved by every forget: a value read while one happened may be older than it, and is
        # returned but not kept.
        self._generation = 0
        if shared:
            _SHARED.append(self)

    async def get(self, application_id: int) -> T | None:
        """The application's value, from the cache while it is fresh, else read again."""
        now = time.monotonic()
        entry = self._entries.get(application_id)
        if entry is not None and entry[0] > now:
            return entry[1]
        generation = self._generation
        value = await self.load(application_id)
        if value is None:
            self._entries.pop(application_id, None)
            return None
        if generation == self._generation:
            self._entries[application_id] = (now + self.seconds, value)
            self._entries.move_to_end(application_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def forget(self, application_id: int) -> None:
        """Drop one application's entry."""
        self._generation += 1
        self._entries.pop(application_id, None)

    def clear(self) -> None:
        """Drop every entry."""
        self._generation += 1
        self._entries.clear()


_SHARED: list[ApplicationCache[Any]] = []


class Invalidations:
    """One worker's end of the channel: it publishes the applications changed here, and drops
    from ``caches`` (the process's shared caches by default) those changed anywhere."""

    def __init__(
        self, redis_url: str, key_prefix: str, caches: Sequence[ApplicationCache[Any]] | None = None
    ) -> None:
        self.redis_url = redis_url
        self.channel = f"{key_prefix}:applications"
        self.caches = _SHARED if caches is None else caches
        # Set while subscribed (the tests wait for it).
        self.subscribed = asyncio.Event()
        # Imported here: redis-py takes a noticeable part of a worker's start, and only
        # deployments with Redis need it.
        from redis.exceptions import RedisError

        self._errors: tuple[type[Exception], ...] = (RedisError, OSError)
        self._publisher = self._client(socket_timeout=PUBLISH_TIMEOUT_SECONDS)
        self._logged_at = -math.inf
        self._subscribed_before = False

    def _client(self, **options: Any) -> Redis:
        """A client of the deployment's Redis that never retries (the callers do, their way)."""
        from redis.asyncio import Redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        client: Redis = Redis.from_url(
            self.redis_url,
            socket_connect_timeout=PUBLISH_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 0),
            **options,
        )
        return client

    async def publish(self, application_id: int) -> None:
        """Tell every subscribed worker that the application changed; a failure is logged, and
        the other workers see the change when their entries expire."""
        try:
            await self._publisher.publish(self.channel, str(application_id))
        except self._errors as error:
            self._log_outage("could not publish a change (others see it within %.0f s): %s", error)

    def drop(self, application_id: int) -> None:
        """Drop an application from this worker's caches."""
        for cache in self.caches:
            cache.forget(application_id)

    def drop_all(self) -> None:
        """Drop everything this worker's caches hold."""
        for cache in self.caches:
            cache.clear()

    async def run(self, stop: asyncio.Event) -> None:
        """Subscribe and apply what arrives until ``stop`` is set; when Redis goes away, try
        again after a growing pause (entries meanwhile expire after CACHE_SECONDS)."""
        stopping = asyncio.ensure_future(stop.wait())
        delay = RETRY_FIRST_SECONDS
        try:
            while not stop.is_set():
                listening = asyncio.ensure_future(self._listen())
                await asyncio.wait({listening, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if not listening.done():
                    listening.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await listening
                    return
                error = listening.exception()
                if isinstance(error, self._errors):
                    self._log_outage("subscriber cut off, caches expire after %.0f s meanwhile: %s", error)
                else:  # a bug: say so, and go on as for an outage
                    logger.error("subscriber failed", exc_info=error)
                delay = RETRY_FIRST_SECONDS if self._subscribed_before else min(delay * 2, RETRY_MAX_SECONDS)
                if await _stopped_within(stop, delay):
                    return
        finally:
            stopping.cancel()

    async def _listen(self) -> None:
        """One subscription, until its connection fails (which raises) or the task is cancelled."""
        self._subscribed_before = False
        client = self._client(socket_keepalive=True, health_check_interval=HEALTH_CHECK_SECONDS)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.channel)
            self.drop_all()  # what was published before this subscription is lost
            self._subscribed_before = True
            self.subscribed.set()
            if math.isfinite(self._logged_at):
                logger.info("subscribed again to %s", self.channel)
                self._logged_at = -math.inf
            while True:
                # A timeout, so that the connection is pinged when idle (HEALTH_CHECK_SECONDS).
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is not None:
                    self._received(message.get("data"))
        finally:
            self.subscribed.clear()
            with contextlib.suppress(*self._errors):
                await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
            with contextlib.suppress(*self._errors):
                await client.aclose()

    def _received(self, data: object) -> None:
        if isinstance(data, bytes) and data.isdigit():
            self.drop(int(data))

    def _log_outage(self, message: str, error: BaseException) -> None:
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_SECONDS:
            self._logged_at = now
            logger.warning(message, CACHE_SECONDS, type(error).__name__)

    async def close(self) -> None:
        """Drop the publisher's connection (at shutdown)."""
        with contextlib.suppress(*self._errors):
            await self._publisher.aclose()


_current: dict[str, Invalidations] = {}


async def application_changed(application_id: int) -> None:
    """Call after the commit of a change to what the capture API caches of an application: it
    applies at once in this worker and, with Redis, in every worker of every host."""
    for cache in _SHARED:
        cache.forget(application_id)
    hub = _current.get("hub")
    if hub is not None:
        await hub.publish(application_id)


def forget_all() -> None:
    """Drop every entry of every shared cache (when the database underneath changes, as in the
    tests)."""
    for cache in _SHARED:
        cache.clear()


async def serve_invalidations(redis_url: str, key_prefix: str, stop: asyncio.Event) -> None:
    """Publish this process's changes and apply everyone's, until ``stop`` is set (a background
    task of each web worker when EARFUL_REDIS_URL is set)."""
    hub = Invalidations(redis_url, key_prefix)
    _current["hub"] = hub
    try:
        await hub.run(stop)
    finally:
        if _current.get("hub") is hub:
            del _current["hub"]
        await hub.close()


async def _stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    """Wait up to ``seconds``; True when ``stop`` was set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    return stop.is_set()
