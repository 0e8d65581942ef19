"""Readiness checks (named, bounded, side by side) and the durable queues' depth and age."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tortoise import Tortoise
from tortoise.migrations.api.migrate import migrate

from app.config import sqlite_url
from app.db import close_database, migration_names, open_database, tortoise_config, transactional
from app.repositories import outbox
from app.services.capture_limits import CaptureLimiter
from app.services.monitoring import (
    Check,
    failed_checks,
    migrations_applied,
    queue_states,
    readiness_checks,
)
from tests.conftest import throwaway_postgres_database
from tests.factories import make_thread, make_webhook
from tests.webhook_receiver import running_receiver

MINUTE = timedelta(minutes=1)


async def fine() -> str | None:
    return None


async def hangs() -> str | None:
    await asyncio.sleep(30)
    return None


async def breaks() -> str | None:
    raise ConnectionRefusedError("connect to postgres://admin:secret@db.internal failed")


async def test_every_check_passing_reports_nothing(db, settings):
    checks = readiness_checks(settings, CaptureLimiter.from_settings(settings))

    assert [check.name for check in checks] == ["database", "migrations", "storage"]
    assert await failed_checks(checks) == []


async def test_a_data_dir_that_cannot_be_written_is_not_ready(db, settings, tmp_path):
    missing = dataclasses.replace(settings, data_dir=tmp_path / "missing")
    checks = readiness_checks(missing, CaptureLimiter.from_settings(missing))

    assert await failed_checks(checks) == ["storage: not usable (see the log)"]


async def test_redis_is_checked_only_when_configured(settings):
    changed = dataclasses.replace(settings, redis_url="redis://127.0.0.1:6379/0")

    names = [check.name for check in readiness_checks(changed, CaptureLimiter.from_settings(changed))]

    assert names == ["database", "migrations", "storage", "redis"]


async def test_a_check_that_hangs_fails_at_its_timeout_while_the_others_run():
    started = time.monotonic()

    failures = await failed_checks([Check("slow", hangs), Check("database", fine)], seconds=0.2)

    assert failures == ["slow: no answer within 0.2 s"]
    assert time.monotonic() - started < 1


async def test_a_failing_check_names_the_error_kind_not_its_text():
    failures = await failed_checks([Check("database", breaks), Check("storage", fine)])

    assert failures == ["database: ConnectionRefusedError"]


@asynccontextmanager
async def database_at(url: str, home: str, last: str) -> AsyncIterator[None]:
    """The ORM on ``url`` migrated up to ``last`` (not beyond) for the block, then back home."""
    await close_database()
    try:
        await migrate(config=tortoise_config(url), target=f"models.{last}")
        await Tortoise.close_connections()
        await open_database(url)
        yield
    finally:
        await close_database()
        await open_database(home)


async def test_a_database_missing_the_last_migration_is_not_ready(db, backend, tmp_path: Path):
    *earlier, newest = sorted(migration_names())

    async with _database_of(backend, tmp_path) as url, database_at(url, db, earlier[-1]):
        reason = await migrations_applied()
        failures = await failed_checks([Check("migrations", migrations_applied)])

    assert reason == f"1 pending ({newest}); run earful db upgrade"
    assert failures == [f"migrations: {reason}"]


async def test_migrations_newer_than_the_code_keep_it_ready(db, monkeypatch):
    """A release rolling out applies its migrations while this one still serves."""
    known = migration_names()
    monkeypatch.setattr("app.services.monitoring.migration_names", lambda: known - {max(known)})

    assert await migrations_applied() is None


@asynccontextmanager
async def _database_of(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    if backend == "sqlite":
        yield sqlite_url(tmp_path / "behind.sqlite3")
        return
    async with throwaway_postgres_database("earful_behind") as url:
        yield url


async def test_empty_queues_are_zero(db):
    states = await queue_states(datetime.now(UTC))

    assert [(s.name, s.pending, s.sending, s.oldest_seconds) for s in states] == [
        ("email", 0, 0, 0.0),
        ("webhook", 0, 0, 0.0),
    ]


async def test_queues_count_waiting_rows_by_state_and_age_the_oldest(db, agent, application, settings):
    now = datetime.now(UTC)
    for number in range(3):
        await transactional(outbox.queue_message)(
            "notice", None, "ann@example.org", f"q{number}", "Subject: x\n\nx\n", now - number * MINUTE
        )
    [claimed] = await outbox.due(now, 1)
    await transactional(outbox.move)(claimed.id, "pending", 0, status="sending", attempts=1)
    hooked = dataclasses.replace(settings, webhook_allow_private=True)
    async with running_receiver() as receiver:
        await make_webhook(agent, application, receiver.url, hooked)
        await make_thread(application)

    email, webhook = await queue_states(now + timedelta(seconds=30))

    assert (email.pending, email.sending) == (2, 1)
    assert 150 <= email.oldest_seconds <= 151
    assert (webhook.pending, webhook.sending) == (1, 0)
    assert webhook.oldest_seconds > 0
