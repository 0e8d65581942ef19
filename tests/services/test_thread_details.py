"""Threads with their replies, attachments and tags, in a fixed number of statements."""

from __future__ import annotations

from app.repositories import threads
from app.services.tags import add_tag_to_thread
from app.services.thread_details import load_details
from tests.factories import make_reply, make_thread, make_upload, thread_row


async def test_details_of_many_threads_take_a_fixed_number_of_statements(
    agent, application, backend, queries
):
    first = await make_thread(application, attachments=[await make_upload(application)])
    second = await make_thread(application)
    await make_reply(agent, application, first, "One")
    await make_reply(agent, application, second, "Two")
    await add_tag_to_thread(application, second, "billing")
    loaded = [await thread_row(first.id), await thread_row(second.id)]

    queries.statements.clear()
    details = await load_details(loaded)

    # app.repositories.thread_parts, and the label of a tag this worker has not shown yet
    assert queries.count == (1 if backend == "postgres" else 3) + 1
    assert [d.thread.id for d in details] == [first.id, second.id]
    assert [[r.message for r in d.replies] for d in details] == [["One"], ["Two"]]
    assert [len(d.attachments) for d in details] == [1, 0]
    assert [[t.name for t in d.tags] for d in details] == [[], ["billing"]]


async def test_labels_shown_once_are_not_read_again(agent, application, backend, queries):
    thread = await make_thread(application, tags="billing,refund")
    loaded = [await thread_row(thread.id)]
    await load_details(loaded)

    queries.statements.clear()
    [details] = await load_details(loaded)

    assert queries.count == (1 if backend == "postgres" else 3)
    assert [tag.name for tag in details.tags] == ["billing", "refund"]


async def test_threads_read_with_their_tag_ids_need_no_statement_for_their_tags(
    agent, application, backend, queries
):
    await make_thread(application, tags="billing")
    await make_thread(application)
    page = await threads.page_of_state(application.id, False, 50, 0)
    await load_details(page)  # the labels, once

    queries.statements.clear()
    details = await load_details(page)

    assert queries.count == (1 if backend == "postgres" else 2)  # replies, then files
    assert not any("feedback_tags" in statement for statement in queries.statements)
    assert [[tag.name for tag in d.tags] for d in details] == [[], ["billing"]]


async def test_no_thread_no_statement(db, queries):
    assert await load_details([]) == []

    assert queries.count == 0
