"""The outbox: e-mails sent with retries by one or more workers (public replies to the customer,
and the notifications, digests, receipts and notices of app.services.notifications).

Delivery strategy. The reply and its outbox row are written in one transaction, with a
Message-ID key fixed at that moment. Rows are claimed, leased and handed back by the durable
queue that webhook deliveries use too (app.services.durable_queue). A worker *claims* a due
row with one conditional UPDATE
(``status`` and ``attempts`` unchanged -> ``sending``, ``attempts + 1``, a lease in
``next_attempt_at``); only the worker whose UPDATE matched sends, so two workers (or two
processes) never send the same row. After the relay's final ``250`` the row is marked ``sent``
at once. A temporary failure puts the row back to ``pending`` with exponential backoff
(30 s, 1 min, 2 min ... capped at 1 h); a permanent refusal (5xx for the recipient or the
content), or two days without success, marks it ``failed`` with the error. No SMTP exchange can
be atomic with a database commit: if the process dies after the relay accepted the mail and
before the row is marked, the lease expires and the row is sent again, with the *same*
Message-ID, Date and body, so relays and mail clients recognise the duplicate. A worker that
*stops* (a graceful shutdown, an upgrade) does not wait for its lease: it takes no new row once
asked to stop, and hands back the rows it still holds, due at once (:func:`release_held`).
"""

from __future__ import annotations

import asyncio
import html
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email import message_from_string, policy
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr
from urllib.parse import unquote, urlsplit

import aiosmtplib

from app.config import Settings
from app.db import transactional
from app.metrics import delivery_failed
from app.repositories import applications, outbox, replies, threads
from app.repositories.outbox import OutboxRow
from app.repositories.replies import ReplyRow
from app.repositories.threads import ThreadRow
from app.services.durable_queue import DurableQueue
from app.services.mail import headers
from app.services.mail.addresses import outbound_message_id, reply_address, thread_message_id

logger = logging.getLogger("earful.outbox")

BASE_DELAY = timedelta(seconds=30)
MAX_DELAY = timedelta(hours=1)
GIVE_UP_AFTER = timedelta(days=2)
LEASE = timedelta(minutes=5)  # longer than one SMTP exchange can take (SMTP_TIMEOUT per step)
SMTP_TIMEOUT = 60.0
BATCH = 50
POLL_SECONDS = 10.0
STATUSES = ("pending", "sending", "sent", "failed")

queue = DurableQueue("outbox", outbox.move, logger)

# The rows this process claimed and has not marked yet, by id, with the attempt that claimed them.


@dataclass(frozen=True)
class SmtpRelay:
    """Where and how mail is handed over: ``smtp://user:pass@host:587`` or ``smtps://...:465``."""

    host: str
    port: int
    username: str | None
    password: str | None
    implicit_tls: bool

    @classmethod
    def from_url(cls, url: str) -> SmtpRelay:
        """Read EARFUL_SMTP_URL; ValueError when it is not an smtp:// or smtps:// URL with a host."""
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("EARFUL_SMTP_URL must look like smtp://user:password@host:587")
        implicit = parts.scheme == "smtps"
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if implicit else 587),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            implicit_tls=implicit,
        )


