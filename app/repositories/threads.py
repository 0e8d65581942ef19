"""Feedback threads and their senders: the lists, one thread, the inbox's filtered pages, the
writes of new threads (in batches) and of their state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.repositories.accounts import AGENT_COLUMNS, AgentRow, optional_agent_of
from app.repositories.sql import (
    Row,
    change,
    change_returning,
    column_keys,
    columns,
    insert_rows,
    limit_clause,
    moment,
    parameters,
    postgres,
    read_json,
    read_moment,
    reserve_ids,
    select,
    select_one,
    write_json,
)
from app.repositories.tags import read_tag_ids, tag_ids_column


@dataclass(slots=True)
class SenderRow:
    """A sender of feedback (a member of an application), unique per application and address."""

    id: int
    application_id: int
    email: str
    name: str
    created_at: datetime
    updated_at: datetime


@dataclass(slots=True)
class ThreadRow:
    """A feedback thread, with its sender when read with it, and its assignee (if any) when
    read by :data:`SELECT_THREADS`."""

    id: int
    application_id: int
    member_id: int
    message: str
    sentiment: str
    sentiment_corrected: bool
    archived: bool
    nps: int | None
    url: str | None
    language: str
    ip_address: str
    user_agent: str
    properties: Any
    first_reply_time: int | None
    last_reply_at: datetime
    created_at: datetime
    updated_at: datetime
    member: SenderRow | None = None
    assignee_id: int | None = None
    assignee: AgentRow | None = None
    tag_ids: tuple[int, ...] | None = None
    """The ids of its tags, in no order, when it was read with them (:func:`select_tagged_threads`);
    None when it was not."""

    @property
    def sender(self) -> SenderRow:
        """The thread's sender, read with it (every read of a thread joins its sender)."""
        if self.member is None:
            raise LookupError(f"thread {self.id} was read without its sender")
        return self.member


@dataclass(frozen=True, slots=True)
class NewThreadRow:
    """What a new thread is written with; the repository gives it its id and sender."""

    application_id: int
    email: str
    name: str
    message: str
    sentiment: str
    nps: int | None
    url: str | None
    language: str
    ip_address: str
    user_agent: str
    properties: Any


THREAD_COLUMNS = (
    "id", "application_id", "member_id", "message", "sentiment", "sentiment_corrected", "archived", "nps",
    "url", "language", "ip_address", "user_agent", "properties", "first_reply_time", "last_reply_at",
    "created_at", "updated_at", "assignee_id",
)  # fmt: skip
SENDER_COLUMNS = ("id", "application_id", "email", "name", "created_at", "updated_at")
_THREAD_WITH_PEOPLE = (
    f"{columns('f', THREAD_COLUMNS)}, {columns('m', SENDER_COLUMNS)}, {columns('a', AGENT_COLUMNS)}"
)
# The assignee is joined last: after a LEFT JOIN SQLite keeps the tables in the order written,
# so joins that narrow the threads (a tag's links) must come before it.
_ASSIGNEE_JOIN = "LEFT JOIN users a ON a.id = f.assignee_id"


def select_threads(joins: str = "", selected: str | None = None) -> str:
    """``SELECT`` threads (``f``) with their senders (``m``) and assignees (``a``), joined with
    ``joins`` (before the assignee); a ``WHERE`` follows. ``selected``: the columns read, if
    not all that :func:`thread_of` reads."""
    return (
        f"SELECT {selected or _THREAD_WITH_PEOPLE} FROM feedback f JOIN members m ON m.id = f.member_id "
        f"{f'{joins} ' if joins else ''}{_ASSIGNEE_JOIN}"
    )


SELECT_THREADS = select_threads()


def select_tagged_threads() -> str:
    """:data:`SELECT_THREADS` with each thread's tag ids (``ThreadRow.tag_ids``): what a list or
    one thread shows of its tags is their labels, which each worker keeps
    (app.services.tag_labels), so the ids read with the thread spare a statement for them."""
    return select_threads(selected=f"{_THREAD_WITH_PEOPLE}, {tag_ids_column()}")


def message_start(characters: int | None) -> str:
    """The thread's message (``f.message``) as a column of a list that shows only its start:
    its first ``characters`` characters, or all of it for None. A list reads no more of a long
    message than its excerpt looks at."""
    return "f.message" if characters is None else f"substr(f.message, 1, {int(characters)})"


