"""Upkeep statements: they run beside the search file's indexer without waiting for it."""

from __future__ import annotations

import asyncio

import pytest
from tortoise import connections

from app.repositories import maintenance
from app.services import search
from tests.factories import make_application, make_thread, make_user
from tests.search_lock import search_writer_held


async def test_refreshing_statistics_does_not_wait_for_the_search_files_writer(db, backend):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    await search.index_new_rows()  # the search file's tables, made once
    await make_thread(await make_application(await make_user()), message="Waiting to be indexed.")

    async with search_writer_held():
        await asyncio.wait_for(maintenance.refresh_statistics(("feedback",)), 5)


async def test_a_bulk_load_keeps_sqlites_temporary_files_in_memory(db, backend):
    if backend != "sqlite":
        pytest.skip("PostgreSQL's temporary files are the server's")
    await maintenance.prepare_bulk_load()

    # on the connection the load writes through, not on a reading one
    rows = await connections.get("default").execute_query_dict("PRAGMA temp_store")
    assert rows == [{"temp_store": 2}]  # MEMORY
