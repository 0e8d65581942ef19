"""Public replies go out by e-mail through the outbox: headers, parts, retries, exactly once."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

from app import create_app
from app.db import atomic
from app.models import OutboundEmail
from app.services.mail import outbox
from app.services.mail.outbox import deliver_due, delivery_status_of_replies
from tests.conftest import INTAKE_DOMAIN
from tests.factories import make_application, make_reply, make_thread, make_user


def replies_path(application, thread) -> str:
    return f"/applications/{application.id}/feedback/{thread.id}/replies"


def later(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


async def test_agent_reply_is_mailed_with_threading_headers_and_both_parts(
    api, token, application, mail_settings, relay
):
    thread = await make_thread(
        application, email="jo@example.org", name="Jo Customer", message="Export fails <always>.\nSecond line"
    )
    response = await api.post(
        replies_path(application, thread),
        token,
        json={"message": "We fixed it: try again <today> & tell us."},
    )
    assert response.status_code == 200

    assert await deliver_due(mail_settings) == 1
    [message] = relay.messages
    [envelope] = relay.envelopes
    row = await OutboundEmail.get(feedback_id=thread.id)
    signature = hmac.new(b"test-secret-key", f"earful-reply:{thread.id}".encode(), hashlib.sha256)
    assert envelope.mail_from == "support@earful.test"
    assert envelope.rcpt_tos == ["jo@example.org"]
    assert message["From"] == "Acme Support <support@earful.test>"
    assert message["To"] == "Jo Customer <jo@example.org>"
    assert message["Reply-To"] == f"reply+{thread.id}.{signature.hexdigest()[:20]}@{INTAKE_DOMAIN}"
    assert message["Subject"] == "Re: Export fails <always>."
    assert message["Message-ID"] == f"<{row.message_id}@{INTAKE_DOMAIN}>"
    assert message["In-Reply-To"] == f"<thread-{thread.id}@{INTAKE_DOMAIN}>"
    assert message["References"] == f"<thread-{thread.id}@{INTAKE_DOMAIN}>"
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert text.startswith("We fixed it: try again <today> & tell us.\n")
    assert "> Export fails <always>." in text
    assert "We fixed it: try again &lt;today&gt; &amp; tell us." in html
    assert "<today>" not in html and "<always>" not in html
    assert (row.status, row.attempts, row.sent_at is not None) == ("sent", 1, True)


async def test_notes_are_never_mailed(mail_settings, relay):
    agent = await make_user(plan="team")
    application = await make_application(agent)
    thread = await make_thread(application)
    note = await make_reply(agent, application, thread, "Refund issued", type="note")

    assert await OutboundEmail.all().count() == 0
    assert await deliver_due(mail_settings, later(3600)) == 0
    assert relay.envelopes == []
    assert await delivery_status_of_replies([note.id]) == {}


async def test_relay_down_for_a_while_then_delivered_exactly_once(agent, application, mail_settings, relay):
    thread = await make_thread(application)
    reply = await make_reply(agent, application, thread)
    await relay.stop()
    start = datetime.now(UTC)

    assert await deliver_due(mail_settings, start) == 0  # connection refused: retry in 30 s
    row = await OutboundEmail.get(reply_id=reply.id)
    assert (row.status, row.attempts) == ("pending", 1)
    assert row.next_attempt_at == start + timedelta(seconds=30)
    assert "Connect" in row.last_error
    assert await deliver_due(mail_settings, start + timedelta(seconds=10)) == 0  # not due yet
    assert (await OutboundEmail.get(id=row.id)).attempts == 1
    assert await deliver_due(mail_settings, start + timedelta(seconds=31)) == 0  # still down: 60 s
    row = await OutboundEmail.get(id=row.id)
    assert (row.attempts, row.next_attempt_at) == (2, start + timedelta(seconds=91))
    assert await delivery_status_of_replies([reply.id]) == {reply.id: "pending"}

    await relay.start()
    assert await deliver_due(mail_settings, start + timedelta(seconds=60)) == 0  # backing off
    assert relay.envelopes == []
    assert await deliver_due(mail_settings, start + timedelta(seconds=92)) == 1
    for minutes in (5, 60, 600):
        assert await deliver_due(mail_settings, start + timedelta(minutes=minutes)) == 0

    assert len(relay.envelopes) == 1
    row = await OutboundEmail.get(id=row.id)
    assert (row.status, row.attempts, row.last_error) == ("sent", 3, "")
    assert await delivery_status_of_replies([reply.id]) == {reply.id: "sent"}


async def test_two_workers_at_once_send_a_reply_once(agent, application, mail_settings, relay):
    thread = await make_thread(application)
    for number in range(3):
        await make_reply(agent, application, thread, f"Answer {number}")

    sent = await asyncio.gather(*(deliver_due(mail_settings) for _ in range(3)))

    assert sum(sent) == 3
    assert sorted(m.get_body(("plain",)).get_content().split("\n")[0] for m in relay.messages) == [
        "Answer 0",
        "Answer 1",
        "Answer 2",
    ]


async def test_a_row_being_sent_elsewhere_waits_for_its_lease_then_keeps_its_message_id(
    agent, application, mail_settings, relay
):
    thread = await make_thread(application)
    reply = await make_reply(agent, application, thread)
    row = await OutboundEmail.get(reply_id=reply.id)
    now = datetime.now(UTC)
    # A worker claimed the row and died before marking it (it may or may not have sent it).
    await atomic(
        lambda: OutboundEmail.filter(id=row.id).update(
            status="sending", attempts=1, next_attempt_at=now + outbox.LEASE
        )
    )

    assert await deliver_due(mail_settings, now + timedelta(minutes=1)) == 0
    assert relay.envelopes == []
    assert await deliver_due(mail_settings, now + outbox.LEASE + timedelta(seconds=1)) == 1
    [message] = relay.messages
    assert message["Message-ID"] == f"<{row.message_id}@{INTAKE_DOMAIN}>"
    assert (await OutboundEmail.get(id=row.id)).status == "sent"


async def test_a_refused_recipient_fails_at_once_and_shows_as_failed(
    agent, application, mail_settings, relay
):
    async def refuse(server, session, envelope, address, options):
        return "550 5.1.1 No such user"

    relay.handle_RCPT = refuse
    thread = await make_thread(application)
    reply = await make_reply(agent, application, thread)

    assert await deliver_due(mail_settings) == 0
    row = await OutboundEmail.get(reply_id=reply.id)
    assert row.status == "failed"
    assert "550" in row.last_error
    assert await delivery_status_of_replies([reply.id]) == {reply.id: "failed"}
    assert await deliver_due(mail_settings, later(86400)) == 0


async def test_delivery_gives_up_after_two_days(agent, application, mail_settings, relay):
    thread = await make_thread(application)
    reply = await make_reply(agent, application, thread)
    await relay.stop()
    row = await OutboundEmail.get(reply_id=reply.id)

    await deliver_due(mail_settings, row.created_at)
    assert (await OutboundEmail.get(id=row.id)).status == "pending"
    await deliver_due(mail_settings, row.created_at + outbox.GIVE_UP_AFTER + timedelta(seconds=1))
    row = await OutboundEmail.get(id=row.id)
    assert row.status == "failed"
    assert row.last_error


async def test_backoff_doubles_up_to_an_hour():
    assert [outbox.backoff(n).total_seconds() for n in (1, 2, 3, 8, 20)] == [30, 60, 120, 3600, 3600]


async def test_the_web_server_runs_the_worker_when_smtp_is_configured(
    mail_settings, relay, agent, token, application
):
    thread = await make_thread(application)
    web = create_app(dataclasses.replace(mail_settings), manage_db=False)
    async with web.test_app():
        client = web.test_client()
        response = await client.post(
            replies_path(application, thread),
            headers={"Authorization": f"Bearer {token}"},
            json={"message": "On its way."},
        )
        assert response.status_code == 200
        for _ in range(100):
            if relay.envelopes:
                break
            await asyncio.sleep(0.05)
    assert len(relay.envelopes) == 1
    assert (await OutboundEmail.get(feedback_id=thread.id)).status == "sent"
