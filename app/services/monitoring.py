"""What operators watch: whether this process can serve (``/readyz``), and how much waits in the
durable queues (``/metrics``).

Readiness is a list of named checks, each a probe that returns None when its dependency is fine
and a short reason when not (or raises). The checks run side by side, each bounded by
``CHECK_TIMEOUT``: a dependency that hangs makes the answer a quick 503, not a hung probe.
A probe is shielded from that timeout: cut off mid-statement, a database connection may be left
in a state the next request trips over, so it finishes (or fails) on its own, unawaited.
A new dependency adds one line to :func:`readiness_checks`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.config import Settings
from app.db import migration_names
from app.repositories import monitoring
from app.repositories.monitoring import Queue, QueueCount
from app.services.capture_limits import CaptureLimiter
from app.services.storage import Storage, storage_for

CHECK_TIMEOUT = 2.0  # seconds; load balancers probe every few seconds with timeouts of about 5

Probe = Callable[[], Awaitable[str | None]]


@dataclass(frozen=True)
class Check:
    """One dependency of readiness: its name (first word of a failure's reason) and its probe."""

    name: str
    probe: Probe


async def database_reachable() -> str | None:
    """The database answers a statement."""
    await monitoring.ping()
    return None


async def migrations_applied() -> str | None:
    """Every migration this code brings is applied (newer ones, from a release rolling out beside
    this one, are fine: migrations are additive first, see the README)."""
    pending = sorted(migration_names() - await monitoring.applied_migrations())
    if not pending:
        return None
    return f"{len(pending)} pending ({', '.join(pending)}); run earful db upgrade"


def redis_reachable(limiter: CaptureLimiter) -> Probe:
    """The Redis of the shared rate limits answers PING."""

    async def probe() -> str | None:
        answered = limiter.storage.check()  # typed for the sync storages too
        if not isinstance(answered, bool):
            answered = await answered
        return None if answered else "no answer to PING"

    return probe


def storage_usable(storage: Storage) -> Probe:
    """The data dir is writable, or the bucket answers a listing."""

    async def probe() -> str | None:
        return None if await storage.check() else "not usable (see the log)"

    return probe


def readiness_checks(settings: Settings, limiter: CaptureLimiter) -> tuple[Check, ...]:
    """What this deployment needs to serve: the database and its migrations, the storage of
    files, and Redis when EARFUL_REDIS_URL is set."""
    checks = [
        Check("database", database_reachable),
        Check("migrations", migrations_applied),
        Check("storage", storage_usable(storage_for(settings))),
    ]
    if settings.redis_url:
        checks.append(Check("redis", redis_reachable(limiter)))
    return tuple(checks)


async def failed_checks(checks: Sequence[Check], seconds: float = CHECK_TIMEOUT) -> list[str]:
    """The reasons of the checks that fail, in the checks' order; empty when all pass."""
    results = await asyncio.gather(*(_outcome(check, seconds) for check in checks))
    return [reason for reason in results if reason is not None]


async def _outcome(check: Check, seconds: float) -> str | None:
    task = asyncio.ensure_future(check.probe())
    task.add_done_callback(_retrieve)
    try:
        reason = await asyncio.wait_for(asyncio.shield(task), seconds)
    except TimeoutError:
        return f"{check.name}: no answer within {seconds:g} s"
    except Exception as error:  # the reason is the error's kind: its text may name hosts or users
        return f"{check.name}: {type(error).__name__}"
    return None if reason is None else f"{check.name}: {reason}"


def _retrieve(task: asyncio.Future[str | None]) -> None:
    """A probe that outlived its timeout ends unawaited: read its error so asyncio logs none."""
    if not task.cancelled():
        task.exception()


@dataclass(frozen=True)
class QueueState:
    """One durable queue: how many rows wait in each state, and the age of the oldest."""

    name: str
    pending: int
    sending: int
    oldest_seconds: float  # 0 when the queue is empty


QUEUES: dict[str, Queue] = {"email": "outbound_emails", "webhook": "webhook_deliveries"}


async def queue_states(now: datetime) -> list[QueueState]:
    """The outbox of e-mails and the webhook deliveries at ``now`` (two statements)."""
    return [_state(name, await monitoring.waiting(table), now) for name, table in QUEUES.items()]


def _state(name: str, counts: list[QueueCount], now: datetime) -> QueueState:
    by_status = {count.status: count.count for count in counts}
    oldest = min((count.oldest for count in counts if count.oldest is not None), default=None)
    return QueueState(
        name,
        by_status.get("pending", 0),
        by_status.get("sending", 0),
        max(0.0, (now - oldest).total_seconds()) if oldest else 0.0,
    )
