"""The counters every writer moves: application totals, tag counts, replies per day, first replies."""

from __future__ import annotations

from datetime import UTC, date, datetime

from app.db import transactional
from app.models import ReplyDay, Tag
from app.services import counters
from tests.factories import application_row, make_application, make_thread, make_user


async def test_new_threads_count_as_open_or_archived(db):
    application = await make_application(await make_user())

    await transactional(counters.threads_added)(application.id, opened=3, archived=2)

    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (3, 2)


async def test_a_moved_thread_moves_between_open_and_archived_with_its_tags(db):
    application = await make_application(await make_user())
    thread = await make_thread(application, tags=["billing", "ui"])

    await transactional(counters.thread_moved)(application.id, thread.id, True)

    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (0, 1)
    assert {(t.open_count, t.archived_count) for t in await Tag.filter(application_id=application.id)} == {
        (0, 1)
    }


async def test_tag_links_move_every_tag_in_one_go(db):
    application = await make_application(await make_user())
    await make_thread(application, tags=["a", "b"])
    a, b = await Tag.get(name="a"), await Tag.get(name="b")

    await transactional(counters.tag_links_added)({a.id: (2, 1), b.id: (0, 3)})

    assert ((await Tag.get(id=a.id)).open_count, (await Tag.get(id=a.id)).archived_count) == (3, 1)
    assert ((await Tag.get(id=b.id)).open_count, (await Tag.get(id=b.id)).archived_count) == (1, 3)


async def test_replies_count_on_their_utc_day_and_first_replies_in_the_average(db):
    application = await make_application(await make_user())
    late_evening = datetime(2026, 11, 24, 23, 30, tzinfo=UTC)

    await transactional(counters.reply_added)(application.id, late_evening, first_reply_time=600)
    await transactional(counters.reply_added)(application.id, late_evening)

    stored = await application_row(application.id)
    assert (stored.reply_count, stored.first_reply_total, stored.first_reply_count) == (2, 600, 1)
    days = await ReplyDay.filter(application_id=application.id).values_list("day", "count")
    assert days == [(date(2026, 11, 24), 2)]
