"""PostgreSQL keeps the cached plan of a page's statements instead of planning them on every run.

Planning the page of threads again each time cost the database as much as running it (0.3-0.5
ms, benchmarks/notes.md): with its limit bound as a parameter, the cached generic plan was
priced as if it returned a tenth of the threads, so the planner never chose it. The replies
list had the same limit, and the replies of a day a range bound the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg
import pytest
from tortoise import connections

from app.db import atomic
from app.repositories import attachments, maintenance, outbox, reply_lists, threads
from app.repositories.inbox import ThreadQuery
from app.repositories.sql import _statement, together_statement
from app.repositories.thread_parts import one_thread_queries, parts_queries
from app.representations import summary_reads
from app.services.seed import seed_application
from tests.factories import make_application, make_reply, make_thread, make_user

# PostgreSQL plans a prepared statement for its values five times before it weighs the
# generic plan (plancache.c); a few runs more leave no doubt which one it settled on.
RUNS = 8


async def _plans_of(db: str, template: str, values: list[object]) -> tuple[int, int]:
    """Run a statement RUNS times on a connection of its own (asyncpg prepares it once); how
    many generic and custom plans PostgreSQL made for it. Not a pooled connection: an earlier
    test may have prepared the same statement there, on other data, and its counts add up."""
    statement = _statement(template, len(values), connections.get("default"))
    connection = await asyncpg.connect("postgresql://" + db.split("://", 1)[1])
    try:
        for _ in range(RUNS):
            await connection.fetch(statement, *values)
        row = await connection.fetchrow(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1", statement
        )
    finally:
        await connection.close()
    return row["generic_plans"], row["custom_plans"]


@pytest.mark.parametrize("page", ["feedback list", "inbox"])
async def test_a_page_of_threads_is_not_planned_again_on_every_run(db, backend, page):
    if backend != "postgres":
        pytest.skip("a plan cache of PostgreSQL's")
    application = await make_application(await make_user())
    await seed_application(application.id, 2000)
    await maintenance.refresh_statistics(("feedback", "members"))
    statement = (
        threads.page_of_state_statement(application.id, False, 50, 0)
        if page == "feedback list"
        else ThreadQuery.of_state(application.id, False).statement(50)
    )

    generic, custom = await _plans_of(db, *statement)

    assert generic >= RUNS - 5 and custom <= 5, (generic, custom)


@pytest.mark.parametrize("page", ["all", "of a day", "of one type"])
async def test_a_page_of_replies_is_not_planned_again_on_every_run(db, backend, page):
    if backend != "postgres":
        pytest.skip("a plan cache of PostgreSQL's")
    agent = await make_user(plan="team")
    application = await make_application(agent)
    await seed_application(application.id, 2000)
    thread = await make_thread(application)
    for number in range(30):
        await make_reply(
            agent, application, thread, f"Reply {number}", type=("note" if number % 3 else "reply")
        )
    await maintenance.refresh_statistics(("replies", "feedback", "members"))
    chosen = {
        "all": reply_lists.ReplyFilter(),
        "of a day": reply_lists.ReplyFilter(on_date=datetime.now(UTC).date()),
        "of one type": reply_lists.ReplyFilter(kind="note"),
    }[page]

    # What the replies list counts beside its page (app.services.replies.list_replies).
    counted = {
        "all": None,
        "of a day": reply_lists.replies_on_query(application.id, datetime.now(UTC).date()),
        "of one type": reply_lists.count_matching_query(application.id, chosen),
    }[page]
    queries = reply_lists.listing_queries(application.id, chosen, 50, 0, summary_reads(), counted)

    generic, custom = await _plans_of(db, *together_statement(queries))

    assert generic >= RUNS - 5 and custom <= 5, (generic, custom)


async def test_the_outbox_poll_is_not_planned_again_on_every_wake_up(db, backend):
    if backend != "postgres":
        pytest.skip("a plan cache of PostgreSQL's")
    now = datetime.now(UTC)
    for number in range(2000):
        await atomic(
            lambda number=number: outbox.queue_message(
                "notification", None, f"agent{number}@example.com", f"<{number}@earful>", "Subject: hi", now
            )
        )
    await maintenance.refresh_statistics(("outbound_emails",))

    generic, custom = await _plans_of(db, *outbox.due_statement(now, 20))

    assert generic >= RUNS - 5 and custom <= 5, (generic, custom)


async def test_a_pages_files_are_read_by_one_statement_whatever_the_number_of_replies(db, backend, queries):
    if backend != "postgres":
        pytest.skip("SQLite takes IN lists")
    application = await make_application(await make_user())
    threads_of_page = [await make_thread(application) for _ in range(2)]
    for count in (2, 3, 7):
        await attachments.attachments_of([thread.id for thread in threads_of_page], list(range(1, count + 1)))

    texts = {statement.split(": [")[0] for statement in queries.statements if "FROM attachments" in statement}

    assert len(texts) == 1, texts


async def test_the_e_mail_statuses_of_a_threads_replies_are_read_by_one_statement_text(db, backend, queries):
    if backend != "postgres":
        pytest.skip("SQLite takes IN lists")
    for count in (2, 3, 7):
        await outbox.statuses_of_replies(list(range(1, count + 1)))

    texts = {
        statement.split(": [")[0] for statement in queries.statements if "FROM outbound_emails" in statement
    }

    assert len(texts) == 1, texts


async def test_one_thread_with_its_parts_is_not_planned_again_on_every_run(db, backend):
    """With its one id as a one-value array, PostgreSQL planned the statement on every run."""
    if backend != "postgres":
        pytest.skip("a plan cache of PostgreSQL's")
    agent = await make_user(plan="team")
    application = await make_application(agent)
    await seed_application(application.id, 2000)
    thread = await make_thread(application, tags="billing")
    await make_reply(agent, application, thread)
    await maintenance.refresh_statistics(("feedback", "members", "replies", "feedback_tags", "tags"))

    generic, custom = await _plans_of(db, *together_statement(one_thread_queries(application.id, thread.id)))

    assert generic >= RUNS - 5 and custom <= 5, (generic, custom)


async def test_the_parts_of_a_page_are_not_planned_again_on_every_run(db, backend):
    if backend != "postgres":
        pytest.skip("a plan cache of PostgreSQL's")
    application = await make_application(await make_user(plan="team"))
    await seed_application(application.id, 2000)
    await maintenance.refresh_statistics(("feedback", "members", "replies", "feedback_tags", "tags"))
    page = await threads.page_of_state(application.id, False, 50, 0)

    generic, custom = await _plans_of(db, *together_statement(parts_queries([t.id for t in page], True)))

    assert generic >= RUNS - 5 and custom <= 5, (generic, custom)


async def test_a_count_in_order_reads_the_newest_threads_in_its_generic_plan(db, backend):
    """The count of a search's window (app.services.search.frequent_in_window): with the range
    of ids as a parameter, the generic plan without the order scanned the whole table."""
    if backend != "postgres":
        pytest.skip("a plan cache of PostgreSQL's")
    application = await make_application(await make_user())
    await seed_application(application.id, 2000)
    await maintenance.refresh_statistics(("feedback", "members"))
    query = ThreadQuery.of_state(application.id, False).containing_among("export", []).ids(">=", 1)
    template, values = query.count_statement(51, in_order=True)
    numbered = _statement(template, len(values), connections.get("default"))
    literals = ", ".join(
        "false" if value is False else f"'{value}'" if isinstance(value, str) else str(value)
        for value in values
    )
    connection = await asyncpg.connect("postgresql://" + db.split("://", 1)[1])
    try:
        await connection.execute("SET plan_cache_mode = force_generic_plan")
        await connection.execute(f"PREPARE windowed AS {numbered}")
        plan = "\n".join(row[0] for row in await connection.fetch(f"EXPLAIN EXECUTE windowed({literals})"))
    finally:
        await connection.close()

    assert "feedback_newest_by_state" in plan and "Seq Scan" not in plan, plan
