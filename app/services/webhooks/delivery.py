"""Delivering webhook events by the Standard Webhooks specification, from the durable queue.

A worker takes the due deliveries a batch at a time: one UPDATE claims those still due by
setting a lease (app.repositories.webhook_batches), so two workers, two processes or two hosts
never send the same attempt; a worker that dies mid-attempt leaves a lease that runs out, and the
delivery is tried again. The batch is sent side by side and its attempts recorded in one
transaction: two write transactions of their own per delivery would queue behind the
capture's group commits on SQLite, which has one writer for every process. The body is
the event's, byte for byte at every attempt, and ``webhook-id`` is the delivery's own: a receiver
that saw it already can drop the repeat. Delivery is therefore *at least once*.

An attempt is an HTTP POST with a 10 s timeout that follows no redirect; any 2xx is a success,
anything else (a redirect included) a failure, retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
and 10 h (about 28 hours in all), then given up. Every attempt is logged with its request
headers and the first 4 KB of the answer. An endpoint whose deliveries have all failed for five
days is disabled, its waiting deliveries given up, and its administrators told by e-mail.

A worker that *stops* (a graceful shutdown, an upgrade) starts no new batch once asked to, and
hands back the deliveries it still holds, due at once (:func:`release_held`), instead of leaving
them to their lease.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import aiohttp
from standardwebhooks import Webhook

from app.config import Settings
from app.db import transactional
from app.metrics import delivery_failed
from app.repositories import webhook_batches as batches
from app.repositories import webhooks
from app.repositories.webhooks import AttemptRow, DeliveryRow, EndpointRow
from app.services.durable_queue import DurableQueue
from app.services.webhooks.addresses import ForbiddenAddress, GuardedResolver, check_literal_target
from app.services.webhooks.slack import slack_body

logger = logging.getLogger("earful.webhooks")

RETRY_DELAYS = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
    timedelta(hours=10),
)
TIMEOUT = 10.0
# Longer than an attempt can take (TIMEOUT, then the log's write); a worker that died holding a
# delivery delays it by no more than this.
LEASE = timedelta(seconds=20)
DISABLE_AFTER = timedelta(days=5)
KEEP_RESPONSE = 4096
BATCH = 50
POLL_SECONDS = 5.0
USER_AGENT = "Earful-Webhooks/1.0"

# A woken worker lingers this long first: the events of the commits just after the one that woke
# it join its batch, where each would otherwise make rounds (two write transactions) of its own.
LINGER_SECONDS = 0.05
queue = DurableQueue("webhooks", webhooks.move_delivery, logger, linger=LINGER_SECONDS)


@dataclass(frozen=True)
class Answer:
    """What one attempt got: a status and the start of the answer, or an error."""

    status: int | None
    headers: str
    body: str
    error: str
    duration_ms: int

    @property
    def succeeded(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def signed_headers(endpoint: EndpointRow, message_id: str, body: str, now: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt: signed with every secret valid at ``now``
    (during a rotation's overlap, the new and the old one, space-separated)."""
    moment = now.astimezone(UTC).replace(microsecond=0)  # the library signs UTC, whole seconds
    signatures = " ".join(Webhook(secret).sign(message_id, moment, body) for secret in endpoint.secrets(now))
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signatures,
    }


def request_body(endpoint: EndpointRow, delivery: DeliveryRow) -> str:
    """What is posted: the event's standard body, or its Slack-compatible message."""
    return slack_body(delivery.payload) if endpoint.format == "slack" else delivery.payload


def _shown_headers(headers: dict[str, str]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in headers.items())


