"""Events, written in the transaction of the change they tell of.

No event without its change, no change without its event: every writer calls one of these
functions inside its own transaction, which reads the application's enabled endpoints (its own
and its organization's) and, when one of them subscribes, writes the event (its body, as the
management API shows the object at that moment) and one pending delivery per endpoint. The
delivery worker (:mod:`app.services.webhooks.delivery`) sends them after the commit; a rolled
back change takes its event with it. With no endpoint subscribed an event costs one read.

The body is ``{"type", "timestamp", "data"}`` (the Standard Webhooks layout): ``data`` is the
management API's JSON of the thread (``feedback.*``) or of the reply as the replies list shows it
(``reply.created``). A deleted thread's event carries the thread as it was just before. Internal
notes go only to endpoints that ask for them (``include_notes``).
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from app.db import in_open_transaction
from app.repositories import attachments, replies, threads, webhooks
from app.repositories.replies import ReplyRow
from app.repositories.threads import ThreadRow
from app.repositories.webhooks import EndpointRow, NewEvent
from app.representations import encode_json, listed_reply_json, thread_json
from app.services.deployment import current_settings
from app.services.thread_details import ThreadDetails, load_details, new_thread_details
from app.services.webhooks.delivery import wake_after_commit

CREATED = "feedback.created"
UPDATED = "feedback.updated"
DELETED = "feedback.deleted"
REPLY_CREATED = "reply.created"
TEST = "webhook.test"


def new_message_id() -> str:
    """A ``webhook-id``: the same at every attempt of one delivery, so receivers can deduplicate."""
    return "msg_" + secrets.token_urlsafe(18)


def body(kind: str, data: dict[str, Any], now: datetime) -> str:
    """The JSON body of a standard delivery, encoded as the management API encodes its answers
    (one per new thread on the capture path)."""
    stamp = now.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return encode_json({"type": kind, "timestamp": stamp, "data": data}).decode()


def listens(endpoint: EndpointRow, kind: str, note: bool = False) -> bool:
    """Whether the endpoint wants this event (notes only when it asked for them)."""
    return kind in endpoint.events and (endpoint.include_notes or not note)


async def announce_threads(kind: str, threads_by_application: Mapping[int, Sequence[int]]) -> None:
    """Write ``kind`` (updated or deleted) for threads, inside the change's transaction; a
    deletion announces them before it deletes them."""
    assert in_open_transaction(), "events are written in the transaction of their change"
    wanted = await _endpoints_wanting(kind, threads_by_application)
    ids = [
        thread_id
        for app_id, thread_ids in threads_by_application.items()
        if wanted.get(app_id)
        for thread_id in thread_ids
    ]
    if ids:
        await _announce(kind, await load_details(await threads.threads_by_ids(ids)), wanted)


async def announce_new_threads(
    written: Sequence[ThreadRow], with_files: Collection[int], with_tags: Collection[int]
) -> None:
    """Write ``feedback.created`` for threads this transaction has just written, given as the
    writer holds them, each with its sender (app.services.thread_writer).

    A new thread has no reply yet and its other columns are what the writer wrote, so only its
    tags (``with_tags``: the threads given some) and files (``with_files``) are read: at most two
    statements inside the group commit's transaction, where reading the threads back took four
    (and on SQLite that transaction holds the one write lock of every worker)."""
    assert in_open_transaction(), "events are written in the transaction of their change"
    wanted = await _endpoints_wanting(CREATED, {thread.application_id for thread in written})
    chosen = [thread for thread in written if wanted.get(thread.application_id)]
    if chosen:
        await _announce(CREATED, await new_thread_details(chosen, with_files, with_tags), wanted)


async def _endpoints_wanting(
    kind: str, application_ids: Iterable[int], note: bool = False
) -> dict[int, tuple[int, ...]]:
    """The ids of the enabled endpoints of each application (its own and its organization's)
    that want ``kind`` (a note's when ``note``), by application id."""
    listeners = await webhooks.subscribers(list(application_ids))
    return {
        application_id: tuple(endpoint.id for endpoint in endpoints if listens(endpoint, kind, note))
        for application_id, endpoints in listeners.items()
    }


async def _announce(
    kind: str, threads_told: Sequence[ThreadDetails], wanted: Mapping[int, tuple[int, ...]]
) -> None:
    settings = current_settings()
    now = datetime.now(UTC)
    events = [
        NewEvent(
            details.thread.application_id,
            details.thread.id,
            kind,
            body(kind, thread_json(details, settings), now),
            wanted[details.thread.application_id],
        )
        for details in threads_told
    ]
    await _write(events, now)


async def announce_reply(reply: ReplyRow) -> None:
    """Write ``reply.created`` for a new reply, note or customer answer, inside its transaction."""
    assert in_open_transaction(), "events are written in the transaction of their change"
    wanted = (await _endpoints_wanting(REPLY_CREATED, [reply.application_id], note=reply.type == "note")).get(
        reply.application_id, ()
    )
    if not wanted:
        return
    thread = await threads.thread_by_id(reply.application_id, reply.feedback_id)
    if thread is None:
        return
    listed = await replies.reply_by_id(reply.id)
    assert listed is not None  # written in this transaction
    listed.feedback = replies.reply_thread_of_thread(thread)
    files = await attachments.attachments_of((), [reply.id])
    now = datetime.now(UTC)
    data = listed_reply_json(listed, files, current_settings())
    await _write(
        [
            NewEvent(
                reply.application_id, reply.feedback_id, REPLY_CREATED, body(REPLY_CREATED, data, now), wanted
            )
        ],
        now,
    )


async def announce_test(endpoint: EndpointRow, application_id: int | None) -> int:
    """Write a ``webhook.test`` event for one endpoint; the id of its delivery."""
    assert in_open_transaction(), "events are written in a transaction"
    now = datetime.now(UTC)
    data = {
        "endpoint_id": endpoint.id,
        "message": "A test event from Earful: this endpoint receives and verifies its deliveries.",
    }
    ids = await _write([NewEvent(application_id, None, TEST, body(TEST, data, now), (endpoint.id,))], now)
    return ids[0]


async def _write(events: Sequence[NewEvent], now: datetime) -> list[int]:
    message_ids = [new_message_id() for event in events for _ in event.endpoint_ids]
    written = await webhooks.insert_events(events, message_ids, now)
    wake_after_commit()
    return written
