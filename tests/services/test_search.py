"""Inbox text search: what matches, on both databases, through the trigram indexes."""

from __future__ import annotations

import asyncio

import pytest
from tortoise import connections

from app import search_db
from app.db import atomic
from app.models import Feedback
from app.repositories import search_index
from app.services import search
from app.services.feedback import set_archived
from app.services.inbox import search_threads
from tests.factories import make_application, make_thread, make_user
from tests.search_lock import search_writer_held


@pytest.fixture(autouse=True, params=["indexes", "unindexed", "scan"])
def path(request, monkeypatch) -> str:
    """Every behaviour holds when the trigram indexes answer (no thread is in the scanned
    window), when what they lack yet is read from the threads (SQLite's indexer has not run),
    and when the scan of the newest threads answers."""
    if request.param != "scan":
        monkeypatch.setattr(search, "SCAN_WINDOW", 0)
    if request.param == "indexes":
        # A search reads the indexes first for the senders who may match.
        matching_senders = search.matching_senders

        async def indexed_first(*args):
            await search.index_new_rows()
            return await matching_senders(*args)

        monkeypatch.setattr(search, "matching_senders", indexed_first)
    return request.param


@pytest.fixture
async def application(db):
    return await make_application(await make_user(plan="team"))


async def messages_found(application, query: str, **filters) -> list[str]:
    page = await search_threads(application, query=query, **filters)
    return [row.thread.message for row in page.rows]


async def test_a_word_of_the_message_matches_in_any_case(application):
    await make_thread(application, message="The Export button does nothing.")
    await make_thread(application, message="Please add dark mode.")

    assert await messages_found(application, "eXPORT") == ["The Export button does nothing."]


async def test_part_of_a_word_matches(application):
    await make_thread(application, message="Exporting to CSV fails.")

    assert await messages_found(application, "porting") == ["Exporting to CSV fails."]


async def test_sender_email_and_name_match(application):
    await make_thread(application, email="zed@corp.example", message="From Zed.")
    await make_thread(application, email="amy@example.org", name="Amy Pond", message="From Amy.")

    assert await messages_found(application, "corp.example") == ["From Zed."]
    assert await messages_found(application, "POND") == ["From Amy."]


async def test_a_sender_renamed_by_a_later_submission_is_found_by_the_new_name(application):
    await make_thread(application, email="kim@example.org", name="Kim Old", message="First.")
    await make_thread(application, email="kim@example.org", name="Kim Newname", message="Second.")

    assert sorted(await messages_found(application, "newname")) == ["First.", "Second."]


async def test_text_of_two_characters_matches(application):
    await make_thread(application, message="Login fails on iOS 17.")
    await make_thread(application, message="Works fine.")

    assert await messages_found(application, "iO") == ["Login fails on iOS 17."]


async def test_percent_and_underscore_match_themselves(application):
    await make_thread(application, message="Battery drops 100% to 0 overnight.")
    await make_thread(application, message="We are 1000 users.")
    await make_thread(application, message="The field user_id is empty.")
    await make_thread(application, message="The field userXid is odd.")

    assert await messages_found(application, "100%") == ["Battery drops 100% to 0 overnight."]
    assert await messages_found(application, "user_id") == ["The field user_id is empty."]


async def test_search_keeps_the_other_filters(application):
    await make_thread(application, message="Export is broken.", sentiment="negative", tags="bug")
    await make_thread(application, message="Export is lovely.", sentiment="positive")
    archived = await make_thread(application, message="Export was fixed.")
    await set_archived(application, archived, True)

    assert await messages_found(application, "export", sentiment="negative") == ["Export is broken."]
    assert await messages_found(application, "export", tag="bug") == ["Export is broken."]
    assert await messages_found(application, "export", archived=True) == ["Export was fixed."]


async def test_search_sees_nothing_of_another_application(application):
    other = await make_application(await make_user())
    await make_thread(other, email="spy@other.example", message="Export secrets of the other tenant.")

    assert await messages_found(application, "export") == []
    assert await messages_found(application, "spy@other") == []


async def test_a_deleted_thread_no_longer_matches(application):
    thread = await make_thread(application, message="Remove this export complaint.")
    await atomic(lambda: Feedback.filter(id=thread.id).delete())
    await make_thread(application, message="Another export complaint.")

    assert await messages_found(application, "export") == ["Another export complaint."]


