"""Upkeep statements: they run beside the search file's indexer without waiting for it."""

from __future__ import annotations

import asyncio

import pytest

from app import search_db
from app.repositories import maintenance, search_index
from app.services import search
from tests.factories import make_application, make_thread, make_user


async def test_refreshing_statistics_does_not_wait_for_the_search_files_writer(db, backend):
    if backend != "sqlite":
        pytest.skip("the search file is SQLite's")
    await search.index_new_rows()  # the search file's tables, made once
    await make_thread(await make_application(await make_user()), message="Waiting to be indexed.")
    holding, release = asyncio.Event(), asyncio.Event()

    async def index_and_hold(client) -> None:
        await search_index.index_batch(client, "feedback", 100)  # takes the search file's write lock
        holding.set()
        await release.wait()

    indexing = asyncio.create_task(search_db.indexing(index_and_hold))
    await asyncio.wait_for(holding.wait(), 5)
    try:
        await asyncio.wait_for(maintenance.refresh_statistics(("feedback",)), 5)
    finally:
        release.set()
        await indexing
