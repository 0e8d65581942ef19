"""The durable queue that e-mails (the outbox) and webhook deliveries share.

A queue is a table whose rows wait in ``pending`` with a ``next_attempt_at``. A worker claims a
due row with one conditional UPDATE (``status`` and ``attempts`` unchanged -> ``sending``,
``attempts + 1``, a lease in ``next_attempt_at``), so only the worker whose UPDATE matched
sends it, whatever the number of workers, processes or hosts; a worker that dies leaves a lease
that runs out, and the row is due again. A worker that stops hands back what it holds at once.
Workers poll every few seconds and are woken sooner by :meth:`DurableQueue.wake` when a
transaction of their own process has just queued something.

The tables differ (what an e-mail or a delivery holds); what happens to a row is the same, so
it lives here once: the claim and its bookkeeping, the wake-ups, the worker loop, the release.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from app.db import after_commit, transactional
from app.logs import job_run

# One round of a worker: how many rows it handled, and whether more are due at once.
Round = Callable[[], Awaitable[tuple[int, bool]]]


# A repository's conditional change of a queue row (app.repositories.outbox.move,
# app.repositories.webhooks.move_delivery): ``(row_id, from_status, after_attempts, **fields)``,
# applied only while the row is still in ``from_status`` after ``after_attempts`` attempts; True
# when it was.
Move = Callable[..., Awaitable[bool]]

# A repository's claim of the rows due at once (app.repositories.webhook_batches.
# claim_due_deliveries): ``(now, lease_until, limit)``; the attempts of the rows taken, by id.
ClaimDue = Callable[[datetime, datetime, int], Awaitable[dict[int, int]]]


class DurableQueue:
    """One queue's claims, wake-ups and worker loop, for the workers of this process."""

    def __init__(self, name: str, move: Move, logger: logging.Logger, linger: float = 0.0) -> None:
        self.name = name
        # Seconds a woken worker waits before its round, so that the rows queued by the commits
        # just after the one that woke it go in the same batch (fewer, larger rounds under load).
        self.linger = linger
        self._move = move
        self._logger = logger
        self._wakers: set[asyncio.Event] = set()
        self._held: dict[int, int] = {}  # rows this process claimed and has not settled: id -> attempt

    async def claim(self, row_id: int, status: str, attempts: int, lease_until: datetime) -> int | None:
        """Take a due row (in ``status`` after ``attempts`` attempts) for one attempt until
        ``lease_until``; the attempt's number, or None when another worker has it."""
        attempt = attempts + 1
        claimed = await transactional(self._move)(
            row_id, status, attempts, status="sending", attempts=attempt, next_attempt_at=lease_until
        )
        if not claimed:
            return None
        self._held[row_id] = attempt
        return attempt

    async def claim_due(
        self, claim: ClaimDue, now: datetime, lease_until: datetime, limit: int
    ) -> dict[int, int]:
        """Take up to ``limit`` rows due at ``now`` with one claim (its own transaction), each
        for one attempt until ``lease_until``; their attempts' numbers by id."""
        claimed = await transactional(claim)(now, lease_until, limit)
        self._held.update(claimed)
        return claimed

    def settled(self, row_id: int) -> None:
        """The claimed row was recorded (sent, retried or failed): no longer held."""
        self._held.pop(row_id, None)

    async def settle(self, row_id: int, attempt: int, **fields: object) -> bool:
        """Record the attempt's outcome on a claimed row, if it is still this attempt's."""
        changed = await transactional(self._move)(row_id, "sending", attempt, **fields)
        self.settled(row_id)
        return changed

    def wake(self) -> None:
        """Tell this process's workers that something is due (they poll besides)."""
        for event in self._wakers:
            event.set()

    def wake_after_commit(self) -> None:
        """Wake the workers once the running transaction has committed what it queued."""
        after_commit(self.wake)

    async def run(self, stop: asyncio.Event, one_round: Round, interval: float) -> None:
        """Run ``one_round`` until ``stop`` is set: at every wake-up, else every ``interval``
        seconds, and again at once while it says more is due. The database may be away for a
        while: a failed round is logged (one line per job run) and the worker lives on. At the
        end, what this process still holds is handed back."""
        wake = asyncio.Event()
        self._wakers.add(wake)
        try:
            while not stop.is_set():
                wake.clear()
                with job_run(self.name, f"{self.name}: delivery round failed", self._logger) as run:
                    run.items, more = 0, True
                    while more and not stop.is_set():
                        handled, more = await one_round()
                        run.items += handled
                await _first_of(stop, wake, interval)
                if self.linger and wake.is_set() and not stop.is_set():
                    await _first_of(stop, asyncio.Event(), self.linger)
        finally:
            self._wakers.discard(wake)
            await self._release_on_stop()

    async def release_held(self, now: datetime | None = None) -> int:
        """Hand back the rows this process claimed and has not settled (its worker stops):
        pending again and due at ``now``, for another worker without waiting for the lease. A row
        settled meanwhile is left as it is. Returns how many were handed back."""
        held, moment = dict(self._held), now or datetime.now(UTC)
        self._held.clear()
        return await self._release(held, moment) if held else 0

    @transactional
    async def _release(self, held: dict[int, int], now: datetime) -> int:
        moved = [
            await self._move(row_id, "sending", attempt, status="pending", next_attempt_at=now)
            for row_id, attempt in held.items()
        ]
        return sum(moved)

    async def _release_on_stop(self) -> None:
        try:
            if released := await asyncio.shield(self.release_held()):
                self._logger.info("%s: %d rows handed back at stop", self.name, released)
        except Exception:  # the database is away: the rows wait out their lease instead
            self._logger.exception("%s: rows held at stop could not be handed back", self.name)


async def _first_of(stop: asyncio.Event, wake: asyncio.Event, seconds: float) -> None:
    """Wait until ``stop`` or ``wake`` is set, or ``seconds``."""
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
