"""``earful seed``: bulk data whose counters agree with the rows, on both backends."""

from __future__ import annotations

import gc
from collections import Counter
from datetime import UTC, timedelta

import pytest

from app.db import atomic
from app.errors import NotFound, ValidationError
from app.models import Application, Feedback, FeedbackTag, Member, Reply, Tag, User
from app.services import search, seed
from app.services.feedback import create_thread, list_threads
from app.services.inbox import search_threads
from app.services.replies import list_replies
from app.services.seed import seed_application
from app.services.submissions import parse_submission
from app.services.tags import list_tags
from tests.factories import make_reply


async def _check_counters(application: Application) -> None:
    app = await Application.get(id=application.id)
    open_threads = await Feedback.filter(application_id=app.id, archived=False).count()
    archived_threads = await Feedback.filter(application_id=app.id, archived=True).count()
    assert app.open_threads == open_threads
    assert app.archived_threads == archived_threads
    assert app.reply_count == await Reply.filter(application_id=app.id).count()
    replied = await Feedback.filter(application_id=app.id, first_reply_time__not_isnull=True).values_list(
        "first_reply_time", flat=True
    )
    assert app.first_reply_count == len(replied)
    assert app.first_reply_total == sum(replied)

    _, total = await list_threads(app, archived=False, limit=50)
    assert total == open_threads
    _, total = await list_threads(app, archived=True, limit=50)
    assert total == archived_threads
    assert (await list_replies(app, None, limit=50)).total == app.reply_count
    written = await Reply.filter(application_id=app.id).values_list("created_at", flat=True)
    per_day = Counter(moment.astimezone(UTC).date() for moment in written)
    for day, count in per_day.items():
        assert (await list_replies(app, day, limit=1)).total == count, day
    assert (await list_replies(app, min(per_day) - timedelta(days=1), limit=1)).total == 0

    links = await FeedbackTag.filter(tag__application_id=app.id).values_list("tag_id", "feedback__archived")
    open_links = Counter(tag_id for tag_id, archived in links if not archived)
    archived_links = Counter(tag_id for tag_id, archived in links if archived)
    for tag in await list_tags(app.id):
        assert tag.open_count == open_links[tag.id], tag.name
        assert tag.archived_count == archived_links[tag.id], tag.name


async def test_seed_keeps_every_counter_consistent(agent: User, application: Application) -> None:
    # Data written by the app first: the seed adds to its counters and ids.
    submission = parse_submission(
        {"email": "jo@example.org", "message": "Export is broken", "tags": "bug"}, "203.0.113.1", "ua"
    )
    await create_thread(application, submission)

    report = await seed_application(application.id, 300, seed=7)

    assert report.threads == 300
    assert await Feedback.filter(application_id=application.id).count() == 301
    assert await Member.filter(application_id=application.id).count() == 1 + report.members
    assert 0 < report.archived < 300
    assert report.replies > 0 and report.notes > 0 and report.tag_links > 0
    threads = await Feedback.filter(application_id=application.id)
    assert {thread.language for thread in threads} >= {"en", "es", "pt"}
    assert {thread.sentiment for thread in threads} == {"positive", "neutral", "negative"}
    assert any(thread.nps is not None for thread in threads)
    assert any(isinstance(thread.properties, dict) and thread.properties for thread in threads)
    for thread in threads:
        assert thread.last_reply_at >= thread.created_at
    assert await Reply.filter(application_id=application.id, type="note").count() == report.notes
    bug = await Tag.get(application_id=application.id, name="bug")
    assert bug.open_count >= 1
    await _check_counters(application)

    # A second run appends (new ids, new senders), and the app keeps writing afterwards.
    await seed_application(application.id, 50, seed=7)
    assert await Feedback.filter(application_id=application.id).count() == 351
    thread = await create_thread(application, submission)
    await make_reply(agent, application, thread)
    assert await Feedback.filter(application_id=application.id).count() == 352
    await _check_counters(application)


async def test_seed_in_many_batches_keeps_every_counter_consistent(
    application: Application, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each batch is written while the next is drawn: several batches, one of them short.
    monkeypatch.setattr(seed, "BATCH_THREADS", 40)

    report = await seed_application(application.id, 130, seed=11)

    assert report.threads == 130
    assert await Feedback.filter(application_id=application.id).count() == 130
    await _check_counters(application)


@pytest.mark.parametrize("enabled", [True, False])
async def test_seed_leaves_the_cycle_collector_as_it_found_it(
    application: Application, enabled: bool
) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        await seed_application(application.id, 20, seed=2)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


async def test_seeded_data_is_the_same_for_the_same_seed(agent: User, application: Application) -> None:
    await seed_application(application.id, 40, seed=3)
    first = (
        await Feedback.filter(application_id=application.id)
        .order_by("id")
        .values_list("message", "sentiment", "archived", "nps")
    )
    await atomic(lambda: Feedback.filter(application_id=application.id).delete())
    await seed_application(application.id, 40, seed=3)
    second = (
        await Feedback.filter(application_id=application.id)
        .order_by("id")
        .values_list("message", "sentiment", "archived", "nps")
    )
    assert first == second


async def test_seed_refuses_bad_arguments(db: str, application: Application) -> None:
    with pytest.raises(ValidationError):
        await seed_application(application.id, 0)
    with pytest.raises(NotFound):
        await seed_application(application.id + 1000, 10)


async def test_seeded_threads_are_found_by_the_indexed_search(
    application: Application, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "SCAN_WINDOW", 0)
    await seed_application(application.id, 60, seed=5)
    newest = await Feedback.filter(application_id=application.id, archived=False).order_by("-id").first()
    word = max(newest.message.split(), key=len).strip(".,!?")

    page = await search_threads(application, query=word)

    assert newest.id in [row.thread.id for row in page.rows]
