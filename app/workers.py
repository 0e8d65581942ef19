"""Background workers of the web server: the search indexer (SQLite), and the outbox worker
when e-mail delivery is configured."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar

from quart import Quart

from app.config import Settings
from app.services.mail.outbox import run_worker
from app.services.search import run_indexer

STOP_TIMEOUT = 10.0
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
    if settings.smtp_url:
        _while_serving(app, "outbox", lambda stop: run_worker(settings, stop))


def _while_serving(app: Quart, name: str, worker: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run ``worker`` in a task of its own, marked with ``background_worker``, while the app serves."""

    async def marked(stop: asyncio.Event) -> None:
        background_worker.set(name)
        await worker(stop)

    @app.while_serving
    async def background() -> AsyncIterator[None]:
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