class Sender:
    """The HTTP client of one worker: connections kept between deliveries, every new one made to
    a checked address (:class:`GuardedResolver`), no proxy from the environment, no redirects."""

    def __init__(self, allow_private: bool, timeout: float = TIMEOUT) -> None:
        self.allow_private = allow_private
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(resolver=GuardedResolver(self.allow_private), limit=20)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=self.timeout), trust_env=False
            )
        return self._session

    async def post(self, url: str, body: str, headers: dict[str, str]) -> Answer:
        started = time.monotonic()

        def elapsed() -> int:
            return round((time.monotonic() - started) * 1000)

        try:
            check_literal_target(url, self.allow_private)
            async with self._client().post(
                url, data=body.encode(), headers=headers, allow_redirects=False
            ) as response:
                kept = await response.content.read(KEEP_RESPONSE)
                shown = _shown_headers(dict(response.headers))[:KEEP_RESPONSE]
                text = kept.decode("utf-8", "replace")
                return Answer(response.status, shown, text, "", elapsed())
        except ForbiddenAddress as error:
            return Answer(None, "", "", str(error), elapsed())
        except TimeoutError:
            return Answer(None, "", "", f"No answer within {self.timeout:g} seconds", elapsed())
        except aiohttp.ClientError as error:
            cause = error.__cause__ if isinstance(error.__cause__, ForbiddenAddress) else error
            return Answer(None, "", "", f"{cause.__class__.__name__}: {cause}"[:2000], elapsed())

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def next_attempt(attempts: int, now: datetime) -> datetime | None:
    """When to try again after the ``attempts``-th failure; None once every retry is spent."""
    return now + RETRY_DELAYS[attempts - 1] if attempts <= len(RETRY_DELAYS) else None


@dataclass(frozen=True)
class Attempt:
    """One claimed delivery of a batch: what was sent (no request when its endpoint is gone or
    disabled) and what came back."""

    delivery: DeliveryRow
    endpoint: EndpointRow | None
    number: int  # the attempt's number, from the claim
    headers: dict[str, str]
    answer: Answer

    @property
    def sent(self) -> bool:
        return self.endpoint is not None and self.endpoint.enabled

    @property
    def succeeded(self) -> bool:
        return self.sent and self.answer.succeeded


async def _attempt(
    delivery: DeliveryRow, endpoint: EndpointRow | None, number: int, sender: Sender, now: datetime
) -> Attempt:
    if endpoint is None or not endpoint.enabled:
        return Attempt(delivery, endpoint, number, {}, Answer(None, "", "", "", 0))
    body = request_body(endpoint, delivery)
    headers = signed_headers(endpoint, delivery.message_id, body, now)
    return Attempt(delivery, endpoint, number, headers, await sender.post(endpoint.url, body, headers))


@transactional
async def _record(attempts: Sequence[Attempt], now: datetime, settings: Settings) -> None:
    """Every attempt of a batch at once: their log lines, the deliveries' new states and the
    endpoints' health, in one transaction (the endpoints' rows locked first, in id order).

    An endpoint that accepted any delivery of the batch is not failing; one whose deliveries
    all failed is noted as failing since then, and disabled after DISABLE_AFTER of that.
    """
    sent = [attempt for attempt in attempts if attempt.sent]
    await batches.lock_endpoints([attempt.delivery.endpoint_id for attempt in sent])
    await batches.insert_attempts(
        [
            AttemptRow(
                0, attempt.delivery.id, now, attempt.answer.duration_ms, attempt.answer.status,
                attempt.answer.error,
                _shown_headers({k: v for k, v in attempt.headers.items() if k != "webhook-signature"}),
                attempt.answer.headers, attempt.answer.body,
            )
            for attempt in sent
        ]
    )  # fmt: skip
    outcomes: dict[tuple[int, tuple[tuple[str, object], ...]], list[int]] = {}
    for attempt in attempts:
        outcome = tuple(_outcome(attempt, now).items())
        outcomes.setdefault((attempt.number, outcome), []).append(attempt.delivery.id)
    for (number, outcome), delivery_ids in outcomes.items():
        await batches.settle_deliveries(delivery_ids, number, **dict(outcome))
    accepting = {attempt.delivery.endpoint_id for attempt in sent if attempt.succeeded}
    await batches.clear_failing(sorted(accepting))
    endpoints = {attempt.endpoint.id: attempt.endpoint for attempt in sent if attempt.endpoint}
    for endpoint_id in sorted(set(endpoints) - accepting):
        failing_since = await webhooks.record_failure(endpoint_id, now)
        if now - failing_since >= DISABLE_AFTER:
            await _disable(endpoints[endpoint_id], now, settings)


