"""Rate limits of the capture API, per application: per client address, and a ceiling for all.

The keys are public (the javascript one sits in every customer's page), so anyone can post with
them; the limits bound what one address, and all of them together, can make an application
store. Counters are kept by the ``limits`` package with its sliding window counter (two counts
per key, the previous minute's weighted by how much of it is still in the window; exact within
the first minute, and two servers that share Redis share one budget): in each worker's memory by
default, in Redis when ``EARFUL_REDIS_URL`` is set. Not its moving window: on memory storage that
one keeps every hit's timestamp and, after nearly every hit, sends each key's list to a thread to
expire it, which cost a capture submit 0.1 to 0.3 ms of CPU (benchmarks/results.md). Every key
holds the application's id, so an office whose address is over the limit of one application
still reaches the others.
"""

from __future__ import annotations

import logging
import math
import time

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.errors import StorageError
from limits.storage import storage_from_string

from app.config import CaptureLimits, Settings
from app.errors import TooManyRequests
from app.i18n import N_
from app.repositories.applications import ApplicationRow

logger = logging.getLogger(__name__)

# The setting (on the application, else the deployment's default) that limits each action.
ACTIONS = {"open": "opens_per_minute", "upload": "uploads_per_minute", "submit": "submits_per_minute"}
# A Redis that does not answer must not hold capture requests: a hit waits at most this long.
REDIS_TIMEOUT_SECONDS = 0.5
# An outage is logged once in this many seconds, not once per request.
LOG_EVERY_SECONDS = 60.0


class CaptureLimiter:
    """The rate limits of one app (one worker), on the storage its settings name."""

    def __init__(self, defaults: CaptureLimits, redis_url: str | None = None, key_prefix: str = "earful"):
        self.defaults = defaults
        if redis_url:
            self.storage = storage_from_string(
                f"async+{redis_url}",
                wrap_exceptions=True,
                key_prefix=key_prefix,
                stream_timeout=REDIS_TIMEOUT_SECONDS,
                connect_timeout=REDIS_TIMEOUT_SECONDS,
            )
        else:
            # memory:// is the synchronous storage; the async strategies need async+memory://.
            self.storage = storage_from_string("async+memory://")
        self._limiter = SlidingWindowCounterRateLimiter(self.storage)
        self._logged_at = -math.inf

    @classmethod
    def from_settings(cls, settings: Settings) -> CaptureLimiter:
        return cls(settings.capture_limits, settings.redis_url, settings.redis_key_prefix)

    async def close(self) -> None:
        """Drop the Redis connections: at shutdown, so that none is left to the garbage collector."""
        client = getattr(getattr(self.storage, "bridge", None), "storage", None)
        if client is not None:
            client.connection_pool.disconnect()

    def limit_of(self, application: ApplicationRow, setting: str) -> int:
        """The application's own limit, else the deployment's default."""
        own: int | None = getattr(application, setting)
        default: int = getattr(self.defaults, setting)
        return own or default

    async def check(self, application: ApplicationRow, action: str, address: str) -> None:
        """Count one ``action`` (open, upload, submit) from ``address``; ``TooManyRequests`` when it
        is over the limit. The address is counted first, so that an address already refused does
        not use up the application's ceiling for everyone else."""
        per_address = RateLimitItemPerMinute(self.limit_of(application, ACTIONS[action]))
        await self._hit(per_address, "capture", action, str(application.id), address)
        if action == "submit":
            ceiling = RateLimitItemPerMinute(self.limit_of(application, "submits_per_minute_total"))
            await self._hit(ceiling, "capture", "submit-all", str(application.id))

    async def _hit(self, item: RateLimitItem, *identifiers: str) -> None:
        """Fail open: when the storage is down the request goes through (capture matters more
        than the limit for the length of an outage), and the outage is logged without the
        caller's address."""
        try:
            if await self._limiter.hit(item, *identifiers):
                return
            stats = await self._limiter.get_window_stats(item, *identifiers)
        except StorageError as error:
            now = time.monotonic()
            if now - self._logged_at >= LOG_EVERY_SECONDS:
                self._logged_at = now
                logger.warning(
                    "rate limit storage unavailable, capture requests pass unlimited: %s",
                    type(error.storage_error).__name__,
                )
            return
        retry_after = max(1, math.ceil(stats.reset_time - time.time()))
        raise TooManyRequests(N_("Too many requests, try again later"), retry_after)
