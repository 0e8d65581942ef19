"""The busiest queries read their rows straight from an index, on both databases.

A plan that sorts instead costs time in proportion to every matching row, not to the page: the
replies of today, whose statistics PostgreSQL has not gathered yet, were joined and sorted in
full (31 ms for 8,000 replies) before the index covered (application, created_at, id).
SQLite's indexes end with the rowid, so it reads that order from either index. A search for a
word reads the trigram indexes rather than every thread (app/services/search.py).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from tortoise import connections

from app.db import atomic
from app.models import Feedback
from app.repositories import (
    attachments,
    deletion,
    maintenance,
    outbox,
    reply_lists,
    search,
    tags,
    threads,
    webhook_batches,
)
from app.repositories.inbox import ThreadQuery
from app.services.search import SCAN_WINDOW
from app.services.seed import SPAN_DAYS, seed_application
from app.services.tags import find_tag_id
from tests.factories import (
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_user,
)


async def _plan(sql: str, backend: str, sorting: bool = True) -> str:
    """The database's plan for a query, as text to search for sort steps. On a test's handful
    of rows a scan is the cheaper plan; ``sorting=False`` rules out a sort as well, for tests of
    an order: which of an index's order and a sort PostgreSQL picks for a few rows follows the
    statistics, which autovacuum gathers when it likes (a full run once saw a page of threads
    sorted). Then the question is whether an index serves the order: a plan that cannot do
    without a sort still shows one."""
    connection = connections.get("default")
    if backend == "sqlite":
        _, rows = await connection.execute_query(f"EXPLAIN QUERY PLAN {sql}")
        return "\n".join(str(row["detail"]) for row in rows)
    settings = "SET enable_seqscan = off" + ("" if sorting else "; SET enable_sort = off")
    await connection.execute_script(settings)
    try:
        _, rows = await connection.execute_query(f"EXPLAIN (FORMAT JSON) {sql}")
    finally:
        await connection.execute_script("RESET enable_seqscan; RESET enable_sort")
    plan = rows[0]["QUERY PLAN"]
    return plan if isinstance(plan, str) else json.dumps(plan)


def _literal(value: object) -> str:
    """A parameter as an SQL literal."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str | datetime):
        return f"'{value}'"
    if isinstance(value, list):  # an array parameter (sql.one_of on PostgreSQL)
        return f"ARRAY[{', '.join(str(item) for item in value)}]::integer[]"
    return str(value)


def _inline(template: str, values: list) -> str:
    """A template with its ``{}`` replaced by the given values as SQL literals, in order."""
    return template.format(*[_literal(value) for value in values])


def _assert_read_in_order_off_the_index_by_state(plan: str, backend: str) -> None:
    """No sort, and the threads' index by application and state, not the primary key (which
    PostgreSQL would walk through every newer thread of the other state)."""
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
    if backend == "postgres":
        assert "feedback_newest_by_state" in plan and "feedback_pkey" not in plan, plan
    else:
        assert "idx_feedback_applica_7f78e4" in plan, plan


async def test_a_day_of_replies_is_read_in_order_from_an_index(backend):
    agent = await make_user(plan="team")
    application = await make_application(agent)
    thread = await make_thread(application)
    for number in range(3):
        await make_reply(agent, application, thread, f"Reply {number}")

    today = datetime.now(UTC).date()
    chosen = reply_lists.ReplyFilter(on_date=today)
    template, values = reply_lists.page_statement(application.id, chosen, limit=50, offset=0)
    plan = await _plan(_inline(template, values), backend)

    assert "TEMP B-TREE" not in plan
    assert "Sort" not in plan


async def test_a_page_of_threads_of_either_state_is_read_in_order_from_an_index_by_state(backend):
    agent = await make_user()
    application = await make_application(agent)
    for _ in range(3):
        await make_thread(application)

    for archived in (False, True):
        template, values = threads.page_of_state_statement(application.id, archived, limit=50, offset=0)
        plan = await _plan(_inline(template, values), backend, sorting=False)

        _assert_read_in_order_off_the_index_by_state(plan, backend)


async def test_an_inbox_page_with_a_tag_is_read_in_order_from_the_tag_links(backend):
    agent = await make_user()
    application = await make_application(agent)
    await make_thread(application, tags=["billing"])
    tag_id = await find_tag_id(application.id, "billing")

    for archived in (False, True):
        query = ThreadQuery.of_state(application.id, archived).tagged(tag_id).ids("<", 10**6)
        template, values = query.statement(limit=51)
        plan = await _plan(_inline(template, values), backend, sorting=False)

        assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
        assert "idx_feedback_ta_tag_id_cb875f" in plan, plan


