"""The inbox's pages: filters combine, pages are keyed by id, and another application's threads
never show."""

from __future__ import annotations

import pytest

from app.errors import ValidationError
from app.services.feedback import set_archived
from app.services.inbox import search_threads
from tests.factories import make_application, make_thread, make_user


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

    assert (row.thread.sender.email, row.thread.sender.name) == ("ann@example.org", "Ann")
    assert [tag.name for tag in row.tags] == ["billing", "ui"]


@pytest.mark.parametrize(
    ("filters", "message"), [({"limit": 0}, "limit"), ({"sentiment": "furious"}, "sentiment")]
)
async def test_bad_filters_are_refused(db, filters, message):
    application = await make_application(await make_user())

    with pytest.raises(ValidationError, match=message):
        await search_threads(application, **filters)
