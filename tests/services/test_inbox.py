"""The inbox's pages: filters combine, pages are keyed by id, and another application's threads
never show."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.db import atomic
from app.errors import ValidationError
from app.models import Feedback
from app.services import feedback, inbox
from app.services import search as search_service
from app.services.feedback import set_archived
from app.services.inbox import count_threads, search, search_threads
from app.services.thread_filters import ThreadFilters
from tests.factories import application_row, make_application, make_reply, make_thread, make_user, thread_row


def ids(page) -> list[int]:
    return [row.thread.id for row in page.rows]


async def test_a_page_is_newest_first_and_the_cursor_continues_it(db):
    application = await make_application(await make_user())
    threads = [await make_thread(application) for _ in range(5)]

    first = await search_threads(application, limit=2)
    second = await search_threads(application, limit=2, before=first.next_before)
    last = await search_threads(application, limit=2, before=second.next_before)

    assert ids(first) + ids(second) + ids(last) == [t.id for t in reversed(threads)]
    assert last.next_before is None


async def test_filters_combine(db):
    application = await make_application(await make_user())
    wanted = await make_thread(
        application, sentiment="negative", tags=["billing"], message="Refund the order"
    )
    await make_thread(application, sentiment="positive", tags=["billing"], message="Refund the order")
    await make_thread(application, sentiment="negative", message="Refund the order")
    await make_thread(application, sentiment="negative", tags=["billing"], message="Something else")

    page = await search_threads(application, sentiment="negative", tag="Billing", query="refund")

    assert ids(page) == [wanted.id]


async def test_archived_threads_have_their_own_inbox(db):
    application = await make_application(await make_user())
    kept, archived = await make_thread(application), await make_thread(application)
    await set_archived(application, archived, True)

    assert ids(await search_threads(application)) == [kept.id]
    assert ids(await search_threads(application, archived=True)) == [archived.id]


async def test_an_unknown_tag_gives_an_empty_page(db):
    application = await make_application(await make_user())
    await make_thread(application, tags=["billing"])

    page = await search_threads(application, tag="nope")

    assert page.rows == [] and page.next_before is None


async def test_another_applications_threads_never_show(db):
    owner = await make_user()
    application, other = await make_application(owner), await make_application(owner)
    await make_thread(other, message="Refund the order", tags=["billing"])

    for filters in ({}, {"query": "refund"}, {"tag": "billing"}):
        assert (await search_threads(application, **filters)).rows == []


async def test_rows_carry_the_sender_and_the_tags(db):
    application = await make_application(await make_user())
    await make_thread(application, email="ann@example.org", name="Ann", tags=["ui", "billing"])

    [row] = (await search_threads(application)).rows

    assert (row.thread.sender_email, row.thread.sender_name) == ("ann@example.org", "Ann")
    assert [tag.name for tag in row.tags] == ["billing", "ui"]


async def test_rows_carry_what_the_inbox_shows_of_a_thread(db):
    agent = await make_user(name="Andy Agent")
    application = await make_application(agent)
    thread = await make_thread(application, message="The export button does nothing.", nps=3)
    await make_reply(agent, application, thread)
    await feedback.assign(agent, application, await thread_row(thread.id), agent.id)

    [row] = (await search_threads(application)).rows

    line = row.thread
    assert (line.id, line.message, line.sentiment, line.nps) == (
        thread.id,
        thread.message,
        thread.sentiment,
        3,
    )
    assert (line.replied, line.created_at, line.assignee_id, line.assignee_name) == (
        True,
        thread.created_at,
        agent.id,
        "Andy Agent",
    )


async def test_a_thread_nobody_answered_or_was_assigned_reads_so(db):
    application = await make_application(await make_user())
    await make_thread(application)

    [row] = (await search_threads(application)).rows

    assert (row.thread.replied, row.thread.assignee_id, row.thread.assignee_name) == (False, None, None)


@pytest.mark.parametrize("excerpt", [1, 10, 31, 200])
async def test_an_excerpt_reads_only_the_start_of_each_message(db, excerpt):
    application = await make_application(await make_user())
    message = "Ünïcode first, " + "then a long complaint " * 10
    await make_thread(application, message=message)

    [row] = (await search_threads(application, excerpt=excerpt)).rows

    assert row.thread.message == message[:excerpt]


@pytest.mark.parametrize(
    ("filters", "message"), [({"limit": 0}, "limit"), ({"sentiment": "furious"}, "sentiment")]
)
async def test_bad_filters_are_refused(db, filters, message):
    application = await make_application(await make_user())

    with pytest.raises(ValidationError, match=message):
        await search_threads(application, **filters)


# --- The filters of the management API (app.services.thread_filters), through the same search --


async def created_at(thread, moment: datetime) -> None:
    await atomic(lambda: Feedback.filter(id=thread.id).update(created_at=moment))


async def found(application, **filters) -> list[int]:
    return ids(await search(application, ThreadFilters(**filters)))


@pytest.fixture
async def application(db):
    return await make_application(await make_user())


async def test_since_keeps_threads_created_at_or_after_it(application):
    old, edge, new = [await make_thread(application) for _ in range(3)]
    await created_at(old, datetime(2026, 1, 1, 11, 59, 59, tzinfo=UTC))
    await created_at(edge, datetime(2026, 1, 1, 12, tzinfo=UTC))
    await created_at(new, datetime(2026, 1, 2, tzinfo=UTC))

    assert await found(application, since=datetime(2026, 1, 1, 12, tzinfo=UTC)) == [new.id, edge.id]


async def test_until_keeps_threads_created_before_it(application):
    old, edge = await make_thread(application), await make_thread(application)
    await created_at(old, datetime(2026, 1, 1, 11, 59, 59, 999999, tzinfo=UTC))
    await created_at(edge, datetime(2026, 1, 1, 12, tzinfo=UTC))

    assert await found(application, until=datetime(2026, 1, 1, 12, tzinfo=UTC)) == [old.id]


async def test_replied_keeps_threads_an_agent_answered_publicly(db):
    agent = await make_user(plan="team")
    application = await make_application(agent)
    answered, noted, silent = [await make_thread(application) for _ in range(3)]
    await make_reply(agent, application, answered)
    await make_reply(agent, application, noted, "internal", type="note")

    assert await found(application, replied=True) == [answered.id]
    assert await found(application, replied=False) == [silent.id, noted.id]


async def test_nps_bounds_are_inclusive_and_unrated_threads_never_match(application):
    low, mid, high = [await make_thread(application, nps=score) for score in (0, 7, 10)]
    await make_thread(application)

    assert await found(application, nps_min=7) == [high.id, mid.id]
    assert await found(application, nps_max=7) == [mid.id, low.id]
    assert await found(application, nps_min=7, nps_max=7) == [mid.id]


async def test_every_filter_combines_with_the_text_search(application):
    wanted = await make_thread(application, message="Refund please", nps=9, sentiment="negative")
    await make_thread(application, message="Refund please", nps=3, sentiment="negative")
    await make_thread(application, message="Nice app", nps=9, sentiment="negative")

    assert await found(application, query="refund", nps_min=9, sentiment="negative") == [wanted.id]


async def test_an_offset_skips_matches_newest_first(application):
    threads = [await make_thread(application, sentiment="positive") for _ in range(4)]
    await make_thread(application, sentiment="negative")

    page = await search(application, ThreadFilters(sentiment="positive"), limit=2, offset=1)

    assert ids(page) == [threads[2].id, threads[1].id]
    assert page.next_before == threads[1].id


async def test_count_is_exact_from_the_counters_without_filters(application):
    for _ in range(3):
        await make_thread(application, tags=["billing"])
    application = await application_row(application.id)

    assert await count_threads(application, ThreadFilters()) == inbox.Total(3)
    assert await count_threads(application, ThreadFilters(tag="Billing", before=1)) == inbox.Total(3)
    assert await count_threads(application, ThreadFilters(tag="nope")) == inbox.Total(0)


async def test_count_with_filters_counts_every_match_not_only_a_page(application):
    for score in (1, 9, 9, 10):
        await make_thread(application, nps=score, message="Refund please")

    assert await count_threads(application, ThreadFilters(nps_min=9)) == inbox.Total(3)
    assert await count_threads(application, ThreadFilters(nps_min=9, query="refund")) == inbox.Total(3)
    assert await count_threads(application, ThreadFilters(nps_min=9, query="zz")) == inbox.Total(0)


async def test_count_stops_at_its_cap_and_says_it_is_not_exact(application, monkeypatch):
    monkeypatch.setattr(inbox, "MAX_COUNTED", 2)
    for _ in range(3):
        await make_thread(application, sentiment="positive")

    assert await count_threads(application, ThreadFilters(sentiment="positive")) == inbox.Total(2, False)


@pytest.fixture
def small_windows(monkeypatch) -> None:
    """A search's window of the 4 newest threads, where 3 matches make a word frequent, which
    PostgreSQL then counts among the 6 newest threads."""
    monkeypatch.setattr(search_service, "SCAN_WINDOW", 4)
    monkeypatch.setattr(search_service, "FREQUENT_IN_WINDOW", 2)
    monkeypatch.setattr(search_service, "COUNT_WINDOW", 6)


async def test_a_frequent_word_is_counted_among_the_newest_threads_on_postgresql(
    application, backend, small_windows, monkeypatch
):
    if backend != "postgres":
        pytest.skip("SQLite's FTS5 reads a word's newest matches first: it counts through the look-up")
    for _ in range(10):
        await make_thread(application, message="Export fails.")

    async def no_look_up(*args):
        raise AssertionError("a frequent word is not looked up")

    monkeypatch.setattr(search_service, "look_up", no_look_up)

    assert await count_threads(application, ThreadFilters(query="export")) == inbox.Total(6, False)


async def test_a_frequent_word_of_fewer_threads_than_it_is_counted_among_is_counted_exactly(
    application, small_windows, monkeypatch
):
    monkeypatch.setattr(search_service, "COUNT_WINDOW", 100)
    for number in range(10):
        await make_thread(application, message="Export fails." if number >= 4 else "Dark mode, please.")

    assert await count_threads(application, ThreadFilters(query="export")) == inbox.Total(6)


async def test_a_word_rare_in_the_newest_threads_is_counted_through_the_look_up(application, small_windows):
    await make_thread(application, message="Export fails.")
    for _ in range(9):
        await make_thread(application, message="Dark mode, please.")

    assert await count_threads(application, ThreadFilters(query="export")) == inbox.Total(1)


async def test_filters_never_reach_another_applications_threads(application):
    other = await make_application(await make_user())
    await make_thread(other, nps=9, sentiment="negative", message="Refund")

    filters = ThreadFilters(nps_min=0, sentiment="negative", query="refund", replied=False)
    assert await found(application, nps_min=0, sentiment="negative", query="refund", replied=False) == []
    assert await count_threads(application, filters) == inbox.Total(0)