async def test_mine_and_unassigned_are_read_in_order_off_the_index_by_assignee(backend):
    agent, colleague = await make_user(), await make_user()
    organization = await make_organization(agent, colleague)
    application = await make_application(agent, organization_id=organization.id)
    await seed_application(application.id, 600)
    # Most threads are a colleague's; a few are the agent's, a few nobody's (as in a busy inbox).
    ids = sorted(await Feedback.filter(application_id=application.id).values_list("id", flat=True))
    await atomic(lambda: Feedback.filter(id__in=ids[10:]).update(assignee_id=colleague.id))
    await atomic(lambda: Feedback.filter(id__in=ids[:5]).update(assignee_id=agent.id))
    await maintenance.refresh_statistics(("feedback",))
    index = "feedback_newest_by_assignee" if backend == "postgres" else "feedback_by_assignee"

    # A handful of the agent's threads are cheaper to sort than to read in order: with sorting
    # off, the question is whether the index serves the order (as it does for a page of many
    # matches).
    for archived in (False, True):
        for assignee in (agent.id, None):
            query = ThreadQuery.of_state(application.id, archived).assigned(assignee)
            for paged in (query, query.ids("<", 10**6)):
                template, values = paged.statement(limit=51)
                plan = await _plan(_inline(template, values), backend, sorting=False)
                count_plan = await _plan(_inline(*paged.count_statement(10_001)), backend, sorting=False)

                assert "TEMP B-TREE" not in plan and '"Sort"' not in plan, plan
                assert index in plan, plan
                assert index in count_plan, count_plan


async def test_the_search_window_is_counted_off_the_plain_index_by_state_alone(backend):
    agent = await make_user()
    application = await make_application(agent)
    await make_thread(application)

    for archived, before in ((False, None), (True, 10**6)):
        template, values = search.scan_window_statement(application.id, archived, before, SCAN_WINDOW)
        plan = await _plan(_inline(template, values), backend)

        assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
        if backend == "postgres":
            assert "Index Only Scan" in plan and "feedback_pkey" not in plan, plan
            assert "feedback_newest_by_state" not in plan, plan
        else:
            assert "COVERING INDEX" in plan, plan


async def test_a_search_window_with_its_senders_known_walks_the_threads_in_order(backend):
    """Even for a word PostgreSQL guesses rare, where it would read the trigram index for a
    ``LIKE`` (all of the word's threads, however old) rather than the window's threads."""
    agent = await make_user()
    application = await make_application(agent)
    await seed_application(application.id, 600)
    await maintenance.refresh_statistics(("feedback", "members"))
    first, second = await Feedback.filter(application_id=application.id).order_by("id").limit(2)
    senders = [first.member_id, second.member_id]

    query = ThreadQuery.of_state(application.id, False).containing_among("zqxjvw", senders)
    template, values = query.ids(">=", first.id).statement(limit=51)
    plan = await _plan(_inline(template, values), backend)

    _assert_read_in_order_off_the_index_by_state(plan, backend)
    assert "feedback_message_search" not in plan and "Hash" not in plan, plan


async def test_a_search_looks_words_up_in_the_trigram_indexes(backend):
    if backend == "sqlite":
        messages = _inline(search._SQLITE_MESSAGE_MATCHES, ["%export%", 1, 0, 10**9, 50])
        senders = _inline(search._SQLITE_SENDER_MATCHES, ["%export%", 1, 50] * 2)
        for sql in (messages, senders):
            plan = await _plan(sql, backend)
            assert "VIRTUAL TABLE INDEX" in plan and ":L" in plan, plan
            assert "TEMP B-TREE FOR ORDER BY" not in plan, plan
            assert not plan.startswith("SCAN m") and not plan.startswith("SEARCH f"), plan
    else:
        condition = "UPPER(CAST(f.message AS VARCHAR)) LIKE UPPER({}) ESCAPE '\\'"
        sql = _inline(f"SELECT f.id FROM feedback f WHERE {condition}", ["%EXPORT%"])
        assert "feedback_message_search" in await _plan(sql, backend)


async def _type_index(backend: str) -> str:
    """The name of the replies' index by application and type (migration 0012)."""
    connection = connections.get("default")
    if backend == "sqlite":
        sql = "SELECT name AS name, sql AS definition FROM sqlite_master WHERE tbl_name = 'replies'"
    else:
        sql = "SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE tablename = 'replies'"
    _, rows = await connection.execute_query(sql)
    definitions = [(row["name"], (row["definition"] or "").replace('"', "")) for row in rows]
    [name] = [name for name, text in definitions if "INDEX" in text and "type," in text]
    return str(name)


