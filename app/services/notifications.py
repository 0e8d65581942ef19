"""E-mail that tells people what happened: agents' notifications and digests, the customer's
receipt, and administrators' notices.

- **Agents choose per application** (``instant``: an e-mail for every new thread; ``digest``: one
  e-mail a day; ``none``). Without a choice, an application's administrators (its creator, its
  organization's owners) get the digest and other agents nothing.
- **A customer's answer** e-mails the agent who last replied publicly in the thread, unless that
  agent chose ``none`` for the application or no longer works it.
- **The daily digest** covers the 24 hours before EARFUL_DIGEST_HOUR (UTC): counts by sentiment,
  the negative threads first, with links. No new thread, no digest. Every worker may run the
  round: a digest's Message-ID key names the agent, the application and the day, so the
  outbox keeps the first one queued and ignores the others.
- **An assignment** e-mails the assignee when their mode for the application is ``instant`` (not
  when they assigned the threads to themselves): one message per assignment, however many threads
  it assigned (a bulk assignment lists the first ones and counts the others).
- **An invitation** to join an organization goes to the invited address with its link (the only
  copy of the link that is sent; the token is stored as a digest).
- **The receipt** (per application, off by default) acknowledges a new thread in the language
  of its submit (en, es, pt), from the thread's own reply address, so the customer's answer
  threads back. It is never sent in answer to automatic mail (the mail intake drops that before
  a thread exists), and at most once an hour to an address: anyone can type someone else's
  address into a public widget, and receipts must not become a way to flood it.

Everything is queued in the outbox in the transaction of the change, so a relay that is down
loses nothing; nothing is queued when EARFUL_SMTP_URL is not set. Every message to an agent
carries an unsubscribe link (and RFC 8058's one-click headers) that sets the mode to ``none``.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, parseaddr

from app.config import Settings
from app.db import after_commit, transactional
from app.errors import NotFound, ValidationError
from app.i18n import N_, translate
from app.links import thread_path, unsubscribe_path
from app.models import NOTIFICATION_MODES
from app.repositories import applications, notifications, outbox, threads, webhooks
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.organizations import OrganizationRow
from app.repositories.replies import ReplyRow
from app.repositories.threads import ThreadRow
from app.repositories.webhooks import EndpointRow
from app.services.deletion import is_administrator
from app.services.deployment import current_settings
from app.services.mail import headers
from app.services.mail.addresses import outbound_message_id, reply_address, thread_message_id
from app.services.mail.outbox import wake_worker
from app.services.submissions import Submission

RECEIPT_INTERVAL = timedelta(hours=1)
DIGEST_LISTED = 10
EXCERPT = 280


# Settings ---------------------------------------------------------------------------------------


async def mode_of(user: UserRow, application: ApplicationRow) -> str:
    """The agent's mode for the application: their choice, else the default for their role."""
    chosen = await notifications.mode_of(user.id, application.id)
    if chosen is not None:
        return chosen
    return "digest" if await is_administrator(user, application) else "none"


def check_mode(value: object) -> str:
    if not isinstance(value, str) or value not in NOTIFICATION_MODES:
        raise ValidationError("The mode field must be instant, digest or none.")
    return value


async def set_mode(user: UserRow, application: ApplicationRow, value: object) -> str:
    """Record the agent's choice for the application (look the application up as the user)."""
    mode = check_mode(value)
    await transactional(notifications.set_mode)(user.id, application.id, mode, datetime.now(UTC))
    return mode


def unsubscribe_signature(user_id: int, application_id: int, secret_key: str) -> str:
    message = f"earful-unsubscribe:{user_id}:{application_id}".encode()
    return hmac.new(secret_key.encode(), message, hashlib.sha256).hexdigest()[:32]


def unsubscribe_url(settings: Settings, user_id: int, application_id: int) -> str:
    signature = unsubscribe_signature(user_id, application_id, settings.secret_key)
    return settings.base_url + unsubscribe_path(user_id, application_id, signature)


async def unsubscribe_target(
    user_id: int, application_id: int, signature: str, settings: Settings
) -> ApplicationRow:
    """The application an unsubscribe link is about; 'not valid' for a forged or stale link."""
    expected = unsubscribe_signature(user_id, application_id, settings.secret_key)
    application = await applications.application_by_id(application_id)
    if (
        application is None
        or not hmac.compare_digest(expected, signature)
        or not await notifications.works_application(user_id, application_id)
    ):
        raise NotFound("This unsubscribe link is not valid")
    return application


