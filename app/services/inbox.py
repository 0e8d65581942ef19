"""The inbox: an application's threads, filtered and paged by id so that it stays fast at any size."""

from __future__ import annotations

from dataclasses import dataclass, field

from tortoise.queryset import QuerySet

from app.errors import ValidationError
from app.models import SENTIMENTS, Application, Feedback, Tag
from app.services import search
from app.services.tags import normalize_tag, tags_of_threads

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
    sentiment, id) index whatever the size of the inbox. The tag filter joins feedback_tags.
    The text search (the message, the sender's e-mail and name) goes through the trigram
    indexes of :mod:`app.services.search`; when it looked at only the newest matches, the page
    ends where it stopped and the cursor continues from there. Two more queries load the
    page's senders (joined) and tags, whatever the page size.
    """
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValidationError("The limit field must be between 1 and %(max)d.", max=MAX_PAGE_SIZE)
    if sentiment is not None and sentiment not in SENTIMENTS:
        raise ValidationError("Invalid sentiment")
    threads = Feedback.filter(application_id=application.id, archived=archived)
    if sentiment:
        threads = threads.filter(sentiment=sentiment)
    if tag:
        threads = threads.filter(
            tag_links__tag__application_id=application.id, tag_links__tag__name=normalize_tag(tag)
        )
    if before is not None:
        threads = threads.filter(id__lt=before)
    text = query.strip()[:MAX_QUERY_LENGTH]
    if not text:
        return await _page(threads, limit)
    scanned = threads.filter(search.scan_filter(text))
    if not search.indexed(text):
        return await _page(scanned, limit)
    window = await search.scan_window_floor(application.id, archived, before)
    if window is None:
        return await _page(scanned, limit)
    page = await _page(scanned.filter(id__gte=window), limit)
    if page.has_more:
        return page
    candidates = await search.look_up(application.id, archived, text, before)
    if candidates is None:
        return await _page(scanned, limit)
    return await _page(threads.filter(id__in=candidates.ids), limit, candidates.floor)


async def _page(threads: QuerySet[Feedback], limit: int, floor: int | None = None) -> InboxPage:
    """The newest ``limit`` threads of a query, their senders and tags, and the next cursor.

    ``floor``: the search looked at no thread below it, so the next page starts there.
    """
    found = await threads.select_related("member").order_by("-id").limit(limit + 1)
    page = found[:limit]
    tags = await tags_of_threads([thread.id for thread in page])
    next_before = page[-1].id if len(found) > limit else floor
    return InboxPage([InboxRow(thread, tags[thread.id]) for thread in page], next_before)