async def test_more_matches_than_one_look_up_holds_are_paged_without_gaps(application, monkeypatch):
    monkeypatch.setattr(search, "MAX_CANDIDATES", 3)
    for number in range(8):
        await make_thread(application, message=f"Export problem {number}.")
        await make_thread(application, message=f"Unrelated {number}.")
        await make_thread(application, email=f"export{number}@example.org", message=f"Sender {number}.")

    seen, before = [], None
    for _ in range(10):
        page = await search_threads(application, query="export", before=before, limit=2)
        seen += [row.thread.message for row in page.rows]
        before = page.next_before
        if before is None:
            break

    newest_first = reversed(range(8))
    assert seen == [text for n in newest_first for text in (f"Sender {n}.", f"Export problem {n}.")]


async def test_senders_matching_in_the_newest_threads_fill_a_page_without_a_look_up(application, monkeypatch):
    monkeypatch.setattr(search, "SCAN_WINDOW", 4)
    for number in range(6):
        await make_thread(application, email=f"pond{number}@example.org", message=f"From Pond {number}.")
        await make_thread(application, name="Rory Williams", message=f"Unrelated {number}.")

    async def no_look_up(*args):
        raise AssertionError("the window holds a page")

    monkeypatch.setattr(search, "look_up", no_look_up)
    page = await search_threads(application, query="POND", limit=1)

    assert [row.thread.message for row in page.rows] == ["From Pond 5."]
    assert page.next_before is not None


async def test_a_sender_renamed_since_indexing_matches_by_the_new_name_in_the_newest_threads(
    application, backend, monkeypatch
):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    monkeypatch.setattr(search, "SCAN_WINDOW", 4)
    for number in range(6):
        await make_thread(application, email="amy@example.org", name="Amy Oldname", message=f"Amy {number}.")
    await search.index_new_rows()
    await make_thread(application, email="amy@example.org", name="Amy Pond", message="Amy renamed.")

    assert await messages_found(application, "oldname", limit=1) == []
    assert await messages_found(application, "pond", limit=1) == ["Amy renamed."]


async def test_search_query_count_does_not_grow_with_the_matches(application, queries):
    other = await make_application(await make_user())
    for number in range(3):
        await make_thread(application, email=f"few{number}@example.org", message="Export fails.", tags="a,b")
    for number in range(30):
        await make_thread(other, email=f"many{number}@example.org", message="Export fails.", tags="a,b")
    await search.index_new_rows()

    queries.statements.clear()
    await search_threads(application, query="export")
    few = queries.count
    queries.statements.clear()
    await search_threads(other, query="export")

    assert queries.count == few
    assert few <= 10


async def _search_index_is_sound() -> None:
    """FTS5's own check of its index against the threads and senders (SQLite)."""

    async def check(connection) -> None:
        for table in ("feedback_search", "members_search"):
            await connection.execute_query(
                f"INSERT INTO search.{table} ({table}, rank) VALUES ('integrity-check', 1)"
            )

    await search_db.indexing(check)


async def test_index_follows_threads_that_go_and_senders_renamed_before_or_after_indexing(
    application, backend
):
    if backend != "sqlite":
        pytest.skip("PostgreSQL's GIN indexes are maintained by PostgreSQL itself")
    indexed = await make_thread(application, email="ivy@example.org", name="Ivy Early", message="Old export.")
    await search.index_new_rows()
    fresh = await make_thread(application, email="max@example.org", name="Max Late", message="New export.")
    await atomic(lambda: Feedback.filter(id__in=[indexed.id, fresh.id]).delete())
    await make_thread(application, email="ivy@example.org", name="Ivy Renamed", message="Kept export.")
    await make_thread(application, email="max@example.org", name="Max Renamed", message="Also kept export.")

    assert await search.index_new_rows() > 0
    await _search_index_is_sound()
    assert sorted(await messages_found(application, "export")) == ["Also kept export.", "Kept export."]
    assert await messages_found(application, "renamed") == ["Also kept export.", "Kept export."]
    assert await messages_found(application, "early") == []


async def test_the_indexer_adds_new_threads_while_the_server_runs(application, backend, monkeypatch):
    if backend != "sqlite":
        pytest.skip("PostgreSQL indexes new rows as they are written")
    monkeypatch.setattr(search, "INDEX_INTERVAL", 0.05)
    thread = await make_thread(application, message="Export arrives while serving.")
    stop = asyncio.Event()
    indexer = asyncio.create_task(search.run_indexer(stop))
    try:
        for _ in range(100):
            _, rows = await connections.get("default").execute_query(
                "SELECT last_id FROM search.search_progress WHERE name = 'feedback'"
            )
            if rows[0]["last_id"] >= thread.id:
                break
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.wait_for(indexer, 5)

    assert rows[0]["last_id"] >= thread.id
    assert await search.index_new_rows() == 0


