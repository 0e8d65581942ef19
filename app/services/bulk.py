"""Bulk actions on an application's threads: archive, unarchive, tag, untag, assign, mark as
spam or delete many threads at once.

A selection is either thread ids (at most ``MAX_SELECTED``, the threads ticked in the inbox) or
the inbox's filters ("select all N matching this filter"): then the threads are read by the
filter, newest first, in keyset batches, so what is selected is what matches when the action
runs, not a list of ids made earlier. One request acts on at most ``MAX_BY_FILTER`` threads by
filter; when more match, its answer carries ``next_before``, the ``before`` filter that goes on
from there (an archive of every open thread just runs again, since the archived ones no longer
match).

Each batch of at most ``BATCH`` threads is one transaction, as short as the other writers'
(``app.db.transactional``). A batch locks its threads first, in id order (on PostgreSQL, so two
bulk actions never wait for each other in a circle), moves every counter it changes
(:mod:`app.services.counters`) and announces ``feedback.updated`` for each thread it changed
(``feedback.deleted`` for spam and deletion); a thread the action would not change (archived
already, tagged already...) is neither written nor announced. Who may: every agent of the
application, as for the same action on one thread. Marking as spam blocks each sender's address
(:func:`app.services.blocklist.mark_spam_threads`); an assignee who chose ``instant`` e-mails
gets one message per batch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from app.db import transactional
from app.errors import ValidationError
from app.repositories import deletion as deleting
from app.repositories import tags, threads
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.services import assignment, blocklist, counters, deletion, inbox
from app.services.storage import Storage
from app.services.tags import MAX_TAGS, check_tag_name, ensure_tags, find_tag
from app.services.thread_filters import NARROWING, ThreadFilters, parse_filters
from app.services.webhooks import events

ACTIONS = ("archive", "unarchive", "tag", "untag", "assign", "spam", "delete")
DESTRUCTIVE = ("spam", "delete")
BATCH = 200
MAX_SELECTED = deletion.MAX_SELECTED
MAX_BY_FILTER = 10_000
# What applies the action to one batch: ids in, how many threads changed out.
_Apply = Callable[[list[int]], Awaitable[int]]
TOO_MANY_TAGS = (
    "This application has %(max)d tags, the most it may have: choose an existing tag or delete one."
)


@dataclass(frozen=True)
class Selection:
    """Which threads: these ids, or every thread matching these filters (from their ``before``)."""

    ids: tuple[int, ...] = ()
    filters: ThreadFilters | None = None

    @classmethod
    def of_ids(cls, ids: Sequence[int]) -> Selection:
        return cls(ids=tuple(ids))

    @classmethod
    def matching(cls, filters: ThreadFilters) -> Selection:
        return cls(filters=filters)


@dataclass(frozen=True)
class Outcome:
    """What a bulk action did: how many threads it looked at (those of the selection that the
    application has), how many it changed, and where to go on when it stopped at MAX_BY_FILTER."""

    action: str
    selected: int
    changed: int
    next_before: int | None = None


@dataclass(frozen=True)
class Request:
    """A bulk action as the management API's body gives it, checked."""

    action: str
    selection: Selection
    tag: object = None
    assignee_id: int | None = None


FILTER_NAMES = ("archived", *NARROWING)


def read_request(body: Mapping[str, object], user_id: int) -> Request:
    """Read ``{"action", "feedback_ids" | "filters", "tag"?, "assignee_id"?}``: the ids of
    threads, or the feedback list's filters as an object (``assignee: "me"`` is ``user_id``)."""
    action = check_action(body.get("action"))
    has_ids, has_filters = "feedback_ids" in body, "filters" in body
    if has_ids == has_filters:
        raise ValidationError("Send either feedback_ids or filters.")
    if has_ids:
        values = body["feedback_ids"]
        if not isinstance(values, list):
            raise ValidationError("The feedback ids field must hold thread ids.")
        selection = Selection.of_ids(deletion.parse_thread_ids(values))
    else:
        selection = Selection.matching(parse_filters(_filter_texts(body["filters"]), user_id))
    if action == "assign" and "assignee_id" not in body:
        raise ValidationError("The assignee id field is required.")
    assignee_id = assignment.parse_assignee_id(body.get("assignee_id")) if action == "assign" else None
    return Request(action, selection, body.get("tag"), assignee_id)


