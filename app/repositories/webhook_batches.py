"""What the webhook delivery worker reads and writes for a batch of deliveries at once.

A worker takes up to a batch of due deliveries; claiming them one by one and recording each
attempt in its own transaction made two write transactions per delivery, which on SQLite (one
writer for every process) queued behind the capture's group commits and stalled them. Here a
batch is claimed by one statement and its attempts recorded in one transaction, whatever its
size; the statements' texts do not depend on it on PostgreSQL (array parameters).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from app.repositories.sql import (
    change,
    change_returning,
    insert_rows,
    limit_clause,
    moment,
    one_of,
    postgres,
    select,
)
from app.repositories.webhooks import (
    SELECT_DELIVERIES,
    SELECT_ENDPOINTS,
    AttemptRow,
    DeliveryRow,
    EndpointRow,
    delivery_assignments,
    delivery_of,
    endpoint_of,
)

ATTEMPT_INSERT_COLUMNS = (
    "delivery_id", "attempted_at", "duration_ms", "status_code", "error", "request_headers",
    "response_headers", "response_body",
)  # fmt: skip


async def claim_due_deliveries(now: datetime, lease_until: datetime, limit: int) -> dict[int, int]:
    """Claim up to ``limit`` of the deliveries due at ``now`` (pending, or sending on a lease
    that ran out), the longest due first, for one attempt each, leased until ``lease_until``:
    their attempt numbers by id.

    One statement that finds and takes them, so that a delivery goes to one worker only: the
    lease it sets makes it not due for the others. On PostgreSQL the rows another worker is
    claiming at that moment are skipped (``SKIP LOCKED``), so workers of several processes or
    hosts share the queue instead of each reading what only one of them will take, then
    queueing on its row locks. SQLite has one writer at a time.
    """
    rows = await change_returning(*claim_statement(now, lease_until, limit))
    return {int(row["id"]): int(row["attempts"]) for row in rows}


def claim_statement(now: datetime, lease_until: datetime, limit: int) -> tuple[str, list[object]]:
    """The claim's template and values. Its sub-select reads the index of the due deliveries in
    order (migration 0020), the batch's rows and no more."""
    order = "ORDER BY next_attempt_at, id " + limit_clause(limit)
    skip = " FOR UPDATE SKIP LOCKED" if postgres() else ""
    return (
        "UPDATE webhook_deliveries SET status = 'sending', attempts = attempts + 1, next_attempt_at = {} "
        "WHERE id IN (SELECT id FROM webhook_deliveries "
        f"WHERE status IN ('pending', 'sending') AND next_attempt_at <= {{}} {order}{skip}) "
        "RETURNING id, attempts",
        [moment(lease_until), moment(now)],
    )


async def deliveries_by_ids(delivery_ids: Sequence[int]) -> list[DeliveryRow]:
    """The deliveries with their events, the longest due first (as claimed)."""
    if not delivery_ids:
        return []
    condition, ids = one_of("d.id", delivery_ids)
    rows = await select(SELECT_DELIVERIES + f" WHERE {condition} ORDER BY d.next_attempt_at, d.id", ids)
    return [delivery_of(row) for row in rows]


async def endpoints_by_ids(endpoint_ids: Sequence[int]) -> dict[int, EndpointRow]:
    if not endpoint_ids:
        return {}
    condition, ids = one_of("e.id", sorted(set(endpoint_ids)))
    rows = await select(SELECT_ENDPOINTS + f" WHERE {condition}", ids)
    return {endpoint.id: endpoint for endpoint in map(endpoint_of, rows)}


async def lock_endpoints(endpoint_ids: Sequence[int]) -> None:
    """Hold the endpoints' rows until the transaction ends, in id order (PostgreSQL; SQLite has
    one writer): two workers recording deliveries of the same endpoints, one of them disabling
    an endpoint, would otherwise lock them in opposite orders.

    The lock is the one an UPDATE of the row's other columns takes (``FOR NO KEY UPDATE``).
    ``FOR UPDATE`` would also wait for every transaction that queued a delivery to the endpoint
    (the delivery's foreign key holds ``FOR KEY SHARE`` on it until commit), and the capture's
    group commits would then queue behind the waiting recorder."""
    if postgres() and endpoint_ids:
        condition, ids = one_of("id", sorted(set(endpoint_ids)))
        await select(f"SELECT id FROM webhook_endpoints WHERE {condition} ORDER BY id FOR NO KEY UPDATE", ids)


async def insert_attempts(attempts: Sequence[AttemptRow]) -> None:
    await insert_rows(
        "webhook_attempts",
        ATTEMPT_INSERT_COLUMNS,
        [
            (
                attempt.delivery_id,
                moment(attempt.attempted_at),
                attempt.duration_ms,
                attempt.status_code,
                attempt.error,
                attempt.request_headers,
                attempt.response_headers,
                attempt.response_body,
            )
            for attempt in attempts
        ],
    )


async def settle_deliveries(delivery_ids: Sequence[int], attempt: int, **fields: object) -> int:
    """Record one outcome (``fields``) on the deliveries still held for their ``attempt``-th
    attempt (a worker's lease that ran out may have let another take one); how many were."""
    assignments, values = delivery_assignments(fields)
    if not delivery_ids:
        return 0
    condition, ids = one_of("id", delivery_ids)
    return await change(
        f"UPDATE webhook_deliveries SET {assignments} "
        f"WHERE {condition} AND status = 'sending' AND attempts = {{}}",
        [*values, *ids, attempt],
    )


async def clear_failing(endpoint_ids: Sequence[int]) -> None:
    """The endpoints accepted a delivery: they are not failing (any more)."""
    if endpoint_ids:
        condition, ids = one_of("id", sorted(set(endpoint_ids)))
        await change(
            f"UPDATE webhook_endpoints SET failing_since = NULL WHERE {condition} "
            "AND failing_since IS NOT NULL",
            ids,
        )
