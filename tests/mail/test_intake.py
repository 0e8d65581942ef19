"""Mail in through ``earful smtp``: intake addresses become threads, anything else is refused."""

from __future__ import annotations

import aiosmtplib
import pytest

from app.models import Attachment, Feedback, InboundEmail
from tests.conftest import INTAKE_DOMAIN
from tests.factories import body_json
from tests.mail.conftest import make_mail, smtp_send

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


async def only_thread(api, token, application) -> dict:
    response = await api.get(f"/applications/{application.id}/feedback", token)
    threads = (await body_json(response))["data"]
    assert len(threads) == 1, threads
    return threads[0]


async def test_mail_to_the_intake_address_becomes_a_thread(receiver, intake, api, token, application):
    text = (
        "The export button does nothing on Firefox.\n"
        "\n"
        "On Mon, 3 Mar 2025 at 10:00, Acme <support@acme.test> wrote:\n"
        "> How can we help?\n"
        "\n"
        "-- \n"
        "Jo, Example Org\n"
    )
    await smtp_send(receiver, make_mail(intake, text, subject="Export broken"))

    thread = await only_thread(api, token, application)
    assert thread["message"] == "Export broken\n\nThe export button does nothing on Firefox."
    assert (thread["email"], thread["name"]) == ("jo@example.org", "Jo Customer")
    assert thread["sentiment"] in ("positive", "neutral", "negative")
    assert thread["replies"] == []
    refreshed = await application.__class__.get(id=application.id)
    assert refreshed.open_threads == 1


async def test_attachments_are_stored_with_the_thread(receiver, intake, api, token, application):
    message = make_mail(intake, "Screenshot attached, the total is wrong.")
    message.add_attachment(PNG, maintype="image", subtype="png", filename="total.png")
    message.add_attachment(b"a,b\n1,2\n", maintype="text", subtype="csv", filename="cart.csv")
    await smtp_send(receiver, message)

    thread = await only_thread(api, token, application)
    files = {(a["name"], a["mime_type"], a["size"]) for a in thread["attachments"]}
    assert files == {("total.png", "image/png", len(PNG)), ("cart.csv", "text/csv", 8)}
    assert thread["message"].endswith("Screenshot attached, the total is wrong.")


async def test_attachments_over_the_size_limit_are_left_out_and_named(
    receiver, intake, mail_settings, api, token, application
):
    message = make_mail(intake, "Here is the log.")
    message.add_attachment(
        b"x" * (mail_settings.max_upload_bytes + 1), maintype="text", subtype="plain", filename="huge.log"
    )
    await smtp_send(receiver, message)

    thread = await only_thread(api, token, application)
    assert thread["attachments"] == []
    assert "[Attachments not kept: huge.log (too large)]" in thread["message"]
    assert await Attachment.all().count() == 0


async def test_html_only_mail_is_turned_into_text_without_the_quoted_part(
    receiver, intake, api, token, application
):
    html = (
        "<html><head><style>p {color: red}</style></head><body>"
        "<p>Hello,</p><p>The <b>search</b> returns nothing &amp; the page is blank.</p>"
        "<ul><li>Firefox</li><li>Linux</li></ul>"
        '<div class="gmail_quote"><div>On Monday Acme wrote:</div>'
        "<blockquote>Thanks for your order</blockquote></div>"
        "</body></html>"
    )
    await smtp_send(receiver, make_mail(intake, None, subject="Search", html=html))

    thread = await only_thread(api, token, application)
    assert thread["message"] == (
        "Search\n\nHello,\n\nThe search returns nothing & the page is blank.\n\n- Firefox\n- Linux"
    )


async def test_plain_text_is_preferred_over_html(receiver, intake, api, token, application):
    message = make_mail(intake, "Plain words here.", subject="", html="<p>HTML words here.</p>")
    await smtp_send(receiver, message)

    thread = await only_thread(api, token, application)
    assert thread["message"] == "Plain words here."


async def test_unknown_recipient_is_refused_at_rcpt(receiver, intake, application):
    wrong_token = intake.replace(f"-{application.intake_token}@", "-000000000000@")
    for address in (f"nobody@{INTAKE_DOMAIN}", wrong_token, intake.replace(INTAKE_DOMAIN, "other.test")):
        with pytest.raises(aiosmtplib.SMTPRecipientsRefused) as refused:
            await smtp_send(receiver, make_mail(address))
        assert refused.value.recipients[0].code == 550
        assert "5.1.1" in refused.value.recipients[0].message
    assert await Feedback.all().count() == 0


async def test_a_redelivered_message_makes_one_thread(receiver, intake, application):
    message = make_mail(intake, message_id="<same-message@example.org>")
    await smtp_send(receiver, message)
    await smtp_send(receiver, message)

    assert await Feedback.filter(application_id=application.id).count() == 1
    assert await InboundEmail.all().count() == 1


async def test_automatic_replies_are_accepted_and_dropped(receiver, intake, application):
    await smtp_send(
        receiver, make_mail(intake, "I am out of office.", headers={"Auto-Submitted": "auto-replied"})
    )

    assert await Feedback.all().count() == 0


async def test_mail_without_text_is_refused_at_data(receiver, intake, application):
    with pytest.raises(aiosmtplib.SMTPDataError) as refused:
        await smtp_send(receiver, make_mail(intake, "> only a quote\n", subject=""))
    assert refused.value.code == 554
    assert await Feedback.all().count() == 0