def sender_of(row: Row, alias: str = "m") -> SenderRow:
    key = column_keys(alias, SENDER_COLUMNS)
    # In the order of SenderRow's fields, as thread_of below.
    return SenderRow(
        row[key["id"]],
        row[key["application_id"]],
        row[key["email"]],
        row[key["name"]],
        read_moment(row[key["created_at"]]),
        read_moment(row[key["updated_at"]]),
    )


def thread_of(row: Row) -> ThreadRow:
    """A thread and its sender from a row of SELECT_THREADS.

    Its values go in the order of ThreadRow's fields, not by keyword: a page reads fifty
    threads, and with twenty keywords bound (and the sender's six) building them took about
    half again as long (tests/repositories/test_rows.py checks every field against the ORM's)."""
    return ThreadRow(
        row["f.id"],
        row["f.application_id"],
        row["f.member_id"],
        row["f.message"],
        row["f.sentiment"],
        bool(row["f.sentiment_corrected"]),
        bool(row["f.archived"]),
        row["f.nps"],
        row["f.url"],
        row["f.language"],
        row["f.ip_address"],
        row["f.user_agent"],
        read_json(row["f.properties"]),
        row["f.first_reply_time"],
        read_moment(row["f.last_reply_at"]),
        read_moment(row["f.created_at"]),
        read_moment(row["f.updated_at"]),
        sender_of(row),
        row["f.assignee_id"],
        optional_agent_of(row, "a") if "a.id" in row else None,
        read_tag_ids(row["tag_ids"]) if "tag_ids" in row else None,
    )


# Reading threads newest first -----------------------------------------------------------------


def newest_first() -> str:
    """The ``ORDER BY`` of threads (``f``) newest first, in the form an index by application and
    state serves on the database in use.

    On PostgreSQL ``-id``: ordered by ``id``, it walked the primary key backwards and filtered by
    state, on the assumption that archived threads are spread evenly among the ids, while the
    newest threads are mostly open, so a page of archived threads read every newer open one. The
    primary key cannot serve ``-id``; the indexes of migration 0007 can. SQLite reads the
    (application, archived, id) indexes of the models by itself.
    """
    return "ORDER BY -f.id" if postgres() else "ORDER BY f.id DESC"


_REVERSED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def id_condition(operator: str, value: int) -> tuple[str, int]:
    """The condition ``f.id <operator> value`` and its parameter, written as the index that
    :func:`newest_first` reads can bound it (``-f.id`` on PostgreSQL)."""
    if postgres():
        return f"-f.id {_REVERSED[operator]} {{}}", -value
    return f"f.id {operator} {{}}", value


def page_of_state_statement(
    application_id: int, archived: bool, limit: int, offset: int
) -> tuple[str, list[object]]:
    """The statement of a page of an application's open (or archived) threads with their
    senders and tag ids, newest first (its plan is tested against the indexes)."""
    return (
        f"{select_tagged_threads()} WHERE f.application_id = {{}} AND f.archived = {{}} {newest_first()} "
        f"{limit_clause(limit, offset)}",
        [application_id, archived],
    )


async def page_of_state(application_id: int, archived: bool, limit: int, offset: int) -> list[ThreadRow]:
    rows = await select(*page_of_state_statement(application_id, archived, limit, offset))
    return [thread_of(row) for row in rows]


def thread_by_id_query(
    application_id: int, feedback_id: int, with_tag_ids: bool = False
) -> tuple[str, list[object]]:
    """The statement of :func:`thread_by_id` (app.repositories.thread_parts reads it with the
    thread's parts in one round trip); :func:`thread_of` reads its row."""
    selected = select_tagged_threads() if with_tag_ids else SELECT_THREADS
    return selected + " WHERE f.id = {} AND f.application_id = {}", [feedback_id, application_id]


async def thread_by_id(application_id: int, feedback_id: int, with_tag_ids: bool = False) -> ThreadRow | None:
    """One thread of an application, with its sender (and ``with_tag_ids`` its tags' ids)."""
    row = await select_one(*thread_by_id_query(application_id, feedback_id, with_tag_ids))
    return None if row is None else thread_of(row)


async def threads_by_ids(feedback_ids: Sequence[int]) -> list[ThreadRow]:
    """Threads with their senders, in the order of ``feedback_ids`` (missing ones left out)."""
    if not feedback_ids:
        return []
    rows = await select(
        SELECT_THREADS + f" WHERE f.id IN ({parameters(len(feedback_ids))})", list(feedback_ids)
    )
    found = {thread.id: thread for thread in map(thread_of, rows)}
    return [found[feedback_id] for feedback_id in feedback_ids if feedback_id in found]


