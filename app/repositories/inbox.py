"""The inbox's pages of threads: a statement built filter by filter, read newest first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.repositories.sql import parameters, select
from app.repositories.threads import SELECT_THREADS, ThreadRow, id_condition, newest_first, thread_of


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

    def statement(self, limit: int) -> tuple[str, list[object]]:
        """The statement of the newest ``limit`` threads of this query, with their senders."""
        return (
            f"{SELECT_THREADS} {' '.join(self.joins)} "
            f"WHERE {' AND '.join(self.conditions)} {self.order_by()} LIMIT {{}}",
            [*self.join_values, *self.values, limit],
        )


async def newest(query: ThreadQuery, limit: int) -> list[ThreadRow]:
    """The newest ``limit`` threads of an inbox query, with their senders."""
    return [thread_of(row) for row in await select(*query.statement(limit))]
