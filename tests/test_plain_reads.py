"""Plain reads (``app.db.execute``, ``select_models``, ``from_row``): the objects the ORM makes, and
which connection they read on."""

from __future__ import annotations

import asyncio

from tortoise import Tortoise

from app.db import atomic, execute, select_models
from app.models import Application, Feedback, Member, Reply, Tag, User
from tests.factories import (
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_token,
    make_user,
)


async def _some_of_every_kind() -> None:
    agent = await make_user(plan="team")
    await make_token(agent, "read")
    await make_organization(agent)
    application = await make_application(agent)
    thread = await make_thread(
        application, message="Refund, please", tags=["billing"], properties={"plan": "pro", "seats": 3}
    )
    await make_reply(agent, application, thread)
    await make_reply(agent, application, thread, "Internal: check Stripe", type="note")


def _fields(item: object) -> dict[str, tuple[type, object]]:
    """An object's attributes with their types: ``1 == True``, yet a flag read as 1 is wrong."""
    return {name: (type(value), value) for name, value in vars(item).items()}


async def test_plain_reads_build_the_objects_the_orm_builds(db: str) -> None:
    await _some_of_every_kind()
    compared = set()
    for model in Tortoise.apps.get_models_iterable():
        by_orm = {item.pk: _fields(item) for item in await model.all()}
        plain = await select_models(model, "x", "", [])
        assert {item.pk: _fields(item) for item in plain} == by_orm, model.__name__
        compared.update({model} if by_orm else set())
    assert {Application, Feedback, Member, Reply, Tag, User} <= compared


async def test_a_plain_read_does_not_wait_for_an_open_write_transaction(db: str) -> None:
    agent = await make_user()
    writing, release = asyncio.Event(), asyncio.Event()

    async def long_write() -> None:
        await User.filter(id=agent.id).update(name="Renamed")
        writing.set()
        await release.wait()

    writer = asyncio.create_task(atomic(long_write))
    await writing.wait()
    try:
        rows = await asyncio.wait_for(execute("SELECT name FROM users WHERE id = {}", [agent.id]), 5)
    finally:
        release.set()
        await writer
    assert [row["name"] for row in rows] == ["Agent Smith"]


async def test_a_plain_read_after_a_commit_sees_it(db: str) -> None:
    agent = await make_user()
    await atomic(lambda: User.filter(id=agent.id).update(name="Renamed"))
    rows = await execute("SELECT name FROM users WHERE id = {}", [agent.id])
    assert [row["name"] for row in rows] == ["Renamed"]


async def test_a_plain_read_inside_a_transaction_sees_its_writes(db: str) -> None:
    agent = await make_user()

    async def rename_then_read() -> list:
        await User.filter(id=agent.id).update(name="Renamed")
        return await execute("SELECT name FROM users WHERE id = {}", [agent.id])

    rows = await atomic(rename_then_read)
    assert [row["name"] for row in rows] == ["Renamed"]
