"""The statistics service: exact figures on both backends, from a bounded number of queries."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from app.db import atomic
from app.models import Application, Feedback, FormOpen
from app.services.stats import Nps, application_statistics, parse_period
from tests.factories import application_row, make_application, make_thread, make_user

TODAY = date(2025, 3, 10)


def at(day: date, hour: int = 12, minute: int = 0, second: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=UTC)


async def thread_on(application: Application, when: datetime, **body: object) -> Feedback:
    """A thread whose creation time is set to ``when``."""
    thread = await make_thread(application, **{"sentiment": "neutral", **body})
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=when))
    return thread


async def opens_on(application: Application, when: datetime, count: int = 1) -> None:
    for _ in range(count):
        opened = await atomic(lambda: FormOpen.create(application_id=application.id))
        await atomic(lambda opened=opened: FormOpen.filter(id=opened.id).update(created_at=when))


@pytest.fixture
async def owner(db):
    return await make_user()


async def test_threads_per_day_cover_every_day_with_zeros(owner):
    application = await make_application(owner)
    await thread_on(application, at(TODAY))
    await thread_on(application, at(TODAY, 23, 59, 59))
    await thread_on(application, at(TODAY - timedelta(days=2), 0, 0, 0))
    await thread_on(application, at(TODAY - timedelta(days=6)))

    stats = await application_statistics(application, 7, today=TODAY)

    assert stats.start == TODAY - timedelta(days=6)
    assert stats.end == TODAY
    assert [(day.day, day.total) for day in stats.days] == [
        (TODAY - timedelta(days=6), 1),
        (TODAY - timedelta(days=5), 0),
        (TODAY - timedelta(days=4), 0),
        (TODAY - timedelta(days=3), 0),
        (TODAY - timedelta(days=2), 1),
        (TODAY - timedelta(days=1), 0),
        (TODAY, 2),
    ]
    assert stats.submissions == 4


async def test_threads_outside_the_period_or_of_other_applications_are_left_out(owner):
    application, other = await make_application(owner), await make_application(owner)
    await thread_on(application, at(TODAY - timedelta(days=7), 23, 59, 59))
    await thread_on(application, at(TODAY + timedelta(days=1), 0, 0, 0))
    await thread_on(other, at(TODAY))
    await opens_on(other, at(TODAY))

    stats = await application_statistics(application, 7, today=TODAY)

    assert stats.submissions == 0
    assert stats.form_opens == 0
    assert all(day.total == 0 for day in stats.days)
    assert stats.is_empty


async def test_days_are_utc_days(owner):
    application = await make_application(owner)
    # 23:30 UTC on the 9th is already the 10th at UTC+5; the 9th is the day that counts.
    late = datetime(2025, 3, 9, 23, 30, tzinfo=UTC).astimezone(timezone(timedelta(hours=5)))
    await thread_on(application, late)

    stats = await application_statistics(application, 7, today=TODAY)

    assert {day.day: day.total for day in stats.days}[date(2025, 3, 9)] == 1


async def test_sentiment_split_per_day_and_in_total(owner):
    application = await make_application(owner)
    for sentiment in ("positive", "positive", "negative"):
        await thread_on(application, at(TODAY), sentiment=sentiment)
    await thread_on(application, at(TODAY - timedelta(days=1)), sentiment="neutral")

    stats = await application_statistics(application, 7, today=TODAY)

    assert stats.sentiments == {"positive": 2, "neutral": 1, "negative": 1}
    assert stats.days[-1].sentiments == {"positive": 2, "neutral": 0, "negative": 1}
    assert stats.days[-2].sentiments == {"positive": 0, "neutral": 1, "negative": 0}


async def test_nps_counts_promoters_passives_and_detractors(owner):
    application = await make_application(owner)
    for rating in (10, 9, 9, 10, 10, 8, 7, 6, 0, 3):
        await thread_on(application, at(TODAY), nps=rating)
    await thread_on(application, at(TODAY))  # no rating: not a response
    await thread_on(application, at(TODAY - timedelta(days=30)), nps=0)  # before the period

    stats = await application_statistics(application, 7, today=TODAY)

    assert stats.nps == Nps(promoters=5, passives=2, detractors=3)
    assert stats.nps.responses == 10
    assert stats.nps.score == 20


def test_nps_score_is_none_without_ratings_and_rounds_otherwise():
    assert Nps().score is None
    assert Nps(promoters=2, passives=1, detractors=0).score == 67
    assert Nps(promoters=0, passives=0, detractors=3).score == -100


async def test_form_opens_against_submissions(owner):
    application = await make_application(owner)
    await opens_on(application, at(TODAY), 3)
    await opens_on(application, at(TODAY - timedelta(days=29)), 1)
    await opens_on(application, at(TODAY - timedelta(days=30)), 5)  # before the 30-day period
    await thread_on(application, at(TODAY))

    stats = await application_statistics(application, 30, today=TODAY)

    assert stats.form_opens == 4
    assert stats.submissions == 1
    assert stats.conversion == 25.0


async def test_conversion_is_none_without_form_opens(owner):
    application = await make_application(owner)
    await thread_on(application, at(TODAY))

    stats = await application_statistics(application, 7, today=TODAY)

    assert stats.conversion is None
    assert not stats.is_empty


async def test_first_reply_time_against_the_target(owner):
    application = await make_application(owner, target_average_first_reply_time=3600)
    await atomic(
        lambda: Application.filter(id=application.id).update(first_reply_total=3000, first_reply_count=2)
    )
    application = await application_row(application.id)

    stats = await application_statistics(application, 7, today=TODAY)

    assert stats.average_first_reply_time == 1500
    assert stats.target_first_reply_time == 3600
    assert stats.on_target is True

    await atomic(lambda: Application.filter(id=application.id).update(first_reply_total=9000))
    application = await application_row(application.id)
    assert (await application_statistics(application, 7, today=TODAY)).on_target is False


async def test_on_target_is_unknown_without_replies(owner):
    application = await make_application(owner)

    stats = await application_statistics(application, 7, today=TODAY)

    assert stats.on_target is None
    assert stats.is_empty


@pytest.mark.parametrize("threads", [3, 40])
async def test_statistics_take_the_same_few_queries_whatever_the_volume(owner, queries, threads):
    application = await make_application(owner)
    for number in range(threads):
        await thread_on(application, at(TODAY - timedelta(days=number % 90)), nps=number % 11)
    await opens_on(application, at(TODAY), 2)
    queries.statements.clear()

    stats = await application_statistics(application, 90, today=TODAY)

    assert stats.submissions == threads
    assert queries.count == 3, queries.statements


@pytest.mark.parametrize(
    ("value", "days"), [(None, 30), ("", 30), ("7", 7), ("90", 90), ("12", 30), ("abc", 30), ("-7", 30)]
)
def test_parse_period_falls_back_to_thirty_days(value, days):
    assert parse_period(value) == days