async def ids_of_application(application_id: int, feedback_ids: Sequence[int]) -> list[int]:
    """Those of ``feedback_ids`` that are threads of the application, in the order given."""
    if not feedback_ids:
        return []
    rows = await select(
        f"SELECT id FROM feedback WHERE application_id = {{}} AND id IN ({parameters(len(feedback_ids))})",
        [application_id, *feedback_ids],
    )
    found = {int(row["id"]) for row in rows}
    return [feedback_id for feedback_id in feedback_ids if feedback_id in found]


async def sender_by_id(member_id: int) -> SenderRow | None:
    row = await select_one(
        f"SELECT {columns('m', SENDER_COLUMNS)} FROM members m WHERE m.id = {{}}", [member_id]
    )
    return None if row is None else sender_of(row)


async def thread_anywhere(feedback_id: int) -> ThreadRow | None:
    """One thread, whatever its application (a signed reply address names only the thread)."""
    row = await select_one(SELECT_THREADS + " WHERE f.id = {}", [feedback_id])
    return None if row is None else thread_of(row)


# Writing new threads ---------------------------------------------------------------------------


async def upsert_senders(threads: Sequence[NewThreadRow], now: datetime) -> dict[tuple[int, str], SenderRow]:
    """Insert the senders, or update the name of those who give one, and return them as they
    now are, by (application, address): the group commit builds its threads' events from them
    instead of reading the threads back.

    One statement, the first of the unit. Sorted, so that two batches lock the same senders in the
    same order.
    """
    names: dict[tuple[int, str], str] = {}
    for thread in threads:
        key = (thread.application_id, thread.email)
        if thread.name or key not in names:
            names[key] = thread.name
    values: list[object] = []
    for (application_id, email), name in sorted(names.items()):
        values += [application_id, email, name, moment(now), moment(now)]
    rows = await change_returning(
        "INSERT INTO members (application_id, email, name, created_at, updated_at) "
        f"VALUES {', '.join('({}, {}, {}, {}, {})' for _ in names)} "
        "ON CONFLICT (application_id, email) DO UPDATE SET "
        "name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE members.name END, "
        "updated_at = CASE WHEN excluded.name <> '' THEN excluded.updated_at ELSE members.updated_at END "
        f"RETURNING {_RETURNED_SENDER}",
        values,
    )
    senders = [sender_of(row) for row in rows]
    return {(sender.application_id, sender.email): sender for sender in senders}


# A sender's columns as RETURNING names them, under the keys :func:`sender_of` reads.
_RETURNED_SENDER = ", ".join(f'{name} AS "m.{name}"' for name in SENDER_COLUMNS)


async def reserve_thread_ids(count: int) -> list[int]:
    """Take ``count`` new thread ids, so that the threads go in one multi-row insert
    (:func:`app.repositories.sql.reserve_ids`)."""
    return await reserve_ids("feedback", count)


async def insert_senders(senders: Sequence[SenderRow]) -> None:
    """Write senders whose ids are given (bulk loads)."""
    await insert_rows(
        "members",
        SENDER_COLUMNS,
        [
            (s.id, s.application_id, s.email, s.name, moment(s.created_at), moment(s.updated_at))
            for s in senders
        ],
    )


async def insert_threads(threads: Sequence[ThreadRow]) -> None:
    """Write new threads (ids and senders already given) with one multi-row insert."""
    await insert_rows(
        "feedback",
        THREAD_COLUMNS,
        [
            (t.id, t.application_id, t.member_id, t.message, t.sentiment, t.sentiment_corrected, t.archived,
             t.nps, t.url, t.language, t.ip_address, t.user_agent, write_json(t.properties),
             t.first_reply_time, moment(t.last_reply_at), moment(t.created_at), moment(t.updated_at),
             t.assignee_id)
            for t in threads
        ],
    )  # fmt: skip


# Writing a thread's state -----------------------------------------------------------------------


async def set_archived(feedback_id: int, archived: bool, now: datetime) -> bool:
    """Archive or unarchive a thread; False when it was in that state already."""
    return (
        await change(
            "UPDATE feedback SET archived = {}, updated_at = {} WHERE id = {} AND archived <> {}",
            [archived, moment(now), feedback_id, archived],
        )
        > 0
    )


