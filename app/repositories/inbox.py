"""The inbox's pages of threads: a statement built filter by filter, read newest first, counted,
or read in batches for an export."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from app.repositories.search import SCAN_CONDITION, scan_among_senders
from app.repositories.sql import (
    Row,
    limit_clause,
    moment,
    parameters,
    postgres,
    read_moment,
    select,
    select_one,
)
from app.repositories.tags import read_tag_ids, tag_ids_column
from app.repositories.threads import (
    ThreadRow,
    id_condition,
    message_start,
    newest_first,
    select_threads,
    thread_of,
)


@dataclass(slots=True)
class ThreadLine:
    """A thread as a row of the inbox shows it, read by :func:`newest_lines`: its sender's and
    assignee's names, the start of its message, and none of the columns the row does not show.

    Read as whole :class:`ThreadRow` s (27 columns), the inbox's page of fifty threads cost
    PostgreSQL's worker twice what these ten do: the values decoded and the rows built."""

    id: int
    message: str
    """The message, or its first ``excerpt`` characters when read so (:func:`newest_lines`)."""
    sentiment: str
    nps: int | None
    replied: bool
    """Whether an agent answered publicly (the thread has a first reply time)."""
    created_at: datetime
    sender_name: str
    sender_email: str
    assignee_id: int | None
    assignee_name: str | None
    """The assignee's name; None when nobody is assigned (or the account is gone)."""
    tag_ids: tuple[int, ...]
    """The ids of the thread's tags, in no order: a page's tags are known by id
    (:func:`app.services.tag_labels.labels_of`), so the page needs no statement of its own for them."""


def _line_columns(excerpt: int | None) -> str:
    return (
        f"f.id, {message_start(excerpt)} AS message, f.sentiment, f.nps, "
        "f.first_reply_time IS NOT NULL AS replied, f.created_at, m.name AS sender_name, "
        f"m.email AS sender_email, f.assignee_id, a.name AS assignee_name, {tag_ids_column()}"
    )


def line_of(row: Row) -> ThreadLine:
    """A row of :func:`newest_lines`' statement."""
    return ThreadLine(
        row["id"],
        row["message"],
        row["sentiment"],
        row["nps"],
        bool(row["replied"]),
        read_moment(row["created_at"]),
        row["sender_name"],
        row["sender_email"],
        row["assignee_id"],
        row["assignee_name"],
        read_tag_ids(row["tag_ids"]),
    )


