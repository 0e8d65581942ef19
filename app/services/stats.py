"""Statistics of an application over a period of whole UTC days.

Every figure comes from a few aggregate queries over the (application_id, created_at) indexes,
whatever the number of threads: no query per day, no thread loaded into Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from app.db import transactional
from app.models import SENTIMENTS
from app.repositories import stats
from app.repositories.applications import ApplicationRow

PERIODS = (7, 30, 90)
DEFAULT_PERIOD = 30


@dataclass(frozen=True)
class Day:
    """Threads received on one UTC day, by sentiment."""

    day: date
    total: int
    sentiments: dict[str, int]


@dataclass(frozen=True)
class Nps:
    """Net Promoter Score of the ratings given in the period."""

    promoters: int = 0
    passives: int = 0
    detractors: int = 0

    @property
    def responses(self) -> int:
        return self.promoters + self.passives + self.detractors

    @property
    def score(self) -> int | None:
        """% promoters (9-10) minus % detractors (0-6), rounded; None without ratings."""
        if not self.responses:
            return None
        return round((self.promoters - self.detractors) * 100 / self.responses)


@dataclass(frozen=True)
class Statistics:
    """What the statistics page shows for one application and period."""

    start: date
    end: date
    days: list[Day]
    sentiments: dict[str, int]
    nps: Nps
    form_opens: int
    average_first_reply_time: int
    replied_threads: int
    target_first_reply_time: int
    submissions: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "submissions", sum(day.total for day in self.days))

    @property
    def conversion(self) -> float | None:
        """Submissions per form open, in percent; None when the form was never opened."""
        if not self.form_opens:
            return None
        return self.submissions * 100 / self.form_opens

    @property
    def on_target(self) -> bool | None:
        """Whether the average first reply beats the target; None without replies or target."""
        if not self.replied_threads or not self.target_first_reply_time:
            return None
        return self.average_first_reply_time <= self.target_first_reply_time

    @property
    def is_empty(self) -> bool:
        return not self.submissions and not self.form_opens and not self.replied_threads


def parse_period(value: object) -> int:
    """The number of days of a period selector value; anything unknown is the default period."""
    text = str(value or "").strip()
    days = int(text) if text.isdigit() and len(text) < 4 else DEFAULT_PERIOD
    return days if days in PERIODS else DEFAULT_PERIOD


def period_bounds(days: int, today: date | None = None) -> tuple[date, date]:
    """First and last UTC day of a period of ``days`` days ending today."""
    last = today or datetime.now(UTC).date()
    return last - timedelta(days=days - 1), last


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _fill_days(rows: Sequence[tuple[date, str, int]], start: date, end: date) -> list[Day]:
    """Every day of the period in order, days without feedback as zeros."""
    counts: dict[date, dict[str, int]] = {}
    for day, sentiment, total in rows:
        per_sentiment = counts.setdefault(day, dict.fromkeys(SENTIMENTS, 0))
        per_sentiment[sentiment] = per_sentiment.get(sentiment, 0) + total
    result = []
    for offset in range((end - start).days + 1):
        day = start + timedelta(days=offset)
        sentiments = counts.get(day, dict.fromkeys(SENTIMENTS, 0))
        result.append(Day(day=day, total=sum(sentiments.values()), sentiments=sentiments))
    return result


async def _nps(application_id: int, since: datetime, until: datetime) -> Nps:
    totals = {"promoters": 0, "passives": 0, "detractors": 0}
    for rating, count in (await stats.nps_ratings(application_id, since, until)).items():
        group = "promoters" if rating >= 9 else "passives" if rating >= 7 else "detractors"
        totals[group] += count
    return Nps(**totals)


@transactional
async def record_form_open(application: ApplicationRow) -> None:
    """The feedback form was shown: counted for the opens against submissions."""
    await stats.record_form_open(application.id, datetime.now(UTC))


async def application_statistics(
    application: ApplicationRow, days: int = DEFAULT_PERIOD, today: date | None = None
) -> Statistics:
    """Feedback per day, sentiment split, NPS, reply time and form conversion of a period."""
    start, end = period_bounds(days, today)
    since, until = _midnight(start), _midnight(end + timedelta(days=1))
    per_day = _fill_days(await stats.threads_per_day_and_sentiment(application.id, since, until), start, end)
    sentiments = {name: sum(day.sentiments.get(name, 0) for day in per_day) for name in SENTIMENTS}
    opens = await stats.form_opens(application.id, since, until)
    return Statistics(
        start=start,
        end=end,
        days=per_day,
        sentiments=sentiments,
        nps=await _nps(application.id, since, until),
        form_opens=opens,
        average_first_reply_time=application.average_first_reply_time,
        replied_threads=application.first_reply_count,
        target_first_reply_time=application.target_average_first_reply_time,
    )