async def assignee_id_of(feedback_id: int) -> int | None:
    """The id of the agent the thread is assigned to (None: nobody, or no such thread)."""
    row = await select_one("SELECT assignee_id FROM feedback WHERE id = {}", [feedback_id])
    return None if row is None else row["assignee_id"]


async def assign(
    application_id: int, feedback_ids: Sequence[int], assignee_id: int | None, now: datetime
) -> list[int]:
    """Assign some of an application's threads to an agent (None: to nobody); the ids of those
    that changed (threads assigned to that agent already, or of another application, did not)."""
    if not feedback_ids:
        return []
    differs = "IS DISTINCT FROM" if postgres() else "IS NOT"
    rows = await change_returning(
        "UPDATE feedback SET assignee_id = {}, updated_at = {} WHERE application_id = {} "
        f"AND id IN ({parameters(len(feedback_ids))}) AND assignee_id {differs} {{}} RETURNING id",
        [assignee_id, moment(now), application_id, *feedback_ids, assignee_id],
    )
    return sorted(int(row["id"]) for row in rows)


async def set_archived_many(
    application_id: int, feedback_ids: Sequence[int], archived: bool, now: datetime
) -> list[int]:
    """Archive or unarchive some of an application's threads; the ids of those that changed
    (threads in that state already, or of another application, did not)."""
    if not feedback_ids:
        return []
    rows = await change_returning(
        "UPDATE feedback SET archived = {}, updated_at = {} WHERE application_id = {} "
        f"AND id IN ({parameters(len(feedback_ids))}) AND archived <> {{}} RETURNING id",
        [archived, moment(now), application_id, *feedback_ids, archived],
    )
    return sorted(int(row["id"]) for row in rows)


async def correct_sentiment(feedback_id: int, label: str, now: datetime) -> None:
    """An agent's label, marked corrected so that recomputation keeps it."""
    await change(
        "UPDATE feedback SET sentiment = {}, sentiment_corrected = {}, updated_at = {} WHERE id = {}",
        [label, True, moment(now), feedback_id],
    )


async def relabel(feedback_id: int, label: str) -> int:
    """A recomputed label, unless an agent corrected the thread meanwhile; how many changed."""
    return await change(
        "UPDATE feedback SET sentiment = {} WHERE id = {} AND sentiment_corrected = {}",
        [label, feedback_id, False],
    )


async def touch(feedback_id: int, now: datetime) -> bool | None:
    """Write the thread's ``updated_at`` first, which takes its row lock (PostgreSQL) so that a
    concurrent archive waits, and return whether it is archived (None: no such thread)."""
    await change("UPDATE feedback SET updated_at = {} WHERE id = {}", [moment(now), feedback_id])
    row = await select_one("SELECT archived FROM feedback WHERE id = {}", [feedback_id])
    return None if row is None else bool(row["archived"])


async def record_reply_time(feedback_id: int, now: datetime, first_reply_time: int | None = None) -> bool:
    """A new message in the thread: its last reply time moves. With ``first_reply_time``, also
    set the thread's first reply time, only if it has none (so that two first replies at once
    count once); returns whether it was set."""
    if first_reply_time is None:
        await change(
            "UPDATE feedback SET last_reply_at = {}, updated_at = {} WHERE id = {}",
            [moment(now), moment(now), feedback_id],
        )
        return False
    return (
        await change(
            "UPDATE feedback SET first_reply_time = {}, last_reply_at = {}, updated_at = {} "
            "WHERE id = {} AND first_reply_time IS NULL",
            [first_reply_time, moment(now), moment(now), feedback_id],
        )
        > 0
    )


@dataclass(slots=True)
class Labelled:
    """What the sentiment of a thread is computed from."""

    id: int
    message: str
    language: str
    sentiment: str


async def uncorrected_labels(
    application_id: int, after_id: int, limit: int, only_id: int | None = None
) -> list[Labelled]:
    """The next ``limit`` threads by id whose sentiment no agent corrected."""
    template = (
        "SELECT id, message, language, sentiment FROM feedback WHERE application_id = {} "
        "AND sentiment_corrected = {} AND id > {}"
    )
    values: list[object] = [application_id, False, after_id]
    if only_id is not None:
        template += " AND id = {}"
        values.append(only_id)
    rows = await select(template + " ORDER BY id LIMIT {}", [*values, limit])
    return [Labelled(row["id"], row["message"], row["language"], row["sentiment"]) for row in rows]
