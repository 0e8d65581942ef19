"""Rows read by the repositories hold what the ORM reads, value for value and type for type, and
reads outside a transaction never wait behind one."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from tortoise.models import Model

from app.db import atomic
from app.models import AccessToken, Application, Attachment, Feedback, Member, Organization, Reply, Tag, User
from app.repositories import accounts, applications, attachments, organizations, replies, tags, threads
from app.repositories.sql import read_moment, select
from tests.factories import (
    make_application,
    make_organization,
    make_reply,
    make_thread,
    make_token,
    make_upload,
    make_user,
)


async def _some_of_every_kind() -> tuple[Any, ...]:
    agent = await make_user(plan="team")
    await make_token(agent, "read")
    organization = await make_organization(agent, plan="team")
    application = await make_application(agent, organization_id=organization.id)

    async def set_origins() -> None:
        await Application.filter(id=application.id).update(
            allowed_origins="https://shop.example.com\nhttps://www.example.com"
        )

    await atomic(set_origins)
    upload = await make_upload(application)
    thread = await make_thread(
        application,
        message="Refund, please",
        tags=["billing"],
        properties={"plan": "pro", "seats": 3},
        nps=7,
        attachments=[upload],
    )
    await make_reply(agent, application, thread)
    await make_reply(agent, application, thread, "Internal: check Stripe", type="note")
    return agent, organization, application, thread


def _comparable(value: object) -> tuple[type, object]:
    """A value with its type: ``1 == True``, yet a flag read as 1 is wrong; instants compare as
    instants, whatever the time zone object."""
    if isinstance(value, datetime):
        return datetime, (value.timestamp(), value.utcoffset() is not None)
    return type(value), value


def _same_values(row: object, model: Model) -> None:
    for field in dataclasses.fields(row):  # type: ignore[arg-type]
        value = getattr(row, field.name)
        if (
            dataclasses.is_dataclass(value)
            or isinstance(value, list)
            or (value is None and field.default is None)
        ):
            continue
        expected = getattr(model, field.name)
        if isinstance(value, tuple):  # a list kept in one text column (an application's origins)
            assert value == tuple((expected or "").split()), (type(row).__name__, field.name, value, expected)
            continue
        assert _comparable(value) == _comparable(expected), (type(row).__name__, field.name, value, expected)


async def test_rows_hold_the_values_and_types_the_orm_reads(db: str) -> None:
    agent, organization, application, thread = await _some_of_every_kind()

    _same_values(await accounts.user_by_id(agent.id), await User.get(id=agent.id))
    [token] = await accounts.live_tokens_of(agent.id)
    _same_values(token, await AccessToken.get(id=token.id))
    _same_values(
        await organizations.organization_by_id(organization.id), await Organization.get(id=organization.id)
    )
    _same_values(
        await applications.application_by_id(application.id), await Application.get(id=application.id)
    )
    read = await threads.thread_by_id(application.id, thread.id)
    assert read is not None and read.member is not None
    _same_values(read, await Feedback.get(id=thread.id))
    _same_values(read.member, await Member.get(id=read.member_id))
    for reply in await replies.replies_of_threads([thread.id]):
        _same_values(reply, await Reply.get(id=reply.id))
    for tag in (await tags.tags_of_threads([thread.id]))[thread.id]:
        _same_values(tag, await Tag.get(id=tag.id))
    [attachment] = await attachments.attachments_of([thread.id])
    _same_values(attachment, await Attachment.get(id=attachment.id))


async def test_a_page_of_threads_carries_each_threads_tag_ids(db: str) -> None:
    application = await make_application(await make_user())
    tagged = await make_thread(application, tags="billing,urgent")
    untagged = await make_thread(application)

    page = await threads.page_of_state(application.id, False, 50, 0)

    linked = await tags.tag_ids_of_threads([tagged.id])
    assert {thread.id: sorted(thread.tag_ids or ()) for thread in page} == {
        tagged.id: sorted(linked[tagged.id]),
        untagged.id: [],
    }
    assert len(linked[tagged.id]) == 2


async def test_a_thread_read_without_its_tag_ids_says_so(db: str) -> None:
    application = await make_application(await make_user())
    thread = await make_thread(application, tags="billing")

    read = await threads.thread_by_id(application.id, thread.id)

    assert read is not None and read.tag_ids is None


async def test_a_read_does_not_wait_for_an_open_write_transaction(db: str) -> None:
    agent = await make_user()
    writing, release = asyncio.Event(), asyncio.Event()

    async def long_write() -> None:
        await User.filter(id=agent.id).update(name="Renamed")
        writing.set()
        await release.wait()

    writer = asyncio.create_task(atomic(long_write))
    await writing.wait()
    try:
        rows = await asyncio.wait_for(select("SELECT name FROM users WHERE id = {}", [agent.id]), 5)
    finally:
        release.set()
        await writer
    assert [row["name"] for row in rows] == ["Agent Smith"]


async def test_a_read_after_a_commit_sees_it(db: str) -> None:
    agent = await make_user()
    await atomic(lambda: User.filter(id=agent.id).update(name="Renamed"))

    rows = await select("SELECT name FROM users WHERE id = {}", [agent.id])

    assert [row["name"] for row in rows] == ["Renamed"]


async def test_a_read_inside_a_transaction_sees_its_writes(db: str) -> None:
    agent = await make_user()

    async def rename_then_read() -> list:
        await User.filter(id=agent.id).update(name="Renamed")
        return await select("SELECT name FROM users WHERE id = {}", [agent.id])

    rows = await atomic(rename_then_read)

    assert [row["name"] for row in rows] == ["Renamed"]


@pytest.mark.parametrize(
    "stored",
    [
        "2026-11-29 13:05:27.792615+00:00",  # SQLite's text
        "2026-11-29 14:05:27.792615+01:00",  # text written by another tool
        datetime(2026, 11, 29, 13, 5, 27, 792615, tzinfo=UTC),  # asyncpg's timestamptz
        datetime(2026, 11, 29, 14, 5, 27, 792615, tzinfo=timezone(timedelta(hours=1))),
        datetime(2026, 11, 29, 13, 5, 27, 792615),  # naive: UTC by convention
    ],
)
def test_a_stored_moment_is_read_as_the_same_instant_in_utc(stored):
    read = read_moment(stored)

    assert read == datetime(2026, 11, 29, 13, 5, 27, 792615, tzinfo=UTC)
    assert read.utcoffset() == timedelta(0) and read.tzinfo is UTC