async def test_indexing_after_a_bulk_load_finds_the_rows_and_merges_segments_again(application, backend):
    await make_thread(application, message="The Export button does nothing.")

    await search.index_in_bulk(batch=1)

    assert await messages_found(application, "export") == ["The Export button does nothing."]
    if backend == "sqlite":
        for table in ("feedback_search", "members_search"):
            _, rows = await connections.get("default").execute_query(
                f"SELECT k, v FROM search.{table}_config WHERE k IN ('automerge', 'crisismerge') ORDER BY k"
            )
            assert [tuple(row) for row in rows] == [("automerge", 4), ("crisismerge", 16)]


async def test_a_bulk_load_merges_a_level_of_eight_segments_at_once(application, backend):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    for number in range(10):
        await make_thread(application, message=f"Export number {number} failed.")

    await search.index_in_bulk(batch=1)  # a transaction, and so a segment, per row

    for table in ("feedback_search", "members_search"):
        _, rows = await connections.get("default").execute_query(
            f"SELECT count(DISTINCT segid) FROM search.{table}_idx"
        )
        assert rows[0][0] < 8, table  # eight were merged into one, two more came after
    assert len(await messages_found(application, "export")) == 10


async def _indexed_text_holding(word: str) -> int:
    """How many rows of the search file's thread index hold ``word`` (SQLite)."""
    _, rows = await connections.get("default").execute_query(
        "SELECT count(*) FROM search.feedback_search WHERE message LIKE ?", [f"%{word}%"]
    )
    return int(rows[0][0])


async def test_the_text_of_a_deleted_or_changed_thread_leaves_the_search_file(application, backend):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    gone = await make_thread(application, message="Erase my passport number.")
    changed = await make_thread(application, message="My card number is wrong.")
    await search.index_new_rows()

    await atomic(lambda: Feedback.filter(id=gone.id).delete())
    await atomic(lambda: Feedback.filter(id=changed.id).update(message="Redacted."))
    await search.index_new_rows()

    assert await _indexed_text_holding("passport") == 0
    assert await _indexed_text_holding("card number") == 0
    assert await messages_found(application, "redacted") == ["Redacted."]
    await _search_index_is_sound()


async def test_applied_removals_are_deleted_from_the_main_file(application, backend):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    thread = await make_thread(application, message="Short-lived export.")
    await search.index_new_rows()
    await atomic(lambda: Feedback.filter(id=thread.id).delete())

    await search.index_new_rows()

    _, rows = await connections.get("default").execute_query("SELECT count(*) FROM search_removals")
    assert rows[0][0] == 0


async def test_an_open_indexing_transaction_does_not_hold_up_writes_to_the_main_file(application, backend):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    await make_thread(application, message="Waiting to be indexed.")

    async with search_writer_held():
        written = await asyncio.wait_for(make_thread(application, message="Captured meanwhile."), 5)

    assert written.id is not None
    assert await messages_found(application, "meanwhile") == ["Captured meanwhile."]


async def test_a_search_scans_while_the_search_file_is_far_behind(application, backend, monkeypatch, path):
    if backend != "sqlite" or path == "indexes":
        pytest.skip("the search file is SQLite's; this path fills it first")
    monkeypatch.setattr(search, "CATCH_UP", 1)
    for number in range(3):
        await make_thread(application, message=f"Export number {number}.")

    assert await search.matching_senders(application.id, "export") is None
    assert len(await messages_found(application, "export")) == 3
    assert (await search_index.backlog(10))["feedback"] == 3


async def test_a_search_file_ahead_of_the_main_file_is_rebuilt(application, backend, db):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    await make_thread(application, message="Export from before the restore.")
    await search.index_new_rows()
    # As after restoring an older copy of the main file beside a newer search file.
    await search_db.indexing(
        lambda client: client.execute_query("UPDATE search.search_progress SET last_id = last_id + 1000000")
    )
    await search_db.close_search_database()
    await search_db.open_search_database(db)

    await search.index_new_rows()

    assert await messages_found(application, "export") == ["Export from before the restore."]
    assert await search_index.backlog(10) == {"feedback": 0, "members": 0, "removals": 0}


async def test_a_search_does_not_wait_for_an_indexer_holding_the_search_file(application, backend, path):
    if backend != "sqlite" or path == "indexes":
        pytest.skip("the search file is SQLite's; this path indexes first")
    await make_thread(application, message="Export while the index merges.")

    async with search_writer_held(rows=1):
        found = await asyncio.wait_for(messages_found(application, "export"), 5)

    assert found == ["Export while the index merges."]


async def test_a_thread_whose_text_changed_is_found_by_its_new_text_before_it_is_indexed_again(
    application, backend
):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    thread = await make_thread(application, message="Old wording about export.")
    await search.index_new_rows()

    await atomic(lambda: Feedback.filter(id=thread.id).update(message="New phrasing about import."))

    assert await messages_found(application, "wording") == []
    assert await messages_found(application, "phrasing") == ["New phrasing about import."]
