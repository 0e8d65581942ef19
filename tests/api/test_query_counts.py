"""Every list runs a fixed number of queries, however many rows it shows (no N+1)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.services.attachments import store_uploads
from app.services.files import IncomingFile
from app.services.storage import storage_for
from tests.factories import body_json, make_application, make_reply, make_thread, make_token, make_user


async def _application_with_threads(count: int, settings):
    user = await make_user(plan="team")
    application = await make_application(user)
    for number in range(count):
        [upload] = await store_uploads(
            storage_for(settings),
            application,
            [IncomingFile(f"shot{number}.png", b"\x89PNG\r\n\x1a\n" + bytes(20))],
            10**6,
        )
        thread = await make_thread(application, tags=f"tag{number % 3},common", attachments=[upload])
        await make_reply(user, application, thread)
        await make_reply(user, application, thread, "internal", type="note")
    return application, await make_token(user)


async def _statements_for(api, queries, path: str, token: str) -> int:
    queries.statements.clear()
    response = await api.get(path, token)
    assert response.status_code == 200
    return queries.count


async def test_feedback_list_query_count_does_not_grow_with_threads(api, queries, settings):
    small, small_token = await _application_with_threads(2, settings)
    large, large_token = await _application_with_threads(12, settings)

    few = await _statements_for(api, queries, f"/applications/{small.id}/feedback", small_token)
    many = await _statements_for(api, queries, f"/applications/{large.id}/feedback", large_token)

    assert few == many
    # token, its last use, application, threads, replies, attachments, tag links, tags
    assert many <= 8


async def test_replies_list_query_count_does_not_grow_with_replies(api, queries, settings):
    small, small_token = await _application_with_threads(2, settings)
    large, large_token = await _application_with_threads(12, settings)

    few = await _statements_for(api, queries, f"/applications/{small.id}/replies", small_token)
    many = await _statements_for(api, queries, f"/applications/{large.id}/replies", large_token)

    assert few == many
    assert many <= 6


async def test_tags_list_query_count_does_not_grow_with_tags(api, queries, settings):
    small, small_token = await _application_with_threads(1, settings)
    large, large_token = await _application_with_threads(9, settings)

    few = await _statements_for(api, queries, f"/applications/{small.id}/tags", small_token)
    many = await _statements_for(api, queries, f"/applications/{large.id}/tags", large_token)

    assert few == many
    assert many <= 4


async def test_posting_a_reply_runs_a_fixed_number_of_statements(api, queries, settings):
    application, token = await _application_with_threads(1, settings)
    listed = await body_json(await api.get(f"/applications/{application.id}/feedback", token))
    thread_id = listed["data"][0]["id"]
    path = f"/applications/{application.id}/feedback/{thread_id}/replies"

    counts = []
    for number in range(3):
        queries.statements.clear()
        response = await api.post(path, token, json={"message": f"Reply {number}"})
        assert response.status_code in (200, 201)
        counts.append(queries.count)

    assert counts[0] == counts[1] == counts[2]
    # 12, the read of the application's webhook endpoints and, on PostgreSQL, the notification
    # that tells the open pages of the thread (app.services.live)
    assert counts[0] <= 14


async def test_the_token_and_the_application_of_the_path_are_read_in_one_statement(
    api, queries, settings, backend
):
    application, token = await _application_with_threads(2, settings)
    path = f"/applications/{application.id}/feedback"
    await api.get(path, token)  # the token's first use is written once

    statements = await _statements_for(api, queries, path, token)

    # the token with its user and the application, the page with its tag ids, its replies and
    # files (these two in one statement on PostgreSQL: app.repositories.thread_parts)
    assert statements == (3 if backend == "postgres" else 4), queries.statements
    [first] = [statement for statement in queries.statements if "FROM access_tokens" in statement]
    assert "LEFT JOIN applications a" in first


async def test_the_replies_list_reads_its_page_files_and_count_in_one_postgresql_statement(
    api, queries, settings, backend
):
    application, token = await _application_with_threads(2, settings)
    path = f"/applications/{application.id}/replies?date={datetime.now(UTC).date()}"
    await api.get(path, token)  # the token's first use is written once

    statements = await _statements_for(api, queries, path, token)

    # the token with its user and the application, then the page, its replies' files and the
    # day's count (app.repositories.reply_lists.listing)
    assert statements == (2 if backend == "postgres" else 4), queries.statements
