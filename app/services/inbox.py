"""The inbox: an application's threads, filtered and paged by id so that it stays fast at any size."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.db import execute, parameters
from app.errors import ValidationError
from app.models import SENTIMENTS, Application, Feedback, Tag
from app.services import search
from app.services.feedback import id_condition, newest_first, select_threads, thread_of_row
from app.services.tags import find_tag_id, tags_of_threads

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
MAX_QUERY_LENGTH = 200


@dataclass
class InboxRow:
    """One thread of an inbox page, with its sender (``thread.member``) and its tags."""

    thread: Feedback
    tags: list[Tag] = field(default_factory=list)


@dataclass
class InboxPage:
    """A page of threads, newest first, and whether older ones follow."""

    rows: list[InboxRow]
    next_before: int | None
    """The ``before`` cursor of the next (older) page; None on the last page."""

    @property
    def has_more(self) -> bool:
        return self.next_before is not None


@dataclass
class ThreadQuery:
    """The statement of an inbox page, built filter by filter: joins and conditions are plain
    SQL whose ``{}`` are parameters (see :func:`app.db.execute`)."""

    joins: list[str] = field(default_factory=list)
    join_values: list[object] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    values: list[object] = field(default_factory=list)
    by_tag: bool = False
    """Read in the order of one tag's links (``ft``): see :meth:`tagged`."""

    def tagged(self, tag_id: int) -> ThreadQuery:
        """This query narrowed to the threads with one tag, read newest first off the tag's
        (tag_id, feedback_id) index and probed by id. Read off the threads' index instead, a tag
        that no recent thread carries made PostgreSQL walk every newer thread (311 ms behind
        88,000 of them) where the tag's links take 2 ms."""
        joined = self.join("JOIN feedback_tags ft ON ft.feedback_id = f.id AND ft.tag_id = {}", tag_id)
        return replace(joined, by_tag=True)

    def ids(self, operator: str, value: int) -> ThreadQuery:
        """This query narrowed to the threads whose id is ``operator value``, written against
        the column the page is read in the order of, so that its index bounds the range."""
        if self.by_tag:
            return self.where(f"ft.feedback_id {operator} {{}}", value)
        return self.where(*id_condition(operator, value))

    def order_by(self) -> str:
        """The page's ``ORDER BY``: newest first."""
        return "ORDER BY ft.feedback_id DESC" if self.by_tag else newest_first()

    def join(self, clause: str, *values: object) -> ThreadQuery:
        """This query joined with ``clause`` (an inner join narrows the threads)."""
        return replace(self, joins=[*self.joins, clause], join_values=[*self.join_values, *values])

    def where(self, condition: str, *values: object) -> ThreadQuery:
        """This query narrowed by one more condition."""
        return replace(self, conditions=[*self.conditions, condition], values=[*self.values, *values])


async def search_threads(
    application: Application,
    archived: bool = False,
    sentiment: str | None = None,
    tag: str | None = None,
    query: str = "",
    before: int | None = None,
    limit: int = PAGE_SIZE,
) -> InboxPage:
    """A page of an application's threads, newest first, matching every filter given.

    Paging is by keyset (``id < before``), never by offset or count, so each page reads about
    ``limit`` rows of the (application_id, archived, id) or (application_id, archived,
    sentiment, id) index whatever the size of the inbox (``-id`` on PostgreSQL, see
    :func:`app.services.feedback.newest_first`); with a tag, about as many of the tag's links
    (:meth:`ThreadQuery.tagged`). The text search (the message, the sender's e-mail and name)
    goes through the trigram indexes of :mod:`app.services.search`; when it looked at only the
    newest matches, the page ends where it stopped and the cursor continues from there. The
    page is read with its senders in one plain statement (building the ORM's was a fifth of
    the page's time), and its tags with one more.
    """
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValidationError("The limit field must be between 1 and %(max)d.", max=MAX_PAGE_SIZE)
    if sentiment is not None and sentiment not in SENTIMENTS:
        raise ValidationError("Invalid sentiment")
    threads = ThreadQuery().where("f.application_id = {}", application.id).where("f.archived = {}", archived)
    if sentiment:
        threads = threads.where("f.sentiment = {}", sentiment)
    if tag:
        tag_id = await find_tag_id(application.id, tag)
        if tag_id is None:
            return InboxPage([], None)
        threads = threads.tagged(tag_id)
    if before is not None:
        threads = threads.ids("<", before)
    text = query.strip()[:MAX_QUERY_LENGTH]
    if not text:
        return await _page(threads, limit)
    pattern = search.contains_pattern(text)
    scanned = threads.where(search.SCAN_CONDITION, pattern, pattern, pattern)
    if not search.indexed(text):
        return await _page(scanned, limit)
    window = await search.scan_window_floor(application.id, archived, before)
    if window is None:
        return await _page(scanned, limit)
    page = await _page(scanned.ids(">=", window), limit)
    if page.has_more:
        return page
    candidates = await search.look_up(application.id, archived, text, before)
    if candidates is None:
        return await _page(scanned, limit)
    if not candidates.ids:
        return InboxPage([], candidates.floor)
    found = threads.where(f"f.id IN ({parameters(len(candidates.ids))})", *candidates.ids)
    return await _page(found, limit, candidates.floor)


def page_statement(threads: ThreadQuery, limit: int) -> tuple[str, list[object]]:
    """The statement (for :func:`app.db.execute`) of the newest ``limit`` threads of a query."""
    return (
        f"{select_threads()} {' '.join(threads.joins)} "
        f"WHERE {' AND '.join(threads.conditions)} {threads.order_by()} LIMIT {{}}",
        [*threads.join_values, *threads.values, limit],
    )


async def _page(threads: ThreadQuery, limit: int, floor: int | None = None) -> InboxPage:
    """The newest ``limit`` threads of a query, their senders and tags, and the next cursor.

    ``floor``: the search looked at no thread below it, so the next page starts there.
    """
    rows = await execute(*page_statement(threads, limit + 1))
    page = [thread_of_row(row) for row in rows[:limit]]
    tags = await tags_of_threads([thread.id for thread in page])
    next_before = page[-1].id if len(rows) > limit else floor
    return InboxPage([InboxRow(thread, tags[thread.id]) for thread in page], next_before)
