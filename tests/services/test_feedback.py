"""Threads: created with a sentiment, listed newest first with their details in a fixed number of
queries, archived and corrected with their counters moved, and relabelled without losing an
agent's correction."""

from __future__ import annotations

import pytest

from app.errors import NotFound, ValidationError
from app.models import Feedback
from app.services.feedback import (
    filter_threads,
    get_thread,
    get_thread_details,
    list_threads,
    recompute_sentiment,
    set_archived,
    set_sentiment,
    update_thread,
)
from app.services.inbox import Total
from app.services.tags import find_tag
from app.services.thread_filters import ThreadFilters
from tests.factories import application_row, make_application, make_reply, make_thread, make_user


async def test_a_thread_gets_a_sentiment_when_the_client_sends_none(db):
    application = await make_application(await make_user())

    thread = await make_thread(application, message="I love this app, it is wonderful")

    assert thread.sentiment == "positive"


async def test_the_list_is_newest_first_with_its_total(db):
    application = await make_application(await make_user())
    first, second = await make_thread(application), await make_thread(application)

    page, total = await list_threads(await application_row(application.id), archived=False)

    assert [details.thread.id for details in page] == [second.id, first.id]
    assert total == 2


async def test_details_hold_the_replies_tags_and_attachments(db):
    agent = await make_user()
    application = await make_application(agent)
    thread = await make_thread(application, tags=["billing"], email="ann@example.org")
    await make_reply(agent, application, thread, "On it")

    details = await get_thread_details(application, thread.id)

    assert [reply.message for reply in details.replies] == ["On it"]
    assert details.replies[0].user is not None and details.replies[0].user.id == agent.id
    assert [tag.name for tag in details.tags] == ["billing"]
    assert details.thread.sender.email == "ann@example.org"


async def test_another_applications_thread_is_invalid_feedback(db):
    owner = await make_user()
    application, other = await make_application(owner), await make_application(owner)
    thread = await make_thread(other)

    with pytest.raises(NotFound, match="Invalid feedback"):
        await get_thread(application, thread.id)


async def test_archiving_moves_the_application_and_tag_counts_once(db):
    application = await make_application(await make_user())
    thread = await make_thread(application, tags=["billing"])

    await set_archived(application, thread, True)
    await set_archived(application, thread, True)

    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads) == (0, 1)
    tag = await find_tag(application.id, "billing")
    assert tag is not None and (tag.open_count, tag.archived_count) == (0, 1)
    assert (await get_thread(application, thread.id)).archived


async def test_an_agents_sentiment_is_kept_by_recomputation(db):
    application = await make_application(await make_user())
    thread = await make_thread(application, message="I love this app, it is wonderful")

    await set_sentiment(application, thread, "negative")
    changed = await recompute_sentiment(application)

    stored = await Feedback.get(id=thread.id)
    assert (stored.sentiment, stored.sentiment_corrected, changed) == ("negative", True, 0)


async def test_recomputation_relabels_threads_nobody_corrected(db):
    application = await make_application(await make_user())
    thread = await make_thread(application, message="I love this app, it is wonderful", sentiment="negative")

    changed = await recompute_sentiment(application)

    assert changed == 1
    assert (await Feedback.get(id=thread.id)).sentiment == "positive"


async def test_an_unknown_sentiment_is_refused_and_nothing_changes(db):
    application = await make_application(await make_user())
    thread = await make_thread(application)

    with pytest.raises(ValidationError, match="sentiment is invalid"):
        await update_thread(application, thread, archived=True, sentiment="furious")

    assert not (await Feedback.get(id=thread.id)).archived


async def test_filter_threads_without_filters_is_the_plain_list(db):
    application = await make_application(await make_user())
    threads = [await make_thread(application) for _ in range(3)]

    found = await filter_threads(await application_row(application.id), ThreadFilters(), limit=2)

    assert [details.thread.id for details in found.threads] == [threads[2].id, threads[1].id]
    assert found.total == Total(3) and found.next_before is None


async def test_filter_threads_reads_the_inbox_filters_and_loads_the_details(db):
    application = await make_application(await make_user())
    wanted = await make_thread(application, nps=10, tags=["billing"])
    await make_thread(application, nps=2)

    found = await filter_threads(application, ThreadFilters(nps_min=9))

    [details] = found.threads
    assert details.thread.id == wanted.id and [tag.name for tag in details.tags] == ["billing"]
    assert found.total == Total(1)
