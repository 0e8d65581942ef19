"""Webhook endpoints, the events written with their changes, the deliveries queue and its log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.repositories.accounts import USER_COLUMNS, UserRow, user_of
from app.repositories.sql import (
    Row,
    change,
    change_returning,
    columns,
    insert_rows,
    moment,
    parameters,
    read_moment,
    read_optional_moment,
    reserve_ids,
    select,
    select_one,
)


@dataclass(slots=True)
class EndpointRow:
    """A URL that receives the events of an application, or of an organization's applications."""

    id: int
    application_id: int | None
    organization_id: int | None
    url: str
    description: str
    events: tuple[str, ...]
    include_notes: bool
    format: str
    enabled: bool
    secret: str
    previous_secret: str | None
    previous_secret_expires_at: datetime | None
    failing_since: datetime | None
    disabled_reason: str
    created_by_id: int | None
    created_at: datetime
    updated_at: datetime

    def secrets(self, now: datetime) -> list[str]:
        """The secrets that sign a delivery at ``now``: the current one, and the previous one
        during the day after a rotation."""
        expires = self.previous_secret_expires_at
        if self.previous_secret and expires is not None and now < expires:
            return [self.secret, self.previous_secret]
        return [self.secret]


ENDPOINT_COLUMNS = (
    "id", "application_id", "organization_id", "url", "description", "events", "include_notes", "format",
    "enabled", "secret", "previous_secret", "previous_secret_expires_at", "failing_since", "disabled_reason",
    "created_by_id", "created_at", "updated_at",
)  # fmt: skip
# What an endpoint's owner may change (the service validates the values).
ENDPOINT_SETTINGS = frozenset({"url", "description", "events", "include_notes", "format", "enabled"})


def endpoint_of(row: Row, alias: str = "e") -> EndpointRow:
    return EndpointRow(
        id=row[f"{alias}.id"],
        application_id=row[f"{alias}.application_id"],
        organization_id=row[f"{alias}.organization_id"],
        url=row[f"{alias}.url"],
        description=row[f"{alias}.description"],
        events=tuple(row[f"{alias}.events"].split()),
        include_notes=bool(row[f"{alias}.include_notes"]),
        format=row[f"{alias}.format"],
        enabled=bool(row[f"{alias}.enabled"]),
        secret=row[f"{alias}.secret"],
        previous_secret=row[f"{alias}.previous_secret"],
        previous_secret_expires_at=read_optional_moment(row[f"{alias}.previous_secret_expires_at"]),
        failing_since=read_optional_moment(row[f"{alias}.failing_since"]),
        disabled_reason=row[f"{alias}.disabled_reason"],
        created_by_id=row[f"{alias}.created_by_id"],
        created_at=read_moment(row[f"{alias}.created_at"]),
        updated_at=read_moment(row[f"{alias}.updated_at"]),
    )


SELECT_ENDPOINTS = f"SELECT {columns('e', ENDPOINT_COLUMNS)} FROM webhook_endpoints e"


def _stored(name: str, value: object) -> object:
    if name == "events" and isinstance(value, list | tuple):
        return " ".join(str(kind) for kind in value)
    return moment(value) if isinstance(value, datetime) else value


async def endpoints_of_application(application_id: int) -> list[EndpointRow]:
    """An application's own endpoints, oldest first."""
    rows = await select(SELECT_ENDPOINTS + " WHERE e.application_id = {} ORDER BY e.id", [application_id])
    return [endpoint_of(row) for row in rows]


async def endpoints_of_organization(organization_id: int) -> list[EndpointRow]:
    """An organization's endpoints (for all of its applications), oldest first."""
    rows = await select(SELECT_ENDPOINTS + " WHERE e.organization_id = {} ORDER BY e.id", [organization_id])
    return [endpoint_of(row) for row in rows]


async def endpoint_by_id(endpoint_id: int) -> EndpointRow | None:
    row = await select_one(SELECT_ENDPOINTS + " WHERE e.id = {}", [endpoint_id])
    return None if row is None else endpoint_of(row)


async def subscribers(application_ids: Sequence[int]) -> dict[int, list[EndpointRow]]:
    """The enabled endpoints that hear of each application: its own and its organization's."""
    if not application_ids:
        return {}
    marks = parameters(len(application_ids))
    rows = await select(
        f"SELECT a.id AS application, {columns('e', ENDPOINT_COLUMNS)} FROM applications a "
        "JOIN webhook_endpoints e ON e.application_id = a.id OR e.organization_id = a.organization_id "
        f"WHERE a.id IN ({marks}) AND e.enabled = {{}} ORDER BY e.id",
        [*application_ids, True],
    )
    found: dict[int, list[EndpointRow]] = {}
    for row in rows:
        found.setdefault(int(row["application"]), []).append(endpoint_of(row))
    return found


