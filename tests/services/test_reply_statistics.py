"""Reply-time statistics are kept on write, and concurrent replies never count twice."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from app.models import Application, Feedback
from tests.factories import make_application, make_reply, make_thread, make_user


async def test_concurrent_first_replies_count_once_in_the_average(db):
    user = await make_user()
    application = await make_application(user)
    thread = await make_thread(application)
    await Feedback.filter(id=thread.id).update(created_at=datetime.now(UTC) - timedelta(seconds=300))
    thread = await Feedback.get(id=thread.id)

    await asyncio.gather(*(make_reply(user, application, thread, f"answer {n}") for n in range(5)))

    stored = await Application.get(id=application.id)
    answered = await Feedback.get(id=thread.id)
    assert stored.first_reply_count == 1
    assert stored.first_reply_total == answered.first_reply_time
    assert 300 <= answered.first_reply_time <= 302
    assert stored.reply_count == 5


async def test_average_is_the_rounded_mean_of_answered_threads(db):
    user = await make_user()
    application = await make_application(user)
    now = datetime.now(UTC)
    for waited in (10, 21):
        thread = await make_thread(application)
        await Feedback.filter(id=thread.id).update(created_at=now - timedelta(seconds=waited))
        await make_reply(user, application, await Feedback.get(id=thread.id))
    await make_thread(application)

    stored = await Application.get(id=application.id)

    assert stored.first_reply_count == 2
    assert stored.average_first_reply_time in (15, 16)
