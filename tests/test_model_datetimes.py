"""Date-times read from the database are aware and in UTC, exactly as Tortoise makes them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from tortoise import fields

from app.models import Feedback
from app.models.datetimes import _fast
from tests.factories import make_thread


@pytest.mark.parametrize(
    "stored",
    [
        "2026-11-22 16:05:27.792615+00:00",
        "2026-11-22 16:05:27+00:00",
        "2026-11-22T18:05:27.5+02:00",
        "2026-11-22T16:05:27Z",
        "2026-11-22 16:05:27",
        datetime(2026, 11, 22, 16, 5, 27, tzinfo=UTC),
        datetime(2026, 11, 22, 11, 5, 27, tzinfo=timezone(timedelta(hours=-5))),
        datetime(2026, 11, 22, 16, 5, 27),
        None,
    ],
)
def test_fast_conversion_gives_what_tortoise_gives(stored, orm) -> None:
    field = fields.DatetimeField()

    fast, slow = _fast(field.to_python_value)(stored), field.to_python_value(stored)

    assert fast == slow
    assert getattr(fast, "tzinfo", None) == getattr(slow, "tzinfo", None)


async def test_a_thread_reads_back_its_times_in_utc(application) -> None:
    thread = await make_thread(application)

    stored = await Feedback.get(id=thread.id)

    assert stored.created_at == thread.created_at
    assert stored.created_at.utcoffset() == timedelta(0)
