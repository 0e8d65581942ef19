"""The benchmark's reference app opens its database exactly as Earful does, so that the ratios
in benchmarks/results.md compare the two on the same footing (a reference without Earful's
``synchronous=NORMAL`` waited for an fsync per insert and looked 2.6 times slower than it is)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from tortoise import Tortoise, connections

from app.config import sqlite_url
from app.db import close_database, open_database
from benchmarks.reference_app import tortoise_config
from benchmarks.servers import reference_database_url
from tests.conftest import throwaway_postgres_database

# What a SQLite connection's behaviour depends on, as the connection reports it.
SQLITE_PRAGMAS = (
    "synchronous",
    "journal_mode",
    "journal_size_limit",
    "busy_timeout",
    "foreign_keys",
    "cache_size",
    "temp_store",
    "mmap_size",
    "locking_mode",
)
# Pool settings that differ between the two by design only: where each connects.
WHERE = {"database", "user", "password", "host", "port"}


async def _sqlite_pragmas() -> dict[str, object]:
    client = connections.get("default")
    values = {}
    for pragma in SQLITE_PRAGMAS:
        _, rows = await client.execute_query(f"PRAGMA {pragma}")
        values[pragma] = tuple(rows[0]) if rows else None
    return values


async def _pool_settings() -> dict[str, object]:
    template = connections.get("default")._template
    return {key: value for key, value in template.items() if key not in WHERE}


async def _product_and_reference(
    product_url: str, reference_url: str, read: Callable[[], Awaitable[dict[str, object]]]
) -> tuple[dict[str, object], dict[str, object]]:
    """``read`` on the product's connection, then on the reference app's."""
    await open_database(product_url)
    try:
        product = await read()
    finally:
        await close_database()
    await Tortoise.init(config=tortoise_config(reference_url))
    try:
        reference = await read()
    finally:
        await Tortoise.close_connections()
    return product, reference


async def test_the_reference_opens_sqlite_with_the_products_pragmas(tmp_path: Path) -> None:
    product_url = sqlite_url(tmp_path / "earful.sqlite3")
    reference_url = reference_database_url(None, tmp_path)
    product, reference = await _product_and_reference(product_url, reference_url, _sqlite_pragmas)
    assert reference == product
    assert product["synchronous"] == (1,)  # NORMAL: the setting whose absence skewed the ratios


async def test_the_reference_opens_postgresql_with_the_products_pool(tmp_path: Path) -> None:
    async with throwaway_postgres_database("earful_reference") as url:
        product, reference = await _product_and_reference(
            url, reference_database_url(url, tmp_path), _pool_settings
        )
    assert reference == product