async def unsubscribe(
    user_id: int, application_id: int, signature: str, settings: Settings
) -> ApplicationRow:
    """Turn an agent's e-mails about an application off, from the link in one of them."""
    application = await unsubscribe_target(user_id, application_id, signature, settings)
    await transactional(notifications.set_mode)(user_id, application_id, "none", datetime.now(UTC))
    return application


# Composing --------------------------------------------------------------------------------------


def _excerpt(text: str, length: int = EXCERPT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= length else flat[: length - 1] + "…"


def _message(
    settings: Settings,
    key: str,
    to_name: str,
    to_address: str,
    subject: str,
    text: str,
    html_body: str,
    now: datetime,
) -> EmailMessage:
    """An e-mail with Earful's sender, a Message-ID from ``key``, and both bodies."""
    message = EmailMessage()
    sender_name, sender_address = parseaddr(settings.mail_sender)
    message["From"] = headers.mailbox(sender_name, sender_address)
    message["To"] = headers.mailbox(to_name, to_address)
    message["Subject"] = headers.header_text(subject, headers.SUBJECT_LIMIT)
    message["Date"] = format_datetime(now.astimezone(UTC))
    message["Message-ID"] = outbound_message_id(key, settings.intake_domain)
    message.set_content(text)
    message.add_alternative(f"<!doctype html>\n<html><body>\n{html_body}</body></html>\n", subtype="html")
    return message


def _to_agent(message: EmailMessage, settings: Settings, user: UserRow, application_id: int) -> EmailMessage:
    """The unsubscribe headers of RFC 2369 and RFC 8058 (one click turns the e-mails off)."""
    message["List-Unsubscribe"] = f"<{unsubscribe_url(settings, user.id, application_id)}>"
    message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message["Auto-Submitted"] = "auto-generated"
    return message


def _footer_text(settings: Settings, user: UserRow, application_id: int) -> str:
    return (
        "\n-- \nYou get this e-mail because of your notification settings in Earful.\n"
        f"Stop these e-mails: {unsubscribe_url(settings, user.id, application_id)}\n"
    )


def _footer_html(settings: Settings, user: UserRow, application_id: int) -> str:
    link = html.escape(unsubscribe_url(settings, user.id, application_id))
    return (
        '<p style="color:#666;font-size:12px">You get this e-mail because of your notification settings '
        f'in Earful. <a href="{link}">Stop these e-mails</a>.</p>\n'
    )


async def _queue(
    kind: str,
    message: EmailMessage,
    key: str,
    application_id: int | None,
    to_address: str,
    now: datetime,
    feedback_id: int | None = None,
    user_id: int | None = None,
) -> bool:
    queued = await outbox.queue_message(
        kind, application_id, to_address, key, message.as_string(), now, feedback_id, user_id
    )
    if queued:
        after_commit(wake_worker)
    return queued


def _key(kind: str) -> str:
    return f"{kind}-{secrets.token_hex(10)}"


# New threads ------------------------------------------------------------------------------------


async def threads_created(written: Sequence[ThreadRow], submissions: Sequence[Submission]) -> None:
    """Queue the instant notifications and the receipts of new threads, in their transaction."""
    settings = current_settings()
    if not settings.smtp_url or not written:
        return
    application_ids = sorted({thread.application_id for thread in written})
    recipients = await notifications.instant_recipients(application_ids)
    receipts = await notifications.receipt_applications(application_ids)
    if not recipients and not receipts:
        return
    now = datetime.now(UTC)
    receipted: set[str] = set()
    for thread, submission in zip(written, submissions, strict=True):
        for recipient in recipients:
            if recipient.application_id == thread.application_id:
                await _notify_new_thread(settings, recipient.user, thread, submission, now)
        name = receipts.get(thread.application_id)
        address = submission.email.lower()
        if name is not None and address not in receipted:
            receipted.add(address)
            await _queue_receipt(settings, name, thread, submission, now)


async def _notify_new_thread(
    settings: Settings, user: UserRow, thread: ThreadRow, submission: Submission, now: datetime
) -> None:
    sender = f"{submission.name} <{submission.email}>" if submission.name else submission.email
    first_line = submission.message.strip().splitlines()[0]
    await _notify_agent(
        settings, user, thread, f"New feedback ({thread.sentiment}) from {sender}:", submission.message,
        f"New {thread.sentiment} feedback: {first_line}", now,
    )  # fmt: skip


async def _notify_agent(
    settings: Settings,
    user: UserRow,
    thread: ThreadRow,
    headline: str,
    quoted: str,
    subject: str,
    now: datetime,
) -> None:
    """Queue an e-mail to an agent about a thread: a headline, the quoted text, a link to the
    thread and the unsubscribe footer (everything typed by others escaped in the HTML part)."""
    link = settings.base_url + thread_path(thread.application_id, thread.id)
    excerpt = _excerpt(quoted)
    text = f"{headline}\n\n{excerpt}\n\nOpen the thread: {link}\n" + _footer_text(
        settings, user, thread.application_id
    )
    page = (
        f"<p>{html.escape(headline)}</p>\n"
        f'<blockquote style="white-space:pre-wrap">{html.escape(excerpt)}</blockquote>\n'
        f'<p><a href="{html.escape(link)}">Open the thread</a></p>\n'
        + _footer_html(settings, user, thread.application_id)
    )
    key = _key("notify")
    message = _message(settings, key, user.name, user.email, subject, text, page, now)
    _to_agent(message, settings, user, thread.application_id)
    await _queue("notification", message, key, thread.application_id, user.email, now, thread.id, user.id)


RECEIPT_SUBJECT = N_("We received your feedback about %(application)s")
RECEIPT_TEXT = N_(
    "Thank you for writing to %(application)s. We received your message and a person will read it. "
    "If you answer this e-mail, your answer is added to the same conversation."
)
RECEIPT_QUOTE = N_("Your message:")


async def _queue_receipt(
    settings: Settings, application_name: str, thread: ThreadRow, submission: Submission, now: datetime
) -> None:
    """A receipt to the customer, unless one went to the address within the last hour."""
    address = submission.email
    if await outbox.sent_recently(address, "receipt", now - RECEIPT_INTERVAL):
        return
    language = submission.language
    name = " ".join(application_name.split())
    subject = translate(RECEIPT_SUBJECT, language, application=name)
    intro = translate(RECEIPT_TEXT, language, application=name)
    quote = translate(RECEIPT_QUOTE, language)
    excerpt = _excerpt(submission.message, 1000)
    key = _key("receipt")
    message = _message(
        settings, key, submission.name, address, subject,
        f"{intro}\n\n{quote}\n> {excerpt}\n",
        f"<p>{html.escape(intro)}</p>\n<p>{html.escape(quote)}</p>\n"
        f'<blockquote style="white-space:pre-wrap">{html.escape(excerpt)}</blockquote>\n',
        now,
    )  # fmt: skip
    # From the thread's reply address, so that an answer is appended to the thread.
    own_address = reply_address(thread.id, settings.secret_key, settings.intake_domain)
    message.replace_header("From", headers.mailbox(name, own_address))
    message["Reply-To"] = headers.mailbox(name, own_address)
    message["References"] = thread_message_id(thread.id, settings.intake_domain)
    message["Auto-Submitted"] = "auto-replied"  # RFC 3834: no auto-responder answers it
    message["Content-Language"] = language
    await _queue("receipt", message, key, thread.application_id, address, now, thread.id)


# Customer answers -------------------------------------------------------------------------------


async def customer_answered(application: ApplicationRow, thread: ThreadRow, reply: ReplyRow) -> None:
    """E-mail the agent who last replied in the thread about the customer's answer."""
    settings = current_settings()
    if not settings.smtp_url:
        return
    agent = await notifications.last_replying_agent(thread.id)
    if agent is None or await notifications.mode_of(agent.id, application.id) == "none":
        return
    if not await notifications.works_application(agent.id, application.id):
        return
    await _notify_agent(
        settings, agent, thread, f"{reply.email} answered in a thread you replied to:", reply.message,
        f"New answer from {reply.email}", datetime.now(UTC),
    )  # fmt: skip


# Assignments ------------------------------------------------------------------------------------

ASSIGNED_LISTED = 10


async def threads_assigned(
    application: ApplicationRow, assignee: UserRow, actor: UserRow | None, feedback_ids: Sequence[int]
) -> None:
    """E-mail the agent that threads were assigned to them, in the assignment's transaction, if
    their mode for the application is ``instant`` (the caller leaves out self-assignment).

    One thread: its sender and an excerpt, and the e-mail row names the thread, so deleting or
    erasing the thread takes the e-mail with it. Several (a bulk assignment): links only, so the
    message carries nothing of the customers that an erasure would have to find.
    """
    settings = current_settings()
    if not settings.smtp_url or not feedback_ids:
        return
    if await mode_of(assignee, application) != "instant":
        return
    now = datetime.now(UTC)
    name = " ".join(application.name.split())
    who = " ".join(actor.name.split()) if actor is not None else "Earful"
    if len(feedback_ids) == 1:
        [one] = await threads.threads_by_ids(list(feedback_ids))
        heading = f"{who} assigned you a thread in {name}"
        await _notify_agent(
            settings, assignee, one, f"{heading}. From {one.sender.email}:", one.message, heading, now
        )
        return
    count = len(feedback_ids)
    links = [settings.base_url + thread_path(application.id, i) for i in list(feedback_ids)[:ASSIGNED_LISTED]]
    more = count - len(links)
    body = "\n".join(f"- {link}" for link in links) + (f"\n\nand {more} more.\n" if more > 0 else "\n")
    body_html = (
        "<ul>\n"
        + "\n".join(f'<li><a href="{html.escape(link)}">{html.escape(link)}</a></li>' for link in links)
        + "\n</ul>\n"
        + (f"<p>and {more} more.</p>\n" if more > 0 else "")
    )
    key = _key("assigned")
    heading = f"{who} assigned you {count} threads in {name}"
    text = f"{heading}.\n\n{body}" + _footer_text(settings, assignee, application.id)
    page = f"<p>{html.escape(heading)}.</p>\n{body_html}" + _footer_html(settings, assignee, application.id)
    message = _message(settings, key, assignee.name, assignee.email, heading, text, page, now)
    _to_agent(message, settings, assignee, application.id)
    await _queue("notification", message, key, application.id, assignee.email, now, None, assignee.id)


# Digests ----------------------------------------------------------------------------------------


def digest_window(now: datetime, hour: int) -> tuple[datetime, datetime]:
    """The 24 hours the latest digest covers: up to the last ``hour`` o'clock (UTC) before now."""
    end = now.astimezone(UTC).replace(hour=hour, minute=0, second=0, microsecond=0)
    if end > now:
        end -= timedelta(days=1)
    return end - timedelta(days=1), end


async def send_digests(settings: Settings, now: datetime | None = None) -> int:
    """Queue the latest digest of every application for its recipients (each once, whichever
    worker runs first); how many were queued by this call."""
    if not settings.smtp_url:
        return 0
    moment = now or datetime.now(UTC)
    start, end = digest_window(moment, settings.digest_hour)
    queued = 0
    for application_id in await notifications.application_ids():
        queued += await _application_digest(settings, application_id, start, end, moment)
    return queued


async def _application_digest(
    settings: Settings, application_id: int, start: datetime, end: datetime, now: datetime
) -> int:
    counts = await notifications.sentiment_counts(application_id, start, end)
    if not counts:
        return 0
    recipients = await notifications.digest_recipients(application_id)
    if not recipients:
        return 0
    negative = await notifications.threads_between(application_id, start, end, DIGEST_LISTED, negative=True)
    others = await notifications.threads_between(
        application_id, start, end, DIGEST_LISTED - len(negative), negative=False
    ) if len(negative) < DIGEST_LISTED else []  # fmt: skip
    listed = [*negative, *others]
    return await _queue_digests(settings, application_id, recipients, counts, listed, end, now)


@transactional
async def _queue_digests(
    settings: Settings,
    application_id: int,
    recipients: Sequence[UserRow],
    counts: dict[str, int],
    listed: Sequence[ThreadRow],
    end: datetime,
    now: datetime,
) -> int:
    application = await applications.application_by_id(application_id)
    if application is None:
        return 0
    name = " ".join(application.name.split())
    total = sum(counts.values())
    day = (end - timedelta(days=1)).date().isoformat()
    summary = ", ".join(f"{counts.get(label, 0)} {label}" for label in ("negative", "neutral", "positive"))
    lines, items = [], []
    for thread in listed:
        link = settings.base_url + thread_path(application_id, thread.id)
        lines.append(
            f"- [{thread.sentiment}] {thread.sender.email}: {_excerpt(thread.message, 140)}\n  {link}"
        )
        items.append(
            f"<li><b>{html.escape(thread.sentiment)}</b> {html.escape(thread.sender.email)}: "
            f'{html.escape(_excerpt(thread.message, 140))} <a href="{html.escape(link)}">Open</a></li>'
        )
    more = total - len(listed)
    queued = 0
    for user in recipients:
        key = f"digest-{user.id}-{application_id}-{day.replace('-', '')}"
        text = (
            f"{name}: {total} new thread{'s' if total != 1 else ''} in the 24 hours before "
            f"{end:%Y-%m-%d %H:%M} UTC ({summary}).\n\n"
            + "\n".join(lines)
            + (f"\n\nand {more} more in the inbox." if more > 0 else "\n")
            + _footer_text(settings, user, application_id)
        )
        page = (
            f"<p><b>{html.escape(name)}</b>: {total} new thread{'s' if total != 1 else ''} in the 24 hours "
            f"before {end:%Y-%m-%d %H:%M} UTC ({html.escape(summary)}).</p>\n<ul>\n"
            + "\n".join(items)
            + "\n</ul>\n"
            + (f"<p>and {more} more in the inbox.</p>\n" if more > 0 else "")
            + _footer_html(settings, user, application_id)
        )
        subject = f"Daily digest for {name}: {total} new ({counts.get('negative', 0)} negative)"
        message = _message(settings, key, user.name, user.email, subject, text, page, now)
        _to_agent(message, settings, user, application_id)
        queued += await _queue("digest", message, key, application_id, user.email, now, None, user.id)
    return queued


# Notices ----------------------------------------------------------------------------------------


async def queue_endpoint_disabled(endpoint: EndpointRow, settings: Settings, now: datetime) -> None:
    """Tell the administrators of a webhook endpoint that it was disabled (in the transaction
    that disabled it)."""
    if not settings.smtp_url:
        return
    for user in await webhooks.endpoint_administrators(endpoint):
        key = _key("notice")
        text = (
            f"Earful disabled the webhook endpoint {endpoint.url} after five days in which every delivery "
            "failed. Deliveries that were waiting were given up.\n\nFix the receiver, then enable the "
            f"endpoint again on its page: {settings.base_url}/app/\n"
        )
        page = (
            "<p>Earful disabled the webhook endpoint "
            f"<code>{html.escape(endpoint.url)}</code> after five days in which every delivery failed. "
            "Deliveries that were waiting were given up.</p>\n"
            "<p>Fix the receiver, then enable the endpoint again on its page.</p>\n"
        )
        message = _message(
            settings, key, user.name, user.email, "A webhook endpoint was disabled", text, page, now
        )
        message["Auto-Submitted"] = "auto-generated"
        await _queue("notice", message, key, endpoint.application_id, user.email, now, None, user.id)


# Invitations ------------------------------------------------------------------------------------


async def queue_invitation(
    organization: OrganizationRow,
    inviter: UserRow,
    email: str,
    role: str,
    link: str,
    expires_at: datetime,
    now: datetime,
) -> bool:
    """E-mail an invitation's link to the invited address, in the invitation's transaction;
    False when e-mail does not go out (the owner copies the link instead)."""
    settings = current_settings()
    if not settings.smtp_url:
        return False
    name = " ".join(organization.name.split())
    who = " ".join(inviter.name.split()) or inviter.email
    article = "an owner" if role == "owner" else "an agent"
    until = f"{expires_at.astimezone(UTC):%d %b %Y %H:%M} UTC"
    key = _key("invitation")
    text = (
        f"{who} ({inviter.email}) invited you to join {name} on Earful as {article}, to answer the "
        f"feedback of its applications together.\n\nAccept the invitation: {link}\n\n"
        f"The link works once, until {until}. If you did not expect it, ignore this e-mail.\n"
    )
    page = (
        f"<p>{html.escape(who)} ({html.escape(inviter.email)}) invited you to join "
        f"<b>{html.escape(name)}</b> on Earful as {article}, to answer the feedback of its "
        "applications together.</p>\n"
        f'<p><a href="{html.escape(link)}">Accept the invitation</a></p>\n'
        f'<p style="color:#666;font-size:12px">The link works once, until {html.escape(until)}. '
        "If you did not expect it, ignore this e-mail.</p>\n"
    )
    subject = f"{who} invited you to {name} on Earful"
    message = _message(settings, key, "", email, subject, text, page, now)
    message["Auto-Submitted"] = "auto-generated"
    return await _queue("invitation", message, key, None, email, now)
