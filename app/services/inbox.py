"""The inbox: an application's threads, filtered and paged by id so that it stays fast at any size."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from app.errors import ValidationError
from app.models import SENTIMENTS
from app.repositories.applications import ApplicationRow
from app.repositories.inbox import ThreadQuery, newest
from app.repositories.search import SCAN_CONDITION, contains_pattern
from app.repositories.tags import TagRow
from app.repositories.threads import ThreadRow
from app.services import search
from app.services.tags import find_tag_id, tags_of_threads

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
MAX_QUERY_LENGTH = 200


class InboxFilters(TypedDict):
    """The filters of an inbox page, as :func:`search_threads` takes them."""

    archived: bool
    sentiment: str | None
    tag: str | None
    query: str
    before: int | None


@dataclass
class InboxRow:
    """One thread of an inbox page, with its sender (``thread.member``) and its tags."""

    thread: ThreadRow
    tags: list[TagRow] = field(default_factory=list)


@dataclass
class InboxPage:
    """A page of threads, newest first, and whether older ones follow."""

    rows: list[InboxRow]
    next_before: int | None
    """The ``before`` cursor of the next (older) page; None on the last page."""

    @property
    def has_more(self) -> bool:
        return self.next_before is not None


async def search_threads(
    application: ApplicationRow,
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
    :func:`app.repositories.threads.newest_first`); with a tag, about as many of the tag's links
    (:meth:`ThreadQuery.tagged`). The text search (the message, the sender's e-mail and name)
    goes through the trigram indexes of :mod:`app.services.search`; when it looked at only the
    newest matches, the page ends where it stopped and the cursor continues from there. The
    page is read with its senders in one statement, and its tags with one more.
    """
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValidationError("The limit field must be between 1 and %(max)d.", max=MAX_PAGE_SIZE)
    if sentiment is not None and sentiment not in SENTIMENTS:
        raise ValidationError("Invalid sentiment")
    selection = ThreadQuery.of_state(application.id, archived)
    if sentiment:
        selection = selection.where("f.sentiment = {}", sentiment)
    if tag:
        tag_id = await find_tag_id(application.id, tag)
        if tag_id is None:
            return InboxPage([], None)
        selection = selection.tagged(tag_id)
    if before is not None:
        selection = selection.ids("<", before)
    text = query.strip()[:MAX_QUERY_LENGTH]
    if not text:
        return await _page(selection, limit)
    pattern = contains_pattern(text)
    scanned = selection.where(SCAN_CONDITION, pattern, pattern, pattern)
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
    return await _page(selection.among(candidates.ids), limit, candidates.floor)


async def _page(query: ThreadQuery, limit: int, floor: int | None = None) -> InboxPage:
    """The newest ``limit`` threads of a query, their senders and tags, and the next cursor.

    ``floor``: the search looked at no thread below it, so the next page starts there.
    """
    found = await newest(query, limit + 1)
    page = found[:limit]
    tags = await tags_of_threads([thread.id for thread in page])
    next_before = page[-1].id if len(found) > limit else floor
    return InboxPage([InboxRow(thread, tags[thread.id]) for thread in page], next_before)
