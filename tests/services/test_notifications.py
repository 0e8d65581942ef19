"""Agents' notifications and digests, the customer's receipt, through the outbox to a relay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.errors import NotFound, ValidationError
from app.models import OutboundEmail
from app.services import notifications
from app.services.mail.addresses import reply_address
from app.services.mail.outbox import deliver_due
from app.services.notifications import digest_window, send_digests, unsubscribe, unsubscribe_signature
from tests.factories import (
    make_application,
    make_customer_reply,
    make_organization,
    make_reply,
    make_thread,
    make_user,
    thread_row,
)


def addressed_to(messages, address):
    return [message for message in messages if message["To"].addresses[0].addr_spec == address]


async def digest_moment() -> datetime:
    """A moment whose digest covers the threads made just now."""
    return datetime.now(UTC) + timedelta(days=1)


async def test_an_agent_who_chose_instant_gets_an_e_mail_for_every_new_thread(
    agent, application, mail_settings, relay
):
    await notifications.set_mode(agent, application, "instant")

    thread = await make_thread(
        application, name="Jane", email="jane@example.org", message="Checkout fails <b>"
    )
    assert await deliver_due(mail_settings) == 1

    [message] = relay.messages
    assert message["To"].addresses[0].addr_spec == agent.email
    assert message["Subject"].startswith(f"New {thread.sentiment} feedback: Checkout fails")
    text = message.get_body(("plain",)).get_content()
    assert "Jane <jane@example.org>" in text
    assert f"{mail_settings.base_url}/app/applications/{application.id}/feedback/{thread.id}" in text
    html = message.get_body(("html",)).get_content()
    assert "Checkout fails &lt;b&gt;" in html
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "/app/notifications/unsubscribe/" in message["List-Unsubscribe"]
    assert "Stop these e-mails" in text


async def test_without_a_choice_an_agent_gets_no_instant_e_mail(agent, application, mail_settings, relay):
    await make_thread(application)

    assert await deliver_due(mail_settings) == 0


async def test_nothing_is_queued_when_e_mail_is_not_configured(agent, application, settings):
    await notifications.set_mode(agent, application, "instant")

    await make_thread(application)

    assert await OutboundEmail.all().count() == 0


async def test_the_modes_default_to_the_digest_for_administrators_only(mail_settings):
    owner, member = await make_user(), await make_user()
    organization = await make_organization(member, owners=(owner,))
    application = await make_application(owner, organization_id=str(organization.id))

    assert await notifications.mode_of(owner, application) == "digest"
    assert await notifications.mode_of(member, application) == "none"
    with pytest.raises(ValidationError, match="instant, digest or none"):
        await notifications.set_mode(member, application, "hourly")


async def test_the_daily_digest_counts_by_sentiment_and_lists_negative_threads_first(
    agent, application, mail_settings, relay
):
    await make_thread(application, message="I love it, wonderful!", sentiment="positive")
    angry = await make_thread(application, message="Terrible, the export crashes.", sentiment="negative")
    await make_thread(application, message="Where is the button?", sentiment="neutral")

    moment = await digest_moment()
    assert await send_digests(mail_settings, moment) == 1
    await deliver_due(mail_settings, moment)

    [digest] = relay.messages
    assert digest["To"].addresses[0].addr_spec == agent.email  # the application's creator, by default
    assert digest["Subject"] == f"Daily digest for {application.name}: 3 new (1 negative)"
    text = digest.get_body(("plain",)).get_content()
    assert "(1 negative, 1 neutral, 1 positive)" in text
    lines = [line for line in text.splitlines() if line.startswith("- [")]
    assert lines[0].startswith("- [negative]")
    assert f"/feedback/{angry.id}" in text
    assert digest["List-Unsubscribe"] is not None


async def test_a_digest_is_queued_once_whichever_worker_runs_first(agent, application, mail_settings):
    await make_thread(application)
    moment = await digest_moment()

    assert await send_digests(mail_settings, moment) == 1
    assert await send_digests(mail_settings, moment + timedelta(minutes=10)) == 0


async def test_no_new_thread_no_digest(agent, application, mail_settings):
    assert await send_digests(mail_settings, await digest_moment()) == 0


async def test_an_agent_who_chose_nothing_gets_no_digest(agent, application, mail_settings):
    await notifications.set_mode(agent, application, "none")
    await make_thread(application)

    assert await send_digests(mail_settings, await digest_moment()) == 0


def test_the_digest_covers_the_24_hours_before_its_hour():
    start, end = digest_window(datetime(2026, 11, 26, 6, 59, tzinfo=UTC), 7)
    assert (start, end) == (datetime(2026, 11, 24, 7, tzinfo=UTC), datetime(2026, 11, 25, 7, tzinfo=UTC))
    start, end = digest_window(datetime(2026, 11, 26, 7, 0, tzinfo=UTC), 7)
    assert end == datetime(2026, 11, 26, 7, tzinfo=UTC)


async def test_a_receipt_in_spanish_comes_from_the_threads_reply_address(mail_settings, relay):
    owner = await make_user()
    application = await make_application(owner, name="Tienda", receipts_enabled="true")

    thread = await make_thread(
        application, email="ana@example.org", name="Ana", message="No puedo pagar con tarjeta.", language="es"
    )
    await deliver_due(mail_settings)

    [receipt] = addressed_to(relay.messages, "ana@example.org")
    assert receipt["Subject"] == "Recibimos tus comentarios sobre Tienda"
    own = reply_address(thread.id, mail_settings.secret_key, mail_settings.intake_domain)
    assert receipt["From"].addresses[0].addr_spec == own
    assert receipt["Reply-To"].addresses[0].addr_spec == own
    assert receipt["Auto-Submitted"] == "auto-replied"
    text = receipt.get_body(("plain",)).get_content()
    assert text.startswith("Gracias por escribir a Tienda.")
    assert "> No puedo pagar con tarjeta." in text


async def test_an_address_gets_at_most_one_receipt_an_hour(mail_settings):
    owner = await make_user()
    application = await make_application(owner, receipts_enabled="true")

    await make_thread(application, email="ana@example.org")
    await make_thread(application, email="ANA@example.org")

    assert await OutboundEmail.filter(kind="receipt").count() == 1


async def test_receipts_are_off_by_default(agent, application, mail_settings):
    await make_thread(application)

    assert await OutboundEmail.filter(kind="receipt").count() == 0


async def test_a_customers_answer_notifies_the_agent_who_last_replied(
    agent, application, mail_settings, relay
):
    thread = await make_thread(application, email="jane@example.org")
    await make_reply(agent, application, thread, "Which browser?")

    await make_customer_reply(application, await thread_row(thread.id), "jane@example.org", "Firefox 130.")
    await deliver_due(mail_settings)

    [notice] = addressed_to(relay.messages, agent.email)
    assert notice["Subject"] == "New answer from jane@example.org"
    assert "Firefox 130." in notice.get_body(("plain",)).get_content()


async def test_an_agent_who_chose_nothing_is_not_told_of_answers(agent, application, mail_settings):
    thread = await make_thread(application, email="jane@example.org")
    await make_reply(agent, application, thread, "Which browser?")
    await notifications.set_mode(agent, application, "none")

    await make_customer_reply(application, await thread_row(thread.id), "jane@example.org", "Firefox 130.")

    assert await OutboundEmail.filter(kind="notification").count() == 0


async def test_the_unsubscribe_link_turns_the_e_mails_off(agent, application, mail_settings):
    await notifications.set_mode(agent, application, "instant")
    signature = unsubscribe_signature(agent.id, application.id, mail_settings.secret_key)

    await unsubscribe(agent.id, application.id, signature, mail_settings)

    assert await notifications.mode_of(agent, application) == "none"


async def test_a_forged_unsubscribe_link_changes_nothing(agent, application, mail_settings):
    await notifications.set_mode(agent, application, "instant")
    other = await make_user()

    with pytest.raises(NotFound):
        await unsubscribe(agent.id, application.id, "0" * 32, mail_settings)
    with pytest.raises(NotFound):  # a valid signature, for someone who does not work the application
        signature = unsubscribe_signature(other.id, application.id, mail_settings.secret_key)
        await unsubscribe(other.id, application.id, signature, mail_settings)
    assert await notifications.mode_of(agent, application) == "instant"
