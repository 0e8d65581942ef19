"""A stopping outbox worker hands back the e-mails it holds instead of leaving them to the lease."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

from app.db import transactional
from app.models import OutboundEmail
from app.repositories import outbox as rows
from app.services.mail import outbox
from app.services.mail.outbox import LEASE, deliver_due, release_held, run_worker
from tests.factories import make_reply, make_thread


async def status_becomes(status: str) -> list[OutboundEmail]:
    """The rows in ``status`` once there is one (a worker in the background moves them)."""
    for _ in range(500):
        if found := await OutboundEmail.filter(status=status).order_by("id"):
            return found
        await asyncio.sleep(0.02)
    raise TimeoutError(f"no e-mail became {status}")


async def test_a_worker_stopped_mid_send_hands_its_email_back_due_at_once(
    agent, application, mail_settings, relay, monkeypatch
):
    # Cancelled mid-exchange, aiosmtplib still says QUIT and waits up to the timeout for the
    # answer, which this relay, holding the message, never gives. The timeout is short for that,
    # and long enough that the read of the held answer does not time out first on a busy machine
    # (the send would then count as a failed attempt, due again in 30 s).
    monkeypatch.setattr(outbox, "SMTP_TIMEOUT", 3.0)
    thread = await make_thread(application, email="jo@example.org")
    await make_reply(agent, application, thread)
    relay.open.clear()  # the relay takes the message and holds its answer
    stop = asyncio.Event()
    worker = asyncio.create_task(run_worker(mail_settings, stop, interval=0.05))
    [claimed] = await status_becomes("sending")
    assert claimed.next_attempt_at > datetime.now(UTC) + LEASE / 2
    await asyncio.wait_for(relay.holding.wait(), 10)  # the message is sent, its answer held

    stop.set()
    worker.cancel()  # what app.workers does to a worker that does not stop in time
    with contextlib.suppress(asyncio.CancelledError):
        await worker

    [handed_back] = await OutboundEmail.filter(id=claimed.id)
    assert handed_back.status == "pending"
    assert handed_back.next_attempt_at <= datetime.now(UTC)
    relay.open.set()
    assert await deliver_due(mail_settings) == 1


async def test_a_stopping_worker_takes_no_new_email(agent, application, mail_settings, relay):
    thread = await make_thread(application, email="jo@example.org")
    await make_reply(agent, application, thread)
    await make_reply(agent, application, thread, "And one more thing.")
    relay.open.clear()
    stop = asyncio.Event()
    worker = asyncio.create_task(run_worker(mail_settings, stop, interval=0.05))
    await status_becomes("sending")

    stop.set()
    relay.open.set()
    await asyncio.wait_for(worker, 10)

    sent, waiting = await OutboundEmail.all().order_by("id")
    assert (sent.status, waiting.status, waiting.attempts) == ("sent", "pending", 0)


async def test_an_email_marked_meanwhile_is_not_handed_back(agent, application, mail_settings):
    thread = await make_thread(application, email="jo@example.org")
    await make_reply(agent, application, thread)
    [row] = await OutboundEmail.all()
    await outbox.queue.claim(row.id, "pending", 0, datetime.now(UTC) + LEASE)  # claimed here ...
    await transactional(rows.move)(row.id, "sending", 1, status="sent")  # ... and marked in time

    assert await release_held() == 0
    assert (await OutboundEmail.get(id=row.id)).status == "sent"
