"""Mail from a sender on the application's blocklist is accepted as any mail is, and dropped."""

from __future__ import annotations

from app.models import Feedback, Reply
from app.services.mail.addresses import reply_address
from app.services.mail.intake import receive_mail
from tests.conftest import INTAKE_DOMAIN
from tests.factories import block, make_thread
from tests.mail_fixtures import make_mail, smtp_send


async def test_mail_from_a_blocked_domain_is_accepted_and_makes_no_thread(application, intake, settings):
    await block(application, "spam.example")
    delivered = await receive_mail(
        bytes(make_mail(intake, sender="Bot <bot@mail.spam.example>")), [intake], settings
    )
    assert [d.outcome for d in delivered] == ["ignored"]
    assert not await Feedback.filter(application_id=application.id).exists()


async def test_mail_from_a_blocked_address_over_smtp_is_accepted_while_others_are_kept(
    application, intake, receiver
):
    await block(application, "Bot@Spam.example")
    await smtp_send(receiver, make_mail(intake, sender="Bot <bot@spam.example>"))  # no SMTP error
    await smtp_send(receiver, make_mail(intake, sender="Jo <jo@example.org>"))
    emails = await Feedback.filter(application_id=application.id).values_list("member__email", flat=True)
    assert emails == ["jo@example.org"]


async def test_an_answer_from_a_blocked_address_adds_no_reply(application, settings):
    thread = await make_thread(application, email="bot@spam.example")
    await block(application, "bot@spam.example")
    address = reply_address(thread.id, settings.secret_key, INTAKE_DOMAIN)
    delivered = await receive_mail(
        bytes(make_mail(address, "Buy now!", sender="bot@spam.example")), [address], settings
    )
    assert [d.outcome for d in delivered] == ["ignored"]
    assert not await Reply.filter(feedback_id=thread.id).exists()