@dataclass(frozen=True)
class ThreadQuery:
    """An inbox page's statement, built filter by filter: joins and conditions are plain SQL
    whose ``{}`` are parameters (see app.repositories.sql)."""

    joins: tuple[str, ...] = ()
    join_values: tuple[object, ...] = ()
    conditions: tuple[str, ...] = ()
    values: tuple[object, ...] = ()
    by_tag: bool = False
    """Read in the order of one tag's links (``ft``): see :meth:`tagged`."""
    reads_sender: bool = False
    """A condition reads the sender (``m``): a count must join it."""

    @classmethod
    def of_state(cls, application_id: int, archived: bool) -> ThreadQuery:
        """An application's open (or archived) threads."""
        return cls().where("f.application_id = {}", application_id).where("f.archived = {}", archived)

    def tagged(self, tag_id: int) -> ThreadQuery:
        """This query narrowed to the threads with one tag, read newest first off the tag's
        (tag_id, feedback_id) index and probed by id. Read off the threads' index instead, a tag
        that no recent thread carries made PostgreSQL walk every newer thread."""
        joined = self.join("JOIN feedback_tags ft ON ft.feedback_id = f.id AND ft.tag_id = {}", tag_id)
        return replace(joined, by_tag=True)

    def with_sentiment(self, sentiment: str) -> ThreadQuery:
        """This query narrowed to one sentiment (the index by state and sentiment serves it)."""
        return self.where("f.sentiment = {}", sentiment)

    def assigned(self, assignee_id: int | None) -> ThreadQuery:
        """This query narrowed to the threads assigned to one agent (None: to nobody), written as
        migration 0016's index by application, state and assignee reads it newest first: on
        PostgreSQL the index is on ``COALESCE(assignee_id, 0)``, since its planner reads no order
        off an index after an ``IS NULL``."""
        if postgres():
            return self.where("COALESCE(f.assignee_id, 0) = {}", assignee_id or 0)
        if assignee_id is None:
            return self.where("f.assignee_id IS NULL")
        return self.where("f.assignee_id = {}", assignee_id)

    def created(self, since: datetime | None, until: datetime | None) -> ThreadQuery:
        """This query narrowed to the threads created from ``since`` (inclusive) to ``until``
        (exclusive); either may be None."""
        query = self
        if since is not None:
            query = query.where("f.created_at >= {}", moment(since))
        if until is not None:
            query = query.where("f.created_at < {}", moment(until))
        return query

    def replied(self, replied: bool) -> ThreadQuery:
        """This query narrowed to the threads an agent answered publicly (or not yet): those
        with a first reply time."""
        return self.where("f.first_reply_time IS NOT NULL" if replied else "f.first_reply_time IS NULL")

    def nps_between(self, low: int | None, high: int | None) -> ThreadQuery:
        """This query narrowed to the threads rated from ``low`` to ``high``, inclusive."""
        query = self
        if low is not None:
            query = query.where("f.nps >= {}", low)
        if high is not None:
            query = query.where("f.nps <= {}", high)
        return query

    def containing(self, pattern: str) -> ThreadQuery:
        """This query narrowed to the threads whose message, or sender's e-mail or name, is
        LIKE ``pattern`` (see :func:`app.repositories.search.contains_pattern`)."""
        return replace(self.where(SCAN_CONDITION, pattern, pattern, pattern), reads_sender=True)

    def containing_among(self, text: str, senders: Sequence[int]) -> ThreadQuery:
        """:meth:`containing` the text itself, when ``senders`` holds every sender whose e-mail
        or name may hold it (see :func:`app.repositories.search.scan_among_senders`)."""
        condition, values = scan_among_senders(text, senders)
        return self.where(condition, *values)

    def ids(self, operator: str, value: int) -> ThreadQuery:
        """This query narrowed to the threads whose id is ``operator value``, written against
        the column the page is read in the order of, so that its index bounds the range."""
        if self.by_tag:
            return self.where(f"ft.feedback_id {operator} {{}}", value)
        return self.where(*id_condition(operator, value))

    def among(self, ids: Sequence[int]) -> ThreadQuery:
        """This query narrowed to the threads with these ids."""
        return self.where(f"f.id IN ({parameters(len(ids))})", *ids)

    def order_by(self) -> str:
        """The page's ``ORDER BY``: newest first."""
        return "ORDER BY ft.feedback_id DESC" if self.by_tag else newest_first()

    def join(self, clause: str, *values: object) -> ThreadQuery:
        """This query joined with ``clause`` (an inner join narrows the threads)."""
        return replace(self, joins=(*self.joins, clause), join_values=(*self.join_values, *values))

    def where(self, condition: str, *values: object) -> ThreadQuery:
        """This query narrowed by one more condition."""
        return replace(self, conditions=(*self.conditions, condition), values=(*self.values, *values))

    def statement(self, limit: int, offset: int = 0, selected: str | None = None) -> tuple[str, list[object]]:
        """The statement of the newest ``limit`` threads of this query after skipping
        ``offset``, with their senders; ``selected``: the columns read, if not all of
        :func:`~app.repositories.threads.thread_of`'s."""
        return (
            f"{select_threads(' '.join(self.joins), selected)} "
            f"WHERE {' AND '.join(self.conditions)} {self.order_by()} {limit_clause(limit, offset)}",
            [*self.join_values, *self.values],
        )

    def count_statement(self, cap: int, in_order: bool = False) -> tuple[str, list[object]]:
        """The statement counting this query's threads, stopping at ``cap``: it reads at most
        ``cap`` matches, however many there are. ``in_order``: read them newest first, as a
        page does, so that a range of ids bounds the rows read in any plan (PostgreSQL's
        generic plan for ``-f.id <= $4`` without an order scanned the whole table, 370 ms at a
        million threads, for a range of 50,000)."""
        sender = " JOIN members m ON m.id = f.member_id" if self.reads_sender else ""
        order = f" {self.order_by()}" if in_order else ""
        return (
            f"SELECT COUNT(*) AS found FROM (SELECT 1 FROM feedback f{sender} {' '.join(self.joins)} "
            f"WHERE {' AND '.join(self.conditions)}{order} LIMIT {{}}) matches",
            [*self.join_values, *self.values, cap],
        )


async def newest(query: ThreadQuery, limit: int, offset: int = 0) -> list[ThreadRow]:
    """The newest ``limit`` threads of an inbox query (after ``offset``), with their senders."""
    return [thread_of(row) for row in await select(*query.statement(limit, offset))]


async def newest_lines(
    query: ThreadQuery, limit: int, offset: int = 0, excerpt: int | None = None
) -> list[ThreadLine]:
    """The newest ``limit`` threads of an inbox query (after ``offset``) as the inbox's rows
    show them, each message cut to its first ``excerpt`` characters (None: whole)."""
    statement = query.statement(limit, offset, selected=_line_columns(excerpt))
    return [line_of(row) for row in await select(*statement)]


async def count_up_to(query: ThreadQuery, cap: int, in_order: bool = False) -> int:
    """How many threads the query matches, counting no further than ``cap`` (``in_order``:
    see :meth:`ThreadQuery.count_statement`)."""
    row = await select_one(*query.count_statement(cap, in_order))
    return int(row["found"]) if row else 0