class DeliveryError(Exception):
    """A delivery attempt failed; ``permanent`` ones are not retried."""

    def __init__(self, message: str, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: 30 s doubling, at most an hour."""
    return min(BASE_DELAY * (1 << max(0, attempts - 1)), MAX_DELAY)


async def _thread_references(thread: ThreadRow, reply: ReplyRow, intake_domain: str) -> tuple[str, list[str]]:
    """In-Reply-To and References of a reply: the thread's root, then the customer's last mail.

    The root is the customer's original Message-ID when the thread came by e-mail (its inbound
    key names an intake address), else a stable id derived from the thread.
    """
    keys = [key.split(" ", 1) for key in await outbox.received_keys_of_thread(thread.id, reply.created_at)]
    root = thread_message_id(thread.id, intake_domain)
    if keys and len(keys[0]) == 2 and keys[0][1].startswith("feedback-"):
        root = headers.message_id(keys[0][0]) or root
    last = (headers.message_id(keys[-1][0]) if keys else None) or root
    references = [root] if last == root else [root, last]
    return last, references


async def compose(row: OutboxRow, settings: Settings) -> EmailMessage:
    """The e-mail of an outbox row: the same headers and body at every attempt. A reply is
    composed from its reply; the other kinds were composed when they were queued."""
    if row.kind != "reply":
        return _composed(row.content)
    if row.reply_id is None or row.application_id is None or row.feedback_id is None:
        raise LookupError(f"outbox row {row.id} is a reply without its reply")
    reply = await replies.reply_by_id(row.reply_id)
    application = await applications.application_by_id(row.application_id)
    thread = await threads.thread_by_id(row.application_id, row.feedback_id)
    if reply is None or thread is None or thread.member is None or application is None:
        raise LookupError(f"the reply, thread or application of outbox row {row.id} is gone")
    in_reply_to, references = await _thread_references(thread, reply, settings.intake_domain)
    agent = " ".join(reply.user.name.split()) if reply.user else ""
    signature = ", ".join(part for part in (agent, " ".join(application.name.split())) if part)
    asked_on = f"{thread.created_at.astimezone(UTC):%d %b %Y}"
    quoted = "\n".join(f"> {line}".rstrip() for line in thread.message.splitlines())

    message = EmailMessage()
    sender_name, sender_address = parseaddr(settings.mail_sender)
    message["From"] = headers.mailbox(sender_name, sender_address)
    message["To"] = headers.mailbox(thread.member.name, row.to_address)
    message["Reply-To"] = headers.mailbox(
        "", reply_address(thread.id, settings.secret_key, settings.intake_domain)
    )
    message["Subject"] = headers.subject("Re: ", thread.message)
    message["Date"] = format_datetime(reply.created_at.astimezone(UTC))
    message["Message-ID"] = outbound_message_id(row.message_id, settings.intake_domain)
    message["In-Reply-To"] = in_reply_to
    message["References"] = " ".join(references)
    message.set_content(f"{reply.message}\n\n-- \n{signature}\n\nOn {asked_on}, you wrote:\n{quoted}\n")
    message.add_alternative(
        "<!doctype html>\n<html><body>\n"
        f'<div style="white-space:pre-wrap">{html.escape(reply.message)}</div>\n'
        f'<p style="color:#666">&mdash; {html.escape(signature)}</p>\n'
        f'<p style="color:#666">On {asked_on}, you wrote:</p>\n'
        '<blockquote style="margin:0 0 0 .8ex;border-left:1px solid #ccc;padding-left:1ex;'
        f'white-space:pre-wrap">{html.escape(thread.message)}</blockquote>\n'
        "</body></html>\n",
        subtype="html",
    )
    return message


def _composed(content: str) -> EmailMessage:
    """A message composed when it was queued (:func:`app.services.mail.compose.stored`)."""
    parsed = message_from_string(content, policy=policy.default)
    assert isinstance(parsed, EmailMessage)  # the default policy's class
    return parsed


def _classify(error: Exception) -> DeliveryError:
    """Refusals of the recipient or of the content (5xx) are permanent; the rest is retried."""
    if isinstance(error, aiosmtplib.SMTPRecipientsRefused):
        codes = [refused.code for refused in error.recipients]
        text = "; ".join(f"{refused.code} {refused.message}" for refused in error.recipients)
        return DeliveryError(f"Recipient refused: {text}", permanent=all(500 <= c < 600 for c in codes))
    if isinstance(error, aiosmtplib.SMTPRecipientRefused | aiosmtplib.SMTPDataError):
        return DeliveryError(f"{error.code} {error.message}", permanent=500 <= error.code < 600)
    return DeliveryError(f"{error.__class__.__name__}: {error}", permanent=False)


async def send(message: EmailMessage, relay: SmtpRelay, sender: str, recipient: str) -> None:
    """Hand one message to the relay (STARTTLS when offered, or implicit TLS for smtps://)."""
    try:
        await aiosmtplib.send(
            message,
            sender=sender,
            recipients=[recipient],
            hostname=relay.host,
            port=relay.port,
            username=relay.username,
            password=relay.password,
            use_tls=relay.implicit_tls,
            start_tls=False if relay.implicit_tls else None,
            timeout=SMTP_TIMEOUT,
        )
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
        raise _classify(error) from error


async def _mark(row: OutboxRow, attempts: int, **fields: object) -> None:
    """Change a claimed row, if it is still ours (same attempt, still being sent)."""
    await queue.settle(row.id, attempts, **fields)


async def _deliver(row: OutboxRow, settings: Settings, relay: SmtpRelay, now: datetime) -> bool:
    """Claim, send and mark one row; True when it was sent."""
    attempts = row.attempts + 1
    if row.status == "pending" and now >= row.created_at + GIVE_UP_AFTER:
        # Never tried in two days (no worker ran): an answer that late would only confuse.
        await transactional(outbox.move)(
            row.id,
            "pending",
            row.attempts,
            status="failed",
            last_error=row.last_error or "Not sent within two days",
        )
        return False
    if await queue.claim(row.id, row.status, row.attempts, now + LEASE) is None:
        return False  # another worker has it, or it changed since it was listed
    try:
        message = await compose(row, settings)
        await send(message, relay, parseaddr(settings.mail_sender)[1], row.to_address)
    except DeliveryError as error:
        delivery_failed("email")
        gave_up = error.permanent or now >= row.created_at + GIVE_UP_AFTER
        logger.warning("outbox: e-mail %s not delivered (attempt %d): %s", row.id, attempts, error)
        if gave_up:
            await _mark(row, attempts, status="failed", last_error=str(error)[:2000])
        else:
            await _mark(
                row,
                attempts,
                status="pending",
                next_attempt_at=now + backoff(attempts),
                last_error=str(error),
            )
        return False
    except Exception as error:  # a row that cannot even be composed would fail forever
        delivery_failed("email")
        logger.exception("outbox: e-mail %s could not be composed", row.id)
        await _mark(row, attempts, status="failed", last_error=f"{error.__class__.__name__}: {error}")
        return False
    await _mark(row, attempts, status="sent", sent_at=now, last_error="")
    return True


async def deliver_due(
    settings: Settings, now: datetime | None = None, stop: asyncio.Event | None = None
) -> int:
    """One round of the worker: send every row that is due at ``now``, one by one until ``stop``
    is set; returns how many were sent.

    Rows left ``sending`` by a worker that died are due again when their lease has expired.
    """
    if not settings.smtp_url:
        raise ValueError("EARFUL_SMTP_URL is not set")
    relay = SmtpRelay.from_url(settings.smtp_url)
    moment = now or datetime.now(UTC)
    sent = 0
    for row in await outbox.due(moment, BATCH):
        if stop is not None and stop.is_set():
            break
        if await _deliver(row, settings, relay, now or datetime.now(UTC)):
            sent += 1
    return sent


def wake_worker() -> None:
    """Tell the workers of this process that a new e-mail is waiting (they also poll)."""
    queue.wake()


async def run_worker(settings: Settings, stop: asyncio.Event, interval: float = POLL_SECONDS) -> None:
    """Deliver due e-mails until ``stop`` is set: at every wake-up, else every ``interval`` seconds;
    the rows still held at the end are handed back."""

    async def one_round() -> tuple[int, bool]:
        return await deliver_due(settings, stop=stop), False

    await queue.run(stop, one_round, interval)


async def release_held(now: datetime | None = None) -> int:
    """Hand back the rows this process claimed and has not marked (see DurableQueue)."""
    return await queue.release_held(now)


async def delivery_status_of_replies(reply_ids: list[int]) -> dict[int, str]:
    """The outbox status of each e-mailed reply: pending, sending, sent or failed (one query)."""
    return await outbox.statuses_of_replies(reply_ids)
