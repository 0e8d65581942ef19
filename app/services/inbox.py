"""The inbox: an application's threads, filtered and paged by id so that it stays fast at any size."""

from __future__ import annotations

from dataclasses import dataclass, field

from tortoise.expressions import Q

from app.errors import ValidationError
from app.models import SENTIMENTS, Application, Feedback, Tag
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
    has_more: bool

    @property
    def next_before(self) -> int | None:
        """The ``before`` cursor of the next (older) page."""
        return self.rows[-1].thread.id if self.has_more and self.rows else None


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
    The text search (``icontains`` on the message and on the sender's e-mail and name) cannot
    use an index: it scans the application's threads from the cursor down until the page is
    full, which is acceptable for an agent's occasional search but is the slow path.
    Two more queries load the page's senders (joined) and tags, whatever the page size.
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
    text = query.strip()[:MAX_QUERY_LENGTH]
    if text:
        threads = threads.filter(
            Q(message__icontains=text) | Q(member__email__icontains=text) | Q(member__name__icontains=text)
        )
    if before is not None:
        threads = threads.filter(id__lt=before)
    found = await threads.select_related("member").order_by("-id").limit(limit + 1)
    page = found[:limit]
    tags = await tags_of_threads([thread.id for thread in page])
    return InboxPage([InboxRow(thread, tags[thread.id]) for thread in page], len(found) > limit)
