"""Plain reads (``app.db.select_models`` and ``from_row``) make the same objects as the ORM."""

from __future__ import annotations

from tortoise import Tortoise

from app.db import select_models
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
