"""The replies, files and tag ids of threads, read in one statement on PostgreSQL (with the thread
itself when one thread is read by id)."""

from __future__ import annotations

import pytest

from app.db import atomic
from app.repositories import attachments, replies, tags, threads
from app.repositories.sql import read_json, select, select_together
from app.repositories.thread_parts import parts_of_threads, thread_with_parts
from app.services.attachments import claim_for_reply
from app.services.tags import add_tag_to_thread
from tests.factories import make_application, make_reply, make_thread, make_upload, make_user


async def _threads_with_parts():
    """Two threads with replies (one by the customer), a note, files on a thread and on a
    reply, and tags; and a third thread that must not show up."""
    agent = await make_user(plan="team")
    application = await make_application(agent)
    first = await make_thread(
        application,
        attachments=[await make_upload(application, "first.txt")],
        properties={"plan": "team", "seats": [1, 2.5, None], "trial": True},
        nps=9,
        url="https://example.org/settings?tab=1",
    )
    second = await make_thread(application, tags="billing,urgent")
    other = await make_thread(application, tags="billing", attachments=[await make_upload(application)])
    await make_reply(agent, application, first, "One")
    answered = await make_reply(agent, application, second, "Two")
    await make_reply(agent, application, second, "Internal", type="note")
    await make_reply(agent, application, other, "Not asked for")
    upload = await make_upload(application, "reply.txt")
    await atomic(lambda: claim_for_reply(application.id, answered.id, [upload]))
    await add_tag_to_thread(application, first, "zebra")
    return [first.id, second.id]


async def _application_of(feedback_id: int) -> int:
    thread = await threads.thread_anywhere(feedback_id)
    assert thread is not None
    return thread.application_id


async def test_the_parts_are_what_the_separate_reads_give(db):
    ids = await _threads_with_parts()
    found = await replies.replies_of_threads(ids)

    parts = await parts_of_threads(ids)

    assert parts.replies == found
    assert parts.attachments == await attachments.attachments_of(ids, [reply.id for reply in found])
    assert parts.tag_ids == await tags.tag_ids_of_threads(ids)


async def test_replies_come_oldest_first_and_files_in_upload_order(db):
    ids = await _threads_with_parts()

    parts = await parts_of_threads(ids)

    assert [reply.message for reply in parts.replies] == ["One", "Two", "Internal"]
    assert [file.name for file in parts.attachments] == ["first.txt", "reply.txt"]
    names = {tag.id: tag.name for tag in await tags.tags_of_application(await _application_of(ids[0]))}
    assert {
        thread: sorted(names[tag] for tag in found) for thread, found in (parts.tag_ids or {}).items()
    } == {
        ids[0]: ["zebra"],
        ids[1]: ["billing", "urgent"],
    }


async def test_postgres_reads_the_parts_in_one_statement(db, backend, queries):
    ids = await _threads_with_parts()
    queries.statements.clear()

    await parts_of_threads(ids)

    assert queries.count == (1 if backend == "postgres" else 3)


async def test_parts_without_tags_leave_them_unread(db):
    ids = await _threads_with_parts()

    parts = await parts_of_threads(ids, with_tags=False)

    assert parts.tag_ids is None
    assert len(parts.replies) == 3


async def test_no_thread_no_statement(db, queries):
    parts = await parts_of_threads([])

    assert (parts.replies, parts.attachments, parts.tag_ids) == ([], [], {})
    assert queries.count == 0


async def test_one_thread_comes_with_its_parts_as_the_separate_reads_give_them(db):
    first, _ = await _threads_with_parts()
    application_id = await _application_of(first)

    found = await thread_with_parts(application_id, first)

    assert found is not None
    thread, parts = found
    assert thread == await threads.thread_by_id(application_id, first, with_tag_ids=True)
    assert thread.tag_ids == tuple((await tags.tag_ids_of_threads([first]))[first])  # one: "zebra"
    assert parts == await parts_of_threads([first], with_tags=False)


async def test_one_thread_and_its_parts_take_one_postgres_statement(db, backend, queries):
    first, _ = await _threads_with_parts()
    application_id = await _application_of(first)
    queries.statements.clear()

    await thread_with_parts(application_id, first)

    assert queries.count == (1 if backend == "postgres" else 3)


async def test_a_thread_of_another_application_is_not_found_with_any_part(db):
    first, _ = await _threads_with_parts()
    stranger = await make_application(await make_user(email="mallory@example.com"))

    assert await thread_with_parts(stranger.id, first) is None


async def test_a_json_number_past_a_double_is_read_together_as_alone(db, backend):
    """orjson refuses 1e400, which a JSON column of PostgreSQL holds as it was given."""
    if backend != "postgres":
        pytest.skip("SQLite runs the queries in turn")
    query = ("SELECT CAST({} AS jsonb) AS properties", ['{"seats": 1e400}'])

    [[row]] = await select_together([query])

    assert read_json(row["properties"]) == read_json((await select(*query))[0]["properties"])


async def test_a_reply_carries_its_agent_without_the_accounts_secrets(db):
    """Replies are read in pages of fifty with their agents: only what a reply shows of one."""
    agent = await make_user(email="ann@example.com", name="Ann Agent")
    application = await make_application(agent)
    thread = await make_thread(application)
    written = await make_reply(agent, application, thread, "Hello")

    parts = await parts_of_threads([thread.id])
    read_back = await replies.reply_by_id(written.id)

    for reply in (written, parts.replies[0], read_back):
        assert reply is not None and reply.user is not None
        shown = (reply.user.id, reply.user.email, reply.user.name)
        assert shown == (agent.id, "ann@example.com", "Ann Agent")
        assert not hasattr(reply.user, "password_hash")