async def test_replies_of_one_type_are_read_in_order_and_counted_from_their_index(backend):
    agent = await make_user(plan="team")
    application = await make_application(agent)
    thread = await make_thread(application)
    for kind in ("reply", "note", "reply"):
        await make_reply(agent, application, thread, f"A {kind}", type=kind)
    chosen = reply_lists.ReplyFilter(kind="note")
    index = await _type_index(backend)
    if backend == "postgres":
        # On a three-row table PostgreSQL may sort a bitmap scan's rows, or read another index
        # of the application's replies, depending on statistics left by earlier tests: with
        # current statistics and neither shortcut, the question is whether this index serves.
        await connections.get("default").execute_script(
            "ANALYZE replies; SET enable_sort = off; SET enable_bitmapscan = off"
        )
    try:
        template, values = reply_lists.page_statement(application.id, chosen, limit=50, offset=0)
        page_plan = await _plan(_inline(template, values), backend)
        conditions, condition_values = chosen.conditions()
        count = "SELECT COUNT(*) FROM replies r WHERE r.application_id = {}" + conditions
        count_plan = await _plan(_inline(count, [application.id, *condition_values]), backend)
    finally:
        if backend == "postgres":
            await connections.get("default").execute_script("RESET enable_sort; RESET enable_bitmapscan")

    assert "TEMP B-TREE" not in page_plan and "Sort" not in page_plan, page_plan
    assert index in page_plan and index in count_plan, (index, page_plan, count_plan)


async def test_a_tag_search_walks_the_applications_tags_in_name_order(backend):
    application = await make_application(await make_user())
    await make_thread(application, tags=["billing", "bug", "ui"])

    template, values = tags.search_statement(application.id, "bi", 20)
    plan = await _plan(_inline(template, values), backend)

    # SQLite walks the (application, name) index in order and stops at the limit; PostgreSQL
    # reads the application's entries of that index (a few, here) and may sort them.
    assert "TEMP B-TREE" not in plan and "SCAN t\n" not in plan + "\n" and "Seq Scan" not in plan, plan


async def test_retention_counts_its_due_threads_off_the_index_by_creation_time(backend):
    application = await make_application(await make_user())
    await seed_application(application.id, 2000)  # threads over SPAN_DAYS; the oldest few are due
    if backend == "postgres":
        await connections.get("default").execute_script("ANALYZE feedback")
    before = datetime.now(UTC) - timedelta(days=SPAN_DAYS - 7)

    template, values = deletion.count_before_statement(application.id, before, archived_only=False)
    plan = await _plan(_inline(template, values), backend)

    assert "idx_feedback_applica_fa5685" in plan, plan


async def test_the_due_webhook_deliveries_are_claimed_from_an_index(backend):
    """On PostgreSQL, in order from the index of the due ones: the index of every delivery by
    status fills with entries of rows delivered since, which a bitmap scan reads on every claim
    (55 ms after a million deliveries). SQLite, which leaves no such entries, searches that one."""
    now = datetime.now(UTC)

    template, values = webhook_batches.claim_statement(now, now + timedelta(seconds=20), 50)
    plan = await _plan(_inline(template, values), backend)

    if backend == "postgres":
        assert "webhook_deliveries_due" in plan and "Sort" not in plan, plan
    else:
        assert "SEARCH webhook_deliveries USING COVERING INDEX idx_webhook_del_status" in plan, plan


async def test_the_due_emails_are_read_in_order_from_their_index(backend):
    """Not every e-mail ever queued (SQLite scanned them all), nor dead index entries of those
    sent since (PostgreSQL's bitmap scan of the index by status)."""
    template, values = outbox.due_statement(datetime.now(UTC), 50)
    plan = await _plan(_inline(template, values), backend)

    assert "outbound_emails_due" in plan, plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan


async def test_the_files_of_threads_and_of_their_replies_are_read_off_both_indexes(backend):
    """Under the OR, a subquery of the replies would be a filter run on every file; the array
    of their ids lets each side read its own index."""
    if backend != "postgres":
        pytest.skip("SQLite reads them with the replies' ids already known (attachments_of)")
    agent = await make_user()
    application = await make_application(agent)
    thread = await make_thread(application)
    await make_reply(agent, application, thread)

    template, values = attachments.files_of_threads_and_their_replies_query([thread.id])
    plan = await _plan(_inline(template, values), backend)

    assert "BitmapOr" in plan and "idx_attachments_reply_i_7e1226" in plan, plan
    assert "SubPlan" not in plan, plan


async def test_the_e_mail_statuses_of_a_thread_are_read_off_the_e_mails_index_by_thread(backend):
    """The thread page reads them by thread, off the e-mails' index by thread, in order: never
    every e-mail ever queued."""
    agent = await make_user()
    application = await make_application(agent)
    thread = await make_thread(application)
    await make_reply(agent, application, thread)

    plan = await _plan(_inline(*outbox.statuses_of_thread_query(thread.id)), backend)

    assert "idx_outbound_em_feedbac" in plan, plan
    assert "SCAN o" not in plan and "TEMP B-TREE" not in plan, plan
