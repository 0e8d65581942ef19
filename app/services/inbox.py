"""The inbox: an application's threads, filtered and paged by id so that it stays fast at any size."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Generic, TypedDict, TypeVar

from app.errors import ValidationError
from app.models import SENTIMENTS
from app.repositories.applications import ApplicationRow
from app.repositories.inbox import ThreadLine, ThreadQuery, count_up_to, newest, newest_lines
from app.repositories.search import contains_pattern
from app.repositories.sql import postgres
from app.repositories.tags import TagLabel, TagRow, tag_ids_of_threads
from app.repositories.threads import ThreadRow
from app.services import search as search_service
from app.services.tag_labels import labels_of, labels_of_threads
from app.services.tags import find_tag
from app.services.thread_filters import UNASSIGNED, ThreadFilters

PAGE_SIZE = 50
MAX_LIST_LIMIT = 500  # the management API's largest page
# Counting stops after this many matches (see count_threads).
MAX_COUNTED = 10_000


class InboxFilters(TypedDict):
    """The filters of an inbox page, as :func:`search_threads` takes them."""

    archived: bool
    sentiment: str | None
    tag: str | None
    query: str
    assignee: int | None
    before: int | None


Thread = TypeVar("Thread", ThreadRow, ThreadLine)
# Reads the newest threads of a query: (query, limit, offset) -> threads.
Reader = Callable[[ThreadQuery, int, int], Awaitable[list[Thread]]]
# The tags of a page's threads, by thread id.
TagReader = Callable[[list[Thread]], Awaitable[dict[int, list[TagLabel]]]]


@dataclass
class InboxRow(Generic[Thread]):
    """One thread of an inbox page, with its tags' labels by name: a :class:`ThreadRow` with
    its sender (``thread.member``), or for the inbox page itself a :class:`ThreadLine`."""

    thread: Thread
    tags: list[TagLabel] = field(default_factory=list)


@dataclass
class InboxPage(Generic[Thread]):
    """A page of threads, newest first, and whether older ones follow."""

    rows: list[InboxRow[Thread]]
    next_before: int | None
    """The ``before`` cursor of the next (older) page; None on the last page."""

    @property
    def has_more(self) -> bool:
        return self.next_before is not None


@dataclass(frozen=True)
class Total:
    """How many threads match: exact, or a lower bound when counting stopped (see
    :func:`count_threads`)."""

    count: int
    exact: bool = True


async def search_threads(
    application: ApplicationRow,
    archived: bool = False,
    sentiment: str | None = None,
    tag: str | None = None,
    query: str = "",
    assignee: int | None = None,
    before: int | None = None,
    limit: int = PAGE_SIZE,
    after: int | None = None,
    excerpt: int | None = None,
) -> InboxPage[ThreadLine]:
    """A page of the inbox as its rows show it (:class:`ThreadLine`, each message cut to its
    first ``excerpt`` characters, or whole, and the labels of its tags): :func:`search` with the
    inbox page's filters (``assignee``: an agent's id, or :data:`~app.services.thread_filters.UNASSIGNED`);
    ``after``, the threads newer than the newest a live inbox shows (app/views/inbox.py,
    ``newer_threads``)."""
    if sentiment is not None and sentiment not in SENTIMENTS:
        raise ValidationError("Invalid sentiment")
    page_filters: InboxFilters = {
        "archived": archived,
        "sentiment": sentiment,
        "tag": tag,
        "query": query,
        "assignee": assignee,
        "before": before,
    }
    filters = replace(inbox_thread_filters(page_filters), after=after)

    async def read_lines(query: ThreadQuery, limit: int, offset: int) -> list[ThreadLine]:
        return await newest_lines(query, limit, offset, excerpt)

    async def read_labels(lines: list[ThreadLine]) -> dict[int, list[TagLabel]]:
        return await labels_of(application.id, {line.id: line.tag_ids for line in lines})

    return await _search(application, filters, limit, 0, None, Readers(read_lines, read_labels))


def inbox_thread_filters(filters: InboxFilters) -> ThreadFilters:
    """The inbox page's filters as every list of threads takes them."""
    return ThreadFilters(
        archived=filters["archived"],
        sentiment=filters["sentiment"],
        tag=filters["tag"],
        query=filters["query"],
        assignee=filters["assignee"],
        before=filters["before"],
    )


