"""Saved replies of applications and organizations."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    moment,
    read_moment,
    select,
    select_one,
)


@dataclass(slots=True)
class SavedReplyRow:
    """A saved reply of an application, or of an organization (exactly one of the two is set)."""

    id: int
    application_id: int | None
    organization_id: int | None
    title: str
    text: str
    created_by_id: int | None
    created_at: datetime
    updated_at: datetime


SAVED_REPLY_COLUMNS = (
    "id", "application_id", "organization_id", "title", "text", "created_by_id", "created_at", "updated_at",
)  # fmt: skip
SELECT_SAVED_REPLIES = f"SELECT {columns('s', SAVED_REPLY_COLUMNS)} FROM saved_replies s"
# Titles sort without regard to case on both databases; the id breaks ties.
BY_TITLE = "ORDER BY LOWER(s.title), s.id"


def saved_reply_of(row: Row) -> SavedReplyRow:
    return SavedReplyRow(
        id=row["s.id"],
        application_id=row["s.application_id"],
        organization_id=row["s.organization_id"],
        title=row["s.title"],
        text=row["s.text"],
        created_by_id=row["s.created_by_id"],
        created_at=read_moment(row["s.created_at"]),
        updated_at=read_moment(row["s.updated_at"]),
    )


async def saved_replies_of_application(application_id: int) -> list[SavedReplyRow]:
    """An application's own saved replies, by title."""
    return [saved_reply_of(row) for row in await select(*saved_replies_for_query(application_id, None))]


async def saved_replies_of_organization(organization_id: int) -> list[SavedReplyRow]:
    """An organization's saved replies, by title."""
    rows = await select(
        f"{SELECT_SAVED_REPLIES} WHERE s.organization_id = {{}} {BY_TITLE}", [organization_id]
    )
    return [saved_reply_of(row) for row in rows]


def saved_replies_for_query(application_id: int, organization_id: int | None) -> tuple[str, list[object]]:
    """The statement of :func:`saved_replies_for` (the thread page reads it with the thread:
    app.repositories.thread_parts); :func:`saved_reply_of` reads its rows."""
    if organization_id is None:
        return f"{SELECT_SAVED_REPLIES} WHERE s.application_id = {{}} {BY_TITLE}", [application_id]
    return (
        f"{SELECT_SAVED_REPLIES} WHERE s.application_id = {{}} OR s.organization_id = {{}} {BY_TITLE}",
        [application_id, organization_id],
    )


async def saved_replies_for(application_id: int, organization_id: int | None) -> list[SavedReplyRow]:
    """The saved replies offered in an application's reply box: its own and, when it belongs to
    one, its organization's; by title, in one statement."""
    rows = await select(*saved_replies_for_query(application_id, organization_id))
    return [saved_reply_of(row) for row in rows]


async def saved_reply_by_id(saved_reply_id: int) -> SavedReplyRow | None:
    row = await select_one(f"{SELECT_SAVED_REPLIES} WHERE s.id = {{}}", [saved_reply_id])
    return None if row is None else saved_reply_of(row)


async def count_saved_replies(application_id: int | None, organization_id: int | None) -> int:
    """How many saved replies the application (or the organization) has."""
    column, owner = (
        ("application_id", application_id)
        if application_id is not None
        else ("organization_id", organization_id)
    )
    row = await select_one(f"SELECT COUNT(*) AS found FROM saved_replies WHERE {column} = {{}}", [owner])
    return int(row["found"]) if row else 0


async def insert_saved_reply(
    application_id: int | None,
    organization_id: int | None,
    title: str,
    text: str,
    created_by_id: int | None,
    now: datetime,
) -> int:
    """A new saved reply; its id."""
    rows = await change_returning(
        "INSERT INTO saved_replies (application_id, organization_id, title, text, created_by_id, "
        "created_at, updated_at) VALUES ({}, {}, {}, {}, {}, {}, {}) RETURNING id",
        [application_id, organization_id, title, text, created_by_id, moment(now), moment(now)],
    )
    return int(rows[0]["id"])


async def update_saved_reply(saved_reply_id: int, title: str, text: str, now: datetime) -> None:
    await change(
        "UPDATE saved_replies SET title = {}, text = {}, updated_at = {} WHERE id = {}",
        [title, text, moment(now), saved_reply_id],
    )


async def delete_saved_reply(saved_reply_id: int) -> bool:
    return await change("DELETE FROM saved_replies WHERE id = {}", [saved_reply_id]) > 0