async def insert_endpoint(
    application_id: int | None,
    organization_id: int | None,
    fields: dict[str, object],
    secret: str,
    created_by_id: int | None,
    now: datetime,
) -> int:
    """A new endpoint; its id. ``fields``: url, description, events, include_notes, format, enabled."""
    rows = await change_returning(
        "INSERT INTO webhook_endpoints (application_id, organization_id, url, description, events, "
        "include_notes, format, enabled, secret, disabled_reason, created_by_id, created_at, updated_at) "
        "VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, '', {}, {}, {}) RETURNING id",
        [
            application_id,
            organization_id,
            *(_stored(name, fields[name]) for name in ENDPOINT_INSERT_ORDER),
            secret,
            created_by_id,
            moment(now),
            moment(now),
        ],
    )
    return int(rows[0]["id"])


ENDPOINT_INSERT_ORDER = ("url", "description", "events", "include_notes", "format", "enabled")


async def update_endpoint(endpoint_id: int, fields: dict[str, object], now: datetime) -> None:
    """Change an endpoint's settings (ENDPOINT_SETTINGS) or its delivery state (secrets,
    failing_since, disabled_reason)."""
    if not fields:
        return
    assignments = ", ".join(f"{name} = {{}}" for name in fields)
    await change(
        f"UPDATE webhook_endpoints SET {assignments}, updated_at = {{}} WHERE id = {{}}",
        [*(_stored(name, value) for name, value in fields.items()), moment(now), endpoint_id],
    )


async def delete_endpoint(endpoint_id: int) -> bool:
    return await change("DELETE FROM webhook_endpoints WHERE id = {}", [endpoint_id]) > 0


async def record_failure(endpoint_id: int, now: datetime) -> datetime:
    """Note that a delivery to the endpoint failed; since when it has been failing."""
    await change(
        "UPDATE webhook_endpoints SET failing_since = {} WHERE id = {} AND failing_since IS NULL",
        [moment(now), endpoint_id],
    )
    row = await select_one("SELECT failing_since FROM webhook_endpoints WHERE id = {}", [endpoint_id])
    return now if row is None or row["failing_since"] is None else read_moment(row["failing_since"])


async def forgive_if_disabled(endpoint_id: int) -> None:
    """Forget a disabled endpoint's failures (it is being enabled again); an enabled one that is
    failing keeps its record, or saving its form would put off its disabling for ever."""
    await change(
        "UPDATE webhook_endpoints SET failing_since = NULL, disabled_reason = '' "
        "WHERE id = {} AND enabled = {}",
        [endpoint_id, False],
    )


async def disable_endpoint(endpoint_id: int, reason: str, now: datetime) -> bool:
    """Disable an enabled endpoint; False when it was not enabled (another worker did it)."""
    return (
        await change(
            "UPDATE webhook_endpoints SET enabled = {}, disabled_reason = {}, updated_at = {} "
            "WHERE id = {} AND enabled = {}",
            [False, reason, moment(now), endpoint_id, True],
        )
        > 0
    )


async def endpoint_administrators(endpoint: EndpointRow) -> list[UserRow]:
    """Who administers an endpoint: its application's creator and its organization's owners, or
    the owners of the organization it belongs to."""
    if endpoint.application_id is not None:
        rows = await select(
            f"SELECT DISTINCT {columns('u', USER_COLUMNS)} FROM applications a "
            "JOIN users u ON u.id = a.owner_id OR u.id IN (SELECT m.user_id FROM memberships m "
            "WHERE m.organization_id = a.organization_id AND m.role = 'owner') WHERE a.id = {} ORDER BY u.id",
            [endpoint.application_id],
        )
    else:
        rows = await select(
            f"SELECT {columns('u', USER_COLUMNS)} FROM memberships m JOIN users u ON u.id = m.user_id "
            "WHERE m.organization_id = {} AND m.role = 'owner' ORDER BY u.id",
            [endpoint.organization_id],
        )
    return [user_of(row) for row in rows]


# Events and deliveries -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to write, with the endpoints it goes to (each gets a delivery)."""

    application_id: int | None
    feedback_id: int | None
    type: str
    payload: str
    endpoint_ids: tuple[int, ...]


