"""A write outside a transaction raises at once, whoever sends it; inside one it is written."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from tortoise import connections

from app.db import transactional
from app.db_clients import WriteOutsideTransaction
from app.models import User
from app.repositories import accounts
from tests.factories import make_user


async def test_a_repository_write_outside_a_transaction_raises(db: str) -> None:
    agent = await make_user()

    with pytest.raises(WriteOutsideTransaction):
        await accounts.end_sessions(agent.id)

    assert (await User.get(id=agent.id)).session_version == agent.session_version


async def test_an_orm_write_outside_a_transaction_raises(db: str) -> None:
    agent = await make_user()

    with pytest.raises(WriteOutsideTransaction):
        await User.filter(id=agent.id).update(name="Renamed")
    with pytest.raises(WriteOutsideTransaction):
        await User.create(email="x@example.com", name="X", password_hash="-")

    assert (await User.get(id=agent.id)).name == agent.name


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE users SET name = 'x'",
        "  delete from users",
        "INSERT INTO users (email, name, password_hash) VALUES ('a@b.co', 'a', '-')",
        "WITH gone AS (DELETE FROM users RETURNING id) SELECT id FROM gone",
        "SELECT 1; UPDATE users SET name = 'x'",
    ],
)
async def test_a_raw_write_outside_a_transaction_raises(db: str, statement: str) -> None:
    with pytest.raises(WriteOutsideTransaction):
        await connections.get("default").execute_script(statement)


async def test_a_read_outside_a_transaction_is_allowed(db: str) -> None:
    agent = await make_user()

    assert (await accounts.user_by_id(agent.id)) is not None


async def test_a_write_inside_a_transaction_is_written(db: str) -> None:
    agent = await make_user()

    await transactional(accounts.end_sessions)(agent.id)

    assert (await User.get(id=agent.id)).session_version == agent.session_version + 1


async def test_a_nested_transaction_joins_the_outer_one_and_rolls_back_with_it(db: str) -> None:
    agent = await make_user()

    @transactional
    async def inner() -> None:
        await accounts.end_sessions(agent.id)

    @transactional
    async def outer() -> None:
        await inner()
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        await outer()

    assert (await User.get(id=agent.id)).session_version == agent.session_version


async def test_rows_inserted_in_a_transaction_come_back_typed(db: str) -> None:
    now = datetime.now(UTC)

    user = await transactional(accounts.insert_user)("new@example.com", "New", "-", now)

    assert (await accounts.user_by_email("new@example.com")) == user
