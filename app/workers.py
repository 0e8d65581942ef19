"""Background workers of the web server: the search indexer (SQLite), housekeeping (uploads
never attached, old webhook logs), retention (threads past their application's days), webhook
deliveries, with Redis the subscriber that drops changed applications from the capture caches,
and, when e-mail delivery is configured, the outbox and the daily digests."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextvars import ContextVar
from datetime import UTC, datetime

from quart import Quart

from app.config import Settings
from app.logs import job_run
from app.services.attachments import delete_unclaimed, forget_past_upload_days
from app.services.invalidation import serve_invalidations
from app.services.mail.outbox import run_worker
from app.services.notifications import send_digests
from app.services.retention import apply_retention
from app.services.search import run_indexer
from app.services.storage import storage_for
from app.services.webhooks.delivery import run_worker as run_webhook_worker
from app.services.webhooks.upkeep import forget_old_deliveries

logger = logging.getLogger("earful.workers")

STOP_TIMEOUT = 5.0  # then the task is cancelled; deliveries it holds are handed back
HOUSEKEEPING_SECONDS = 3600.0
HOUSEKEEPING_FIRST_DELAY = 60.0
RETENTION_FIRST_DELAY = 90.0
DIGEST_SECONDS = 600.0
DIGEST_FIRST_DELAY = 30.0
# The name of the background worker the current task runs for (None in requests); tasks
# started inside it, such as a shielded transaction, see it too.
background_worker: ContextVar[str | None] = ContextVar("earful_background_worker", default=None)


def start_background_workers(app: Quart, settings: Settings) -> None:
    """Run the search indexer, and the outbox worker when EARFUL_SMTP_URL is set, while the app
    serves.

    They start after the ORM is open and stop before it closes (Quart runs ``while_serving``
    inside ``before_serving`` and ``after_serving``). Every Hypercorn worker process runs one of
    each: outbox rows are claimed one by one, so they never send the same e-mail, and index
    batches queue with the other SQLite writes.
    """
    _while_serving(app, "search-indexer", run_indexer)
    _while_serving(app, "housekeeping", lambda stop: run_housekeeping(settings, stop))
    _while_serving(app, "retention", lambda stop: run_retention(settings, stop))
    _while_serving(app, "webhooks", lambda stop: run_webhook_worker(settings, stop))
    if settings.redis_url:
        redis_url = settings.redis_url
        _while_serving(
            app, "invalidations", lambda stop: serve_invalidations(redis_url, settings.redis_key_prefix, stop)
        )
    if settings.smtp_url:
        _while_serving(app, "outbox", lambda stop: run_worker(settings, stop))
        _while_serving(app, "digests", lambda stop: run_digests(settings, stop))


async def run_housekeeping(
    settings: Settings,
    stop: asyncio.Event,
    interval: float = HOUSEKEEPING_SECONDS,
    first_delay: float = HOUSEKEEPING_FIRST_DELAY,
) -> None:
    """Delete uploads never attached to a thread (after a day), the upload counts of past days
    and webhook logs older than their keep: ``first_delay`` seconds after start-up (which stays
    quick), then every ``interval`` seconds, until ``stop`` is set."""
    delay = first_delay
    while not await _stopped_within(stop, delay):
        with job_run("housekeeping", "housekeeping round failed", logger):
            await delete_unclaimed(storage_for(settings))
            await forget_past_upload_days()
            await forget_old_deliveries(datetime.now(UTC))
        delay = interval


async def run_retention(
    settings: Settings, stop: asyncio.Event, first_delay: float = RETENTION_FIRST_DELAY
) -> None:
    """Delete the threads past their application's retention: ``first_delay`` seconds after
    start-up, then every EARFUL_RETENTION_SECONDS, until ``stop`` is set. Every worker process
    runs it; runs that overlap delete and count each thread once (app.services.retention)."""
    delay = first_delay
    while not await _stopped_within(stop, delay):
        with job_run("retention", "retention run failed", logger) as run:
            run.items = sum((await apply_retention(storage_for(settings), datetime.now(UTC))).values())
        delay = settings.retention_seconds


async def run_digests(
    settings: Settings,
    stop: asyncio.Event,
    interval: float = DIGEST_SECONDS,
    first_delay: float = DIGEST_FIRST_DELAY,
) -> None:
    """Queue the daily digests once their hour has come: every ``interval`` seconds each worker
    process looks, and a digest already queued (by any process) is not queued again."""
    delay = first_delay
    while not await _stopped_within(stop, delay):
        with job_run("digests", "digest round failed", logger) as run:
            run.items = await send_digests(settings, datetime.now(UTC))
        delay = interval


async def _stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    """Wait up to ``seconds``; True when ``stop`` was set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    return stop.is_set()


def _while_serving(app: Quart, name: str, worker: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run ``worker`` in a task of its own, marked with ``background_worker``, while the app serves."""

    async def marked(stop: asyncio.Event) -> None:
        background_worker.set(name)
        await worker(stop)

    @app.while_serving
    async def background() -> AsyncGenerator[None, None]:
        stop = asyncio.Event()
        task = asyncio.create_task(marked(stop), name=f"earful {name}")
        yield
        stop.set()
        try:
            await asyncio.wait_for(task, STOP_TIMEOUT)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