@dataclass(frozen=True)
class Selection:
    """The statement of the threads matching every filter but the text and the cursor (None
    when nothing can match: a tag the application does not have), and the tag, read once for a
    page and its count."""

    query: ThreadQuery | None
    tag: TagRow | None = None


async def selection(application: ApplicationRow, filters: ThreadFilters) -> Selection:
    """The threads of an application matching every filter but the text and the cursor."""
    query = ThreadQuery.of_state(application.id, filters.archived)
    if filters.sentiment:
        query = query.with_sentiment(filters.sentiment)
    tag = None
    if filters.tag:
        tag = await find_tag(application.id, filters.tag)
        if tag is None:
            return Selection(None)
        query = query.tagged(tag.id)
    if filters.assignee is not None:
        query = query.assigned(None if filters.assignee == UNASSIGNED else filters.assignee)
    query = query.created(filters.since, filters.until)
    if filters.replied is not None:
        query = query.replied(filters.replied)
    return Selection(query.nps_between(filters.nps_min, filters.nps_max), tag)


async def search(
    application: ApplicationRow,
    filters: ThreadFilters,
    limit: int = PAGE_SIZE,
    offset: int = 0,
    chosen: Selection | None = None,
) -> InboxPage[ThreadRow]:
    """A page of an application's threads, newest first, matching every filter given, after
    skipping ``offset`` of them.

    Paging is by keyset (``id < before``; ``id > after`` for what a live inbox has not shown
    yet), never by offset or count, so each page reads about
    ``limit`` rows of the (application_id, archived, id) or (application_id, archived,
    sentiment, id) index whatever the size of the inbox (``-id`` on PostgreSQL, see
    :func:`app.repositories.threads.newest_first`); with a tag, about as many of the tag's links
    (:meth:`ThreadQuery.tagged`). The other filters (dates, replied, rating) are checked on the
    rows read. The text search (the message, the sender's e-mail and name)
    goes through the trigram indexes of :mod:`app.services.search`; when it looked at only the
    newest matches, the page ends where it stopped and the cursor continues from there. The
    page is read with its senders in one statement, and its tags' ids with one more. ``offset``
    (the management API's paging) skips matches in the same order, so it costs what it skips.
    """
    return await _search(application, filters, limit, offset, chosen, Readers(newest, _tags_of))


async def _tags_of(threads: list[ThreadRow]) -> dict[int, list[TagLabel]]:
    return await labels_of_threads(threads, await tag_ids_of_threads([thread.id for thread in threads]))


@dataclass(frozen=True)
class Readers(Generic[Thread]):
    """How a page reads its threads, and then their tags."""

    threads: Reader[Thread]
    tags: TagReader[Thread]


async def _search(
    application: ApplicationRow,
    filters: ThreadFilters,
    limit: int,
    offset: int,
    chosen: Selection | None,
    read: Readers[Thread],
) -> InboxPage[Thread]:
    """:func:`search`, its threads and their tags read by ``read``."""
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise ValidationError("The limit field must be between 1 and %(max)d.", max=MAX_LIST_LIMIT)
    found = (chosen or await selection(application, filters)).query
    if found is None:
        return InboxPage([], None)
    selected = found if filters.before is None else found.ids("<", filters.before)
    if filters.after is not None:
        selected = selected.ids(">", filters.after)
    text = filters.text
    if not text:
        return await _page(read, selected, limit, offset)
    scanned = selected.containing(contains_pattern(text))
    if not search_service.indexed(text) or filters.after is not None:
        # Above ``after`` there are only the few threads a live inbox has not shown yet.
        return await _page(read, scanned, limit, offset)
    window = await search_service.scan_window_floor(application.id, filters.archived, filters.before)
    if window is None:
        return await _page(read, scanned, limit, offset)
    senders = await search_service.matching_senders(application.id, text)
    # Knowing every sender who may match, the scan need not read each thread's sender.
    matching = scanned if senders is None else selected.containing_among(text, senders)
    # The window's matches are the newest of the look-up's, so an offset counts the same in both.
    page = await _page(read, matching.ids(">=", window), limit, offset)
    if page.has_more:
        return page
    if senders is None:
        return await _page(read, scanned, limit, offset)
    candidates = await search_service.look_up(application.id, filters.archived, text, filters.before, senders)
    if not candidates.ids:
        return InboxPage([], candidates.floor)
    # The text again: on SQLite a candidate's text may have changed since it was indexed.
    return await _page(read, matching.among(candidates.ids), limit, offset, candidates.floor)