async def insert_events(events: Sequence[NewEvent], message_ids: Sequence[str], now: datetime) -> list[int]:
    """Write events and one pending delivery per endpoint of each (``message_ids``: one per
    delivery, in order); the ids of the deliveries. At most four statements however many events
    (a group commit writes one per new thread), three for one event: the ids of several events,
    and of the deliveries, are reserved first (:func:`app.repositories.sql.reserve_ids`), then
    each table takes one multi-row insert; a lone event is inserted and its id returned."""
    if not events:
        return []
    event_ids = await _insert_event_rows(events, now)
    targets = [
        (endpoint_id, event_id)
        for event_id, event in zip(event_ids, events, strict=True)
        for endpoint_id in event.endpoint_ids
    ]
    if not targets:
        return []
    delivery_ids = await reserve_ids("webhook_deliveries", len(targets))
    await insert_rows(
        "webhook_deliveries",
        ("id", "endpoint_id", "event_id", "message_id", "status", "attempts", "next_attempt_at", "last_error",
         "created_at"),
        [
            (delivery_id, endpoint_id, event_id, message_id, "pending", 0, moment(now), "", moment(now))
            for delivery_id, (endpoint_id, event_id), message_id in zip(
                delivery_ids, targets, message_ids, strict=True
            )
        ],
    )  # fmt: skip
    return delivery_ids


async def _insert_event_rows(events: Sequence[NewEvent], now: datetime) -> list[int]:
    """The events' rows, and their ids in order."""
    if len(events) == 1:
        [event] = events
        rows = await change_returning(
            "INSERT INTO webhook_events (application_id, feedback_id, type, payload, created_at) "
            "VALUES ({}, {}, {}, {}, {}) RETURNING id",
            [event.application_id, event.feedback_id, event.type, event.payload, moment(now)],
        )
        return [int(rows[0]["id"])]
    event_ids = await reserve_ids("webhook_events", len(events))
    await insert_rows(
        "webhook_events",
        ("id", "application_id", "feedback_id", "type", "payload", "created_at"),
        [
            (event_id, event.application_id, event.feedback_id, event.type, event.payload, moment(now))
            for event_id, event in zip(event_ids, events, strict=True)
        ],
    )
    return event_ids


@dataclass(slots=True)
class DeliveryRow:
    """A delivery with its event (type and body) and the state of its queue row."""

    id: int
    endpoint_id: int
    event_id: int
    message_id: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_status_code: int | None
    last_error: str
    delivered_at: datetime | None
    created_at: datetime
    event_type: str
    payload: str
    application_id: int | None
    feedback_id: int | None


DELIVERY_COLUMNS = (
    "id", "endpoint_id", "event_id", "message_id", "status", "attempts", "next_attempt_at",
    "last_status_code", "last_error", "delivered_at", "created_at",
)  # fmt: skip
SELECT_DELIVERIES = (
    f"SELECT {columns('d', DELIVERY_COLUMNS)}, v.type AS event_type, v.payload AS payload, "
    "v.application_id AS application_id, v.feedback_id AS feedback_id "
    "FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id"
)


def delivery_of(row: Row) -> DeliveryRow:
    return DeliveryRow(
        id=row["d.id"],
        endpoint_id=row["d.endpoint_id"],
        event_id=row["d.event_id"],
        message_id=row["d.message_id"],
        status=row["d.status"],
        attempts=row["d.attempts"],
        next_attempt_at=read_moment(row["d.next_attempt_at"]),
        last_status_code=row["d.last_status_code"],
        last_error=row["d.last_error"],
        delivered_at=read_optional_moment(row["d.delivered_at"]),
        created_at=read_moment(row["d.created_at"]),
        event_type=row["event_type"],
        payload=row["payload"],
        application_id=row["application_id"],
        feedback_id=row["feedback_id"],
    )


async def delivery_by_id(delivery_id: int) -> DeliveryRow | None:
    row = await select_one(SELECT_DELIVERIES + " WHERE d.id = {}", [delivery_id])
    return None if row is None else delivery_of(row)


async def deliveries_of_endpoint(
    endpoint_id: int, limit: int, before: int | None = None
) -> list[DeliveryRow]:
    """An endpoint's deliveries, newest first (``before``: ids below it, the next page)."""
    bound = "" if before is None else " AND d.id < {}"
    values: list[object] = [endpoint_id] if before is None else [endpoint_id, before]
    rows = await select(
        SELECT_DELIVERIES + " WHERE d.endpoint_id = {}" + bound + " ORDER BY d.id DESC LIMIT {}",
        [*values, limit],
    )
    return [delivery_of(row) for row in rows]


DELIVERY_FIELDS = frozenset(
    {"status", "attempts", "next_attempt_at", "last_status_code", "last_error", "delivered_at"}
)


def delivery_assignments(fields: dict[str, object]) -> tuple[str, list[object]]:
    """``SET`` assignments of a delivery's queue fields, and their values; other names refused."""
    if set(fields) - DELIVERY_FIELDS:
        raise ValueError(f"not delivery fields: {sorted(set(fields) - DELIVERY_FIELDS)}")
    values = [moment(value) if isinstance(value, datetime) else value for value in fields.values()]
    return ", ".join(f"{name} = {{}}" for name in fields), values


