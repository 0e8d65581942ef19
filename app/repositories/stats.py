"""Aggregates over an application's threads and form opens, for its statistics page."""

from __future__ import annotations

from datetime import date, datetime

from app.repositories.sql import change, moment, postgres, select, select_one


async def threads_per_day_and_sentiment(
    application_id: int, since: datetime, until: datetime
) -> list[tuple[date, str, int]]:
    """(UTC day, sentiment, threads) for the threads created in [since, until)."""
    # SQLite keeps date-times as ISO text in UTC, which date() reads as UTC.
    on_day = "(created_at AT TIME ZONE 'UTC')::date" if postgres() else "date(created_at)"
    rows = await select(
        f"SELECT {on_day} AS day, sentiment, COUNT(*) AS total FROM feedback "
        "WHERE application_id = {} AND created_at >= {} AND created_at < {} "
        f"GROUP BY {on_day}, sentiment",
        [application_id, moment(since), moment(until)],
    )
    return [
        (row["day"] if isinstance(row["day"], date) else date.fromisoformat(str(row["day"])),
         row["sentiment"], int(row["total"]))
        for row in rows
    ]  # fmt: skip


async def nps_ratings(application_id: int, since: datetime, until: datetime) -> dict[int, int]:
    """How many threads created in [since, until) gave each NPS rating."""
    rows = await select(
        "SELECT nps, COUNT(*) AS total FROM feedback WHERE application_id = {} AND created_at >= {} "
        "AND created_at < {} AND nps IS NOT NULL GROUP BY nps",
        [application_id, moment(since), moment(until)],
    )
    return {int(row["nps"]): int(row["total"]) for row in rows}


async def form_opens(application_id: int, since: datetime, until: datetime) -> int:
    row = await select_one(
        "SELECT COUNT(*) AS total FROM form_opens WHERE application_id = {} "
        "AND created_at >= {} AND created_at < {}",
        [application_id, moment(since), moment(until)],
    )
    return int(row["total"]) if row else 0


async def record_form_open(application_id: int, now: datetime) -> None:
    await change(
        "INSERT INTO form_opens (application_id, created_at) VALUES ({}, {})", [application_id, moment(now)]
    )
