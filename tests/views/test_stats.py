"""The statistics page of an application."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta

import pytest

from app.db import atomic
from app.models import Application, Feedback, FormOpen
from tests.factories import body_text, make_application, make_thread, make_user, sign_in


def days_ago(days: int, hour: int = 12) -> datetime:
    today = datetime.now(UTC).date()
    return datetime.combine(today - timedelta(days=days), time(hour), tzinfo=UTC)


async def thread_on(application: Application, when: datetime, **body: object) -> Feedback:
    thread = await make_thread(application, **{"sentiment": "neutral", **body})
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=when))
    return thread


@pytest.fixture
async def signed_in(client, agent) -> None:
    await sign_in(client, agent)


def stat(body: str, name: str) -> str:
    return re.search(rf'data-stat="{name}">([^<]*)<', body).group(1)


def share(body: str, segment: str) -> tuple[str, str]:
    item = re.search(rf'data-segment="{segment}">(.*?)</li>', body, re.S).group(1)
    count = re.search(r'shares__count">(\d+)<', item).group(1)
    percent = re.search(r'shares__percent muted">([^<]+)<', item).group(1)
    return count, percent


async def test_stats_page_shows_feedback_per_day(client, application, signed_in):
    await thread_on(application, days_ago(0))
    await thread_on(application, days_ago(0, hour=0))
    await thread_on(application, days_ago(2))

    response = await client.get(f"/app/applications/{application.id}/stats")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await body_text(response)
    today = datetime.now(UTC).date()
    rows = dict(re.findall(r'<tr><th scope="row">([\d-]+)</th><td>(\d+)</td>', body))
    assert len(rows) == 30
    assert rows[today.isoformat()] == "2"
    assert rows[(today - timedelta(days=1)).isoformat()] == "0"
    assert rows[(today - timedelta(days=2)).isoformat()] == "1"
    assert stat(body, "submissions") == "3"
    assert '<svg class="chart"' in body
    assert 'aria-labelledby="per-day-svg-title per-day-svg-desc"' in body


async def test_stats_page_shows_the_sentiment_split(client, application, signed_in):
    for sentiment in ("positive", "positive", "positive", "negative"):
        await thread_on(application, days_ago(1), sentiment=sentiment)

    body = await body_text(await client.get(f"/app/applications/{application.id}/stats"))

    assert share(body, "positive") == ("3", "75 %")
    assert share(body, "neutral") == ("0", "0 %")
    assert share(body, "negative") == ("1", "25 %")


async def test_stats_page_computes_the_nps_score(client, application, signed_in):
    for rating in (10, 9, 9, 10, 10, 8, 7, 6, 0, 3):
        await thread_on(application, days_ago(3), nps=rating)

    body = await body_text(await client.get(f"/app/applications/{application.id}/stats"))

    assert stat(body, "nps-score") == "+20"
    assert stat(body, "nps") == "+20"
    assert share(body, "promoters") == ("5", "50 %")
    assert share(body, "passives") == ("2", "20 %")
    assert share(body, "detractors") == ("3", "30 %")


async def test_stats_page_shows_form_opens_against_submissions(client, application, signed_in):
    for _ in range(4):
        opened = await atomic(lambda: FormOpen.create(application_id=application.id))
        await atomic(lambda opened=opened: FormOpen.filter(id=opened.id).update(created_at=days_ago(1)))
    await thread_on(application, days_ago(1))

    body = await body_text(await client.get(f"/app/applications/{application.id}/stats"))

    assert stat(body, "conversion-rate") == "25 %"
    assert re.search(r'meter__label">Opens</span>.*?meter__value">4<', body, re.S)
    assert re.search(r'meter__label">Submissions</span>.*?meter__value">1<', body, re.S)


@pytest.mark.parametrize(("total", "badge"), [(2 * 3600, "On target"), (6 * 3600, "Over target")])
async def test_stats_page_compares_first_reply_time_with_the_target(client, agent, signed_in, total, badge):
    application = await make_application(agent, target_average_first_reply_time=3 * 3600)
    await atomic(
        lambda: Application.filter(id=application.id).update(first_reply_total=total, first_reply_count=1)
    )
    await thread_on(application, days_ago(0))

    body = await body_text(await client.get(f"/app/applications/{application.id}/stats"))

    assert stat(body, "average-reply") == f"{total // 3600} h"
    assert stat(body, "target-status") == badge
    assert re.search(r'meter__label">Target</span>.*?meter__value">3 h<', body, re.S)


async def test_period_selector_narrows_the_figures(client, application, signed_in):
    await thread_on(application, days_ago(1))
    await thread_on(application, days_ago(10))

    body = await body_text(await client.get(f"/app/applications/{application.id}/stats?days=7"))

    assert stat(body, "submissions") == "1"
    assert len(re.findall(r'<tr><th scope="row">', body)) == 7
    assert re.search(r'days=7"\s+aria-current="page">7 days<', body)


async def test_stats_page_without_data_shows_an_empty_state(client, application, signed_in):
    await thread_on(application, days_ago(40))

    body = await body_text(await client.get(f"/app/applications/{application.id}/stats"))

    assert "No feedback in the last 30 days" in body
    assert '<svg class="chart"' not in body
    assert stat(body, "submissions") == "0"


async def test_stats_page_has_no_inline_styles_or_scripts(client, application, signed_in):
    await thread_on(application, days_ago(0), nps=9, sentiment="positive")

    body = await body_text(await client.get(f"/app/applications/{application.id}/stats"))

    assert " style=" not in body
    assert not re.search(r"<script(?![^>]*\bsrc=)", body)


async def test_another_agent_gets_404_on_the_stats(app, application):
    other = await make_user(email="mallory@example.com")
    other_client = app.test_client()
    await sign_in(other_client, other)
    await thread_on(application, days_ago(0))

    response = await other_client.get(f"/app/applications/{application.id}/stats")

    assert response.status_code == 404