async def move_delivery(delivery_id: int, from_status: str, after_attempts: int, **fields: object) -> bool:
    """Change a delivery still in ``from_status`` after ``after_attempts`` attempts (nobody else
    took it meanwhile); False when it is not (the claim of the durable queue, as the outbox's)."""
    assignments, values = delivery_assignments(fields)
    return (
        await change(
            f"UPDATE webhook_deliveries SET {assignments} "
            "WHERE id = {} AND status = {} AND attempts = {}",
            [*values, delivery_id, from_status, after_attempts],
        )
        > 0
    )


async def requeue_delivery(delivery_id: int, now: datetime) -> bool:
    """Send a delivery again (Resend): pending at once, whatever it was, unless a worker is
    sending it right now."""
    return (
        await change(
            "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = {}, delivered_at = NULL "
            "WHERE id = {} AND status != 'sending'",
            [moment(now), delivery_id],
        )
        > 0
    )


async def fail_pending_of_endpoint(endpoint_id: int, reason: str) -> int:
    """Give up the deliveries an endpoint still waits for (it was disabled); one being sent now
    is given up too: its worker's next change of it then finds it taken."""
    return await change(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = {} "
        "WHERE endpoint_id = {} AND status IN ('pending', 'sending')",
        [reason, endpoint_id],
    )


async def pending_counts(endpoint_ids: Sequence[int]) -> dict[int, int]:
    """How many deliveries each endpoint still waits for."""
    if not endpoint_ids:
        return {}
    rows = await select(
        "SELECT endpoint_id, COUNT(*) AS count FROM webhook_deliveries "
        f"WHERE endpoint_id IN ({parameters(len(endpoint_ids))}) AND status IN ('pending', 'sending') "
        "GROUP BY endpoint_id",
        list(endpoint_ids),
    )
    return {int(row["endpoint_id"]): int(row["count"]) for row in rows}


# The attempts' log ------------------------------------------------------------------------------


@dataclass(slots=True)
class AttemptRow:
    """One try of a delivery and what came back."""

    id: int
    delivery_id: int
    attempted_at: datetime
    duration_ms: int
    status_code: int | None
    error: str
    request_headers: str
    response_headers: str
    response_body: str


ATTEMPT_COLUMNS = (
    "id", "delivery_id", "attempted_at", "duration_ms", "status_code", "error", "request_headers",
    "response_headers", "response_body",
)  # fmt: skip


def _attempt_of(row: Row) -> AttemptRow:
    return AttemptRow(
        id=row["t.id"],
        delivery_id=row["t.delivery_id"],
        attempted_at=read_moment(row["t.attempted_at"]),
        duration_ms=row["t.duration_ms"],
        status_code=row["t.status_code"],
        error=row["t.error"],
        request_headers=row["t.request_headers"],
        response_headers=row["t.response_headers"],
        response_body=row["t.response_body"],
    )


async def attempts_of_deliveries(delivery_ids: Sequence[int]) -> dict[int, list[AttemptRow]]:
    """The attempts of deliveries, oldest first."""
    if not delivery_ids:
        return {}
    rows = await select(
        f"SELECT {columns('t', ATTEMPT_COLUMNS)} FROM webhook_attempts t "
        f"WHERE t.delivery_id IN ({parameters(len(delivery_ids))}) ORDER BY t.id",
        list(delivery_ids),
    )
    found: dict[int, list[AttemptRow]] = {}
    for row in rows:
        attempt = _attempt_of(row)
        found.setdefault(attempt.delivery_id, []).append(attempt)
    return found


# Upkeep ----------------------------------------------------------------------------------------


async def old_event_ids(before: datetime, limit: int) -> list[int]:
    """Events written before ``before`` none of whose deliveries is still waiting."""
    rows = await select(
        "SELECT v.id FROM webhook_events v WHERE v.created_at < {} AND NOT EXISTS ("
        "SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id AND d.status IN ('pending', 'sending')) "
        "ORDER BY v.id LIMIT {}",
        [moment(before), limit],
    )
    return [int(row["id"]) for row in rows]


async def delete_events(event_ids: Sequence[int]) -> int:
    """Delete events with their deliveries and attempts (foreign keys cascade)."""
    if not event_ids:
        return 0
    return await change(
        f"DELETE FROM webhook_events WHERE id IN ({parameters(len(event_ids))})", list(event_ids)
    )


async def event_ids_of_threads(feedback_ids: Sequence[int]) -> list[int]:
    """The events about these threads (an erasure removes what they carried)."""
    if not feedback_ids:
        return []
    rows = await select(
        f"SELECT id FROM webhook_events WHERE feedback_id IN ({parameters(len(feedback_ids))})",
        list(feedback_ids),
    )
    return [int(row["id"]) for row in rows]