def _filter_texts(given: object) -> dict[str, str]:
    """The filters object as the query string would carry it."""
    if not isinstance(given, dict) or not all(
        name in FILTER_NAMES and (value is None or isinstance(value, str | int | bool))
        for name, value in given.items()
    ):
        raise ValidationError("The filters field must be an object of the feedback list's filters.")
    texts = {}
    for name, value in given.items():
        if value is None:
            continue
        texts[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return texts


def check_action(value: object) -> str:
    if not isinstance(value, str) or value not in ACTIONS:
        raise ValidationError("The action field must be one of %(values)s.", values=", ".join(ACTIONS))
    return value


async def run(
    actor: UserRow,
    application: ApplicationRow,
    action: str,
    selection: Selection,
    storage: Storage,
    tag: object = None,
    assignee_id: int | None = None,
    most_tags: int | None = None,
) -> Outcome:
    """Apply ``action`` to the selected threads of the application, batch by batch (see the
    module's docstring). ``tag`` names the tag to add or remove; ``assignee_id`` the agent to
    assign to (None: nobody); ``most_tags`` the application's quota of tags."""
    check_action(action)
    apply = await _batch_action(actor, application, action, storage, tag, assignee_id, most_tags)
    selected = changed = 0
    reading = _Reading()
    async for batch in _batches(application, selection, reading):
        selected += len(batch)
        changed += await apply(batch)
    return Outcome(action, selected, changed, reading.stopped_at)


@dataclass
class _Reading:
    """Where reading by filter stopped at MAX_BY_FILTER (None: it read every match)."""

    stopped_at: int | None = None


async def _batches(
    application: ApplicationRow, selection: Selection, reading: _Reading
) -> AsyncIterator[list[int]]:
    """The selected ids, BATCH at a time; by filter, read afresh before each batch (the previous
    batch may have moved threads out of the filter)."""
    if selection.filters is None:
        ids = list(dict.fromkeys(selection.ids))
        if len(ids) > MAX_SELECTED:
            raise ValidationError("Select at most %(max)d threads at once.", max=MAX_SELECTED)
        for start in range(0, len(ids), BATCH):
            # Only the application's threads count as selected (another's ids are ignored).
            found = await threads.ids_of_application(application.id, ids[start : start + BATCH])
            if found:
                yield found
        return
    filters = selection.filters
    chosen = await inbox.selection(application, filters)
    read = 0
    cursor = filters.before
    while True:
        if read >= MAX_BY_FILTER:
            reading.stopped_at = cursor
            return
        limit = min(BATCH, MAX_BY_FILTER - read)
        page = await inbox.search(application, replace(filters, before=cursor), limit, chosen=chosen)
        ids = [row.thread.id for row in page.rows]
        if ids:
            read += len(ids)
            yield ids
        if page.next_before is None:
            return
        cursor = page.next_before


async def _batch_action(
    actor: UserRow,
    application: ApplicationRow,
    action: str,
    storage: Storage,
    tag: object,
    assignee_id: int | None,
    most_tags: int | None,
) -> _Apply:
    """The function that applies the action to one batch of ids (checked before any batch runs)."""
    if action in ("archive", "unarchive"):
        archived = action == "archive"
        return lambda ids: _archive(application.id, ids, archived)
    if action == "tag":
        name = check_tag_name(tag)
        return lambda ids: _tag(application.id, ids, name, most_tags)
    if action == "untag":
        found = await find_tag(application.id, check_tag_name(tag))
        if found is None:  # no thread has it: nothing to do
            return _nothing
        tag_id = found.id
        return lambda ids: _untag(application.id, ids, tag_id)
    if action == "assign":
        await assignment.check_assignee(application, assignee_id)
        return lambda ids: _assign(actor, application, ids, assignee_id)
    if action == "spam":
        return lambda ids: blocklist.mark_spam_threads(application, ids, storage)
    return lambda ids: deletion.delete_threads(application, ids, storage)


async def _nothing(ids: list[int]) -> int:
    return 0


async def _locked(application_id: int, ids: Sequence[int]) -> dict[int, bool]:
    """Lock the application's threads among ``ids`` (in id order, on PostgreSQL); each one's
    archived state, which stays as read until the transaction ends."""
    return {thread.id: thread.archived for thread in await deleting.lock_threads(application_id, ids)}


@transactional
async def _archive(application_id: int, ids: list[int], archived: bool) -> int:
    await _locked(application_id, ids)
    changed = await threads.set_archived_many(application_id, ids, archived, datetime.now(UTC))
    await counters.threads_moved(application_id, changed, archived)
    await events.announce_threads(events.UPDATED, {application_id: changed})
    return len(changed)


@transactional
async def _tag(application_id: int, ids: list[int], name: str, most: int | None) -> int:
    states = await _locked(application_id, ids)
    if not states:
        return 0
    found = await ensure_tags(application_id, [name], most)
    if not found:
        raise ValidationError(TOO_MANY_TAGS, max=most)
    tag_id = found[0].id
    counts = await tags.links_per_thread(list(states))
    room = [feedback_id for feedback_id in states if counts.get(feedback_id, 0) < MAX_TAGS]
    linked = await tags.link_many(tag_id, room)
    archived = sum(states[feedback_id] for feedback_id in linked)
    await counters.tag_links_added({tag_id: (len(linked) - archived, archived)})
    await events.announce_threads(events.UPDATED, {application_id: linked})
    return len(linked)


@transactional
async def _untag(application_id: int, ids: list[int], tag_id: int) -> int:
    states = await _locked(application_id, ids)
    unlinked = await tags.unlink_many(tag_id, list(states))
    archived = sum(states[feedback_id] for feedback_id in unlinked)
    await counters.tag_links_added({tag_id: (-(len(unlinked) - archived), -archived)})
    await events.announce_threads(events.UPDATED, {application_id: unlinked})
    return len(unlinked)


@transactional
async def _assign(
    actor: UserRow, application: ApplicationRow, ids: list[int], assignee_id: int | None
) -> int:
    states = await _locked(application.id, ids)
    # Checked again in the batch's transaction: a member who left meanwhile is no agent.
    assignee = await assignment.check_assignee(application, assignee_id)
    return len(await assignment.write_assignment(application, list(states), assignee, actor))
