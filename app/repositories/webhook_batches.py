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

from app.repositories.sql import change, change_returning, insert_rows, moment, one_of, postgres, select
from app.repositories.webhooks import (
    DELIVERY_FIELDS,
    SELECT_ENDPOINTS,
    AttemptRow,
    EndpointRow,
    endpoint_of,
)

ATTEMPT_INSERT_COLUMNS = (
    "delivery_id", "attempted_at", "duration_ms", "status_code", "error", "request_headers",
    "response_headers", "response_body",
)  # fmt: skip


async def claim_deliveries(
    delivery_ids: Sequence[int], now: datetime, lease_until: datetime
) -> dict[int, int]:
    """Claim those of the deliveries still due at ``now`` (pending, or sending on a lease that
    ran out) for one attempt each, leased until ``lease_until``; their attempt numbers by id.

    "Still due" is the claim's condition: a delivery another worker claimed meanwhile carries
    that worker's lease (in the future) or its outcome, so it is not due and is not taken twice;
    on PostgreSQL the second UPDATE waits for the first's row lock and then sees its lease.
    """
    if not delivery_ids:
        return {}
    condition, ids = one_of("id", delivery_ids)
    rows = await change_returning(
        "UPDATE webhook_deliveries SET status = 'sending', attempts = attempts + 1, next_attempt_at = {} "
        f"WHERE {condition} AND status IN ('pending', 'sending') AND next_attempt_at <= {{}} "
        "RETURNING id, attempts",
        [moment(lease_until), *ids, moment(now)],
    )
    return {int(row["id"]): int(row["attempts"]) for row in rows}


async def endpoints_by_ids(endpoint_ids: Sequence[int]) -> dict[int, EndpointRow]:
    if not endpoint_ids:
        return {}
    condition, ids = one_of("e.id", sorted(set(endpoint_ids)))
    rows = await select(SELECT_ENDPOINTS + f" WHERE {condition}", ids)
    return {endpoint.id: endpoint for endpoint in map(endpoint_of, rows)}


async def lock_endpoints(endpoint_ids: Sequence[int]) -> None:
    """Hold the endpoints' rows until the transaction ends, in id order (PostgreSQL; SQLite has
    one writer): two workers recording deliveries of the same endpoints, one of them disabling
    an endpoint, would otherwise lock them in opposite orders."""
    if postgres() and endpoint_ids:
        condition, ids = one_of("id", sorted(set(endpoint_ids)))
        await select(f"SELECT id FROM webhook_endpoints WHERE {condition} ORDER BY id FOR UPDATE", ids)


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
    if set(fields) - DELIVERY_FIELDS:
        raise ValueError(f"not delivery fields: {sorted(set(fields) - DELIVERY_FIELDS)}")
    if not delivery_ids:
        return 0
    values = [moment(value) if isinstance(value, datetime) else value for value in fields.values()]
    assignments = ", ".join(f"{name} = {{}}" for name in fields)
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