def _outcome(attempt: Attempt, now: datetime) -> dict[str, object]:
    """The delivery's new state after its attempt (logged when it failed)."""
    answer = attempt.answer
    if not attempt.sent:
        return {"status": "failed", "last_error": "The endpoint is disabled"}
    if answer.succeeded:
        return {
            "status": "delivered",
            "delivered_at": now,
            "last_status_code": answer.status,
            "last_error": "",
        }
    error = answer.error or f"HTTP {answer.status}"
    retry_at = next_attempt(attempt.number, now)
    logger.warning(
        "webhooks: delivery %d to endpoint %d failed (attempt %d): %s",
        attempt.delivery.id,
        attempt.delivery.endpoint_id,
        attempt.number,
        error,
    )
    return {
        "status": "pending" if retry_at else "failed",
        "next_attempt_at": retry_at or now,
        "last_status_code": answer.status,
        "last_error": error,
    }


async def _disable(endpoint: EndpointRow, now: datetime, settings: Settings) -> None:
    """Disable an endpoint that has failed for DISABLE_AFTER and tell its administrators."""
    from app.services.notifications import queue_endpoint_disabled

    reason = "Disabled after five days of failed deliveries"
    if await webhooks.disable_endpoint(endpoint.id, reason, now):
        await webhooks.fail_pending_of_endpoint(endpoint.id, reason)
        await queue_endpoint_disabled(endpoint, settings, now)
        logger.warning("webhooks: endpoint %d disabled after five days of failures", endpoint.id)


async def deliver_due(settings: Settings, sender: Sender, now: datetime | None = None) -> int:
    """One round of the worker: the deliveries due at ``now`` (BATCH at most) claimed by one
    statement, sent side by side, and recorded in one transaction; how many it claimed."""
    moment = now or datetime.now(UTC)
    claimed = await queue.claim_due(batches.claim_due_deliveries, moment, moment + LEASE, BATCH)
    if not claimed:
        return 0
    mine = await batches.deliveries_by_ids(list(claimed))
    endpoints = await batches.endpoints_by_ids([row.endpoint_id for row in mine])
    attempts = await asyncio.gather(
        *(_attempt(row, endpoints.get(row.endpoint_id), claimed[row.id], sender, moment) for row in mine)
    )
    await _record(attempts, moment, settings)
    for attempt in attempts:
        queue.settled(attempt.delivery.id)
        if not attempt.succeeded:
            delivery_failed("webhook")
    return len(claimed)


def wake_worker() -> None:
    """Tell the delivery workers of this process that events are waiting (they also poll)."""
    queue.wake()


def wake_after_commit() -> None:
    """Wake the workers once the running transaction has committed its events."""
    queue.wake_after_commit()


async def run_worker(settings: Settings, stop: asyncio.Event, interval: float = POLL_SECONDS) -> None:
    """Deliver due events until ``stop`` is set: at every wake-up, else every ``interval`` s, and
    at once again after a full batch; the deliveries still held at the end are handed back."""
    sender = Sender(settings.webhook_allow_private)

    async def one_round() -> tuple[int, bool]:
        due = await deliver_due(settings, sender)
        return due, due == BATCH

    try:
        await queue.run(stop, one_round, interval)
    finally:
        await sender.close()


async def release_held(now: datetime | None = None) -> int:
    """Hand back the deliveries this process claimed and has not recorded (see DurableQueue)."""
    return await queue.release_held(now)


def shown_body(delivery: DeliveryRow, endpoint: EndpointRow) -> str:
    """The body of a delivery as the log shows it (indented JSON)."""
    try:
        return json.dumps(json.loads(request_body(endpoint, delivery)), ensure_ascii=False, indent=2)
    except ValueError:
        return delivery.payload
