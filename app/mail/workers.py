"""Background workers of the web server: the outbox worker, when e-mail delivery is configured."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from quart import Quart

from app.config import Settings
from app.services.mail.outbox import run_worker

STOP_TIMEOUT = 10.0


def start_background_workers(app: Quart, settings: Settings) -> None:
    """Run the outbox worker while the app serves, when EARFUL_SMTP_URL is set.

    It starts after the ORM is open and stops before it closes (Quart runs ``while_serving``
    inside ``before_serving`` and ``after_serving``). Every Hypercorn worker process runs one:
    rows are claimed one by one, so they never send the same e-mail.
    """
    if not settings.smtp_url:
        return

    @app.while_serving
    async def outbox_worker() -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.create_task(run_worker(settings, stop))
        yield
        stop.set()
        try:
            await asyncio.wait_for(task, STOP_TIMEOUT)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
