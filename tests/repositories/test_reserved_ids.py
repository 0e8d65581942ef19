"""Ids reserved inside a transaction are new, in order, and never handed out twice."""

from __future__ import annotations

import pytest

from app.db import atomic
from app.db_clients import WriteOutsideTransaction
from app.repositories.sql import reserve_ids
from tests.factories import make_application, make_thread, make_user


async def test_reserved_ids_follow_the_last_row_in_order(db):
    application = await make_application(await make_user())
    newest = await make_thread(application)

    reserved = await atomic(lambda: reserve_ids("feedback", 3))

    assert reserved == [newest.id + 1, newest.id + 2, newest.id + 3]


async def test_a_reservation_never_hands_out_an_id_a_row_holds(db):
    application = await make_application(await make_user())
    reserved = await atomic(lambda: reserve_ids("feedback", 2))  # and nothing written with them

    later = await make_thread(application)

    assert later.id >= reserved[0]  # SQLite gives unused ids again; PostgreSQL's sequence moved on
    assert (await atomic(lambda: reserve_ids("feedback", 1))) == [later.id + 1]


async def test_reserving_ids_outside_a_transaction_raises(db):
    with pytest.raises(WriteOutsideTransaction):
        await reserve_ids("feedback", 1)