async def count_threads(
    application: ApplicationRow, filters: ThreadFilters, chosen: Selection | None = None
) -> Total:
    """How many threads match the filters (the cursor aside: it pages, it does not filter).

    Exact from the counters kept on write without filters, or with a tag alone. Otherwise the
    matches are counted up to MAX_COUNTED, so a count stops as soon as that many are found: a
    common filter over a million threads costs what ten thousand rows cost, and a rare one at
    most a scan of the state's threads (the page of a filter that matches too few threads
    reads as much). Past MAX_COUNTED the total is that number and not exact. A text search is
    counted through the same trigram look-up as the page, exact while it found every match,
    else a lower bound; on PostgreSQL a frequent word among the newest threads (:func:`_count_text`).
    """
    if not filters.narrowed():
        return Total(application.archived_threads if filters.archived else application.open_threads)
    chosen = chosen or await selection(application, filters)
    found = chosen.query
    if found is None:
        return Total(0)
    if filters.only_tag() and chosen.tag is not None:
        return Total(chosen.tag.archived_count if filters.archived else chosen.tag.open_count)
    text = filters.text
    if text and search_service.indexed(text):
        counted = await _count_text(application, filters.archived, found, text)
        if counted is not None:
            return counted
    if text:
        found = found.containing(contains_pattern(text))
    return await _count(found)


async def _count_text(
    application: ApplicationRow, archived: bool, found: ThreadQuery, text: str
) -> Total | None:
    """How many threads of ``found`` hold ``text``, through the trigram look-up of the page;
    None when the look-up would not help (the caller then scans).

    On PostgreSQL a frequent word (:func:`app.services.search.frequent_in_window`) is counted
    among the newest COUNT_WINDOW threads instead: its look-up reads every thread with the word
    (the trigram index knows no order), 0.3 s for a word of one thread in twenty and 0.9 s for
    "the" at a million threads, where the bounded scan reads at most COUNT_WINDOW threads.
    SQLite's FTS5 reads the newest matches first and stops. Either way the total is a lower
    bound once the count stopped short of the oldest threads.
    """
    senders = await search_service.matching_senders(application.id, text)
    if senders is None:
        return None
    matching = found.containing_among(text, senders)
    if postgres():
        floor = await search_service.frequent_in_window(application.id, archived, matching)
        if floor is not None:
            counted = await _count(matching.ids(">=", floor), in_order=True)
            return Total(counted.count, counted.exact and floor == 0)
    candidates = await search_service.look_up(application.id, archived, text, None, senders)
    if not candidates.ids:
        return Total(0, candidates.floor is None)
    counted = await _count(matching.among(candidates.ids))
    return Total(counted.count, counted.exact and candidates.floor is None)


async def _count(query: ThreadQuery, in_order: bool = False) -> Total:
    found = await count_up_to(query, MAX_COUNTED + 1, in_order)
    return Total(min(found, MAX_COUNTED), found <= MAX_COUNTED)


async def _page(
    read: Readers[Thread], query: ThreadQuery, limit: int, offset: int = 0, floor: int | None = None
) -> InboxPage[Thread]:
    """The newest ``limit`` threads of a query after ``offset`` and their tags (read by
    ``read``), and the next cursor.

    ``floor``: the search looked at no thread below it, so the next page starts there.
    """
    found = await read.threads(query, limit + 1, offset)
    page = found[:limit]
    tags = await read.tags(page)
    next_before = page[-1].id if len(found) > limit else floor
    return InboxPage([InboxRow(thread, tags[thread.id]) for thread in page], next_before)
