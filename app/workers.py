"""Background workers of the web server: the search indexer (SQLite), and the outbox worker
when e-mail delivery is configured."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from quart import Quart

from app.config import Settings
from app.services.mail.outbox import run_worker
from app.services.search import run_indexer

STOP_TIMEOUT = 10.0


def start_background_workers(app: Quart, settings: Settings) -> None:
    """Run the search indexer, and the outbox worker when EARFUL_SMTP_URL is set, while the app
    serves.

    They start after the ORM is open and stop before it closes (Quart runs ``while_serving``
    inside ``before_serving`` and ``after_serving``). Every Hypercorn worker process runs one of
    each: outbox rows are claimed one by one, so they never send the same e-mail, and index
    batches queue with the other SQLite writes.
    """
    _while_serving(app, run_indexer)
    if settings.smtp_url:
        _while_serving(app, lambda stop: run_worker(settings, stop))


def _while_serving(app: Quart, worker: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    @app.while_serving
    async def background() -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.create_task(worker(stop))
        yield
        stop.set()
        try:
            await asyncio.wait_for(task, STOP_TIMEOUT)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
