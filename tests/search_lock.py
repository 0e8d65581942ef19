"""Holding the search file's write lock, as the indexer does through a long FTS5 merge."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app import search_db
from app.repositories import search_index


@asynccontextmanager
async def search_writer_held(rows: int = 100) -> AsyncIterator[None]:
    """For the block's duration, an indexing transaction that has indexed up to ``rows`` threads
    (taking the search file's write lock) and has not committed."""
    holding, release = asyncio.Event(), asyncio.Event()

    async def index_and_hold(client) -> None:
        await search_index.index_batch(client, "feedback", rows)
        holding.set()
        await release.wait()

    indexing = asyncio.create_task(search_db.indexing(index_and_hold))
    await asyncio.wait_for(holding.wait(), 5)
    try:
        yield
    finally:
        release.set()
        await indexing
