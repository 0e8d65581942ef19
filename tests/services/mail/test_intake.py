"""Mail in through ``earful smtp``: intake addresses become threads, the customer's answer to a
reply e-mail comes back into its thread, anything else (forged addresses included) is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import aiosmtplib
import pytest

from app.db import atomic
from app.models import Application, Attachment, Feedback, InboundEmail, Reply
from app.services.mail.addresses import reply_address
from app.services.mail.outbox import deliver_due
from tests.conftest import INTAKE_DOMAIN
from tests.factories import application_row, body_json, make_reply, make_thread, thread_row
from tests.mail_fixtures import make_mail, smtp_send

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
    refreshed = await application_row(application.id)
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


# The customer's answers -----------------------------------------------------------------------


async def mailed_reply(api, token, application, thread, mail_settings, relay):
    """Post an agent reply through the management API and deliver it to the relay."""
    response = await api.post(
        f"/applications/{application.id}/feedback/{thread.id}/replies",
        token,
        json={"message": "Fixed, thanks!"},
    )
    assert response.status_code == 200
    assert await deliver_due(mail_settings) == 1
    return relay.messages[-1]


def answer_to(mailed, text: str, **extra) -> object:
    """The customer's answer, as a mail client writes it: to Reply-To, quoting the reply."""
    quoted = "\n".join(f"> {line}" for line in mailed.get_body(("plain",)).get_content().splitlines())
    answer = make_mail(
        mailed["Reply-To"],
        f"{text}\n\nOn Tue, 4 Mar 2025, Acme Support <support@earful.test> wrote:\n{quoted}\n",
        subject=f"Re: {mailed['Subject']}",
        message_id=extra.pop("message_id", "<answer-1@example.org>"),
        headers={"In-Reply-To": mailed["Message-ID"], "References": mailed["Message-ID"]},
    )
    return answer


async def show(api, token, application, thread) -> dict:
    response = await api.get(f"/applications/{application.id}/feedback/{thread.id}", token)
    return (await body_json(response))["data"]


async def test_the_answer_to_a_reply_mail_is_appended_to_the_thread(
    api, token, application, mail_settings, relay, receiver
):
    thread = await make_thread(application, email="jo@example.org", message="Export fails on Firefox.")
    mailed = await mailed_reply(api, token, application, thread, mail_settings, relay)
    an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
    await atomic(lambda: Feedback.filter(id=thread.id).update(last_reply_at=an_hour_ago))

    await smtp_send(receiver, answer_to(mailed, "It works now, thank you!"))

    shown = await show(api, token, application, thread)
    agent_reply, answer = shown["replies"]
    assert agent_reply["reply_from_agent"] is True
    assert answer["message"] == "It works now, thank you!"
    assert (answer["reply_from_agent"], answer["user"], answer["email"]) == (False, None, "jo@example.org")
    assert answer["type"] == "reply"
    assert shown["last_reply_time"] == answer["created_at"] > int(an_hour_ago.timestamp())
    assert (await Application.get(id=application.id)).reply_count == 2


async def test_an_answer_unarchives_an_archived_thread(
    api, token, application, mail_settings, relay, receiver
):
    thread = await make_thread(application, tags="billing")
    mailed = await mailed_reply(api, token, application, thread, mail_settings, relay)
    response = await api.patch(
        f"/applications/{application.id}/feedback/{thread.id}", token, json={"archived": True}
    )
    assert (await body_json(response))["data"]["archived"] is True

    await smtp_send(receiver, answer_to(mailed, "Sorry, one more question about the invoice."))

    assert (await show(api, token, application, thread))["archived"] is False
    refreshed = await Application.get(id=application.id)
    assert (refreshed.open_threads, refreshed.archived_threads) == (1, 0)
    tags = (await body_json(await api.get(f"/applications/{application.id}/tags", token)))["data"]
    assert [(t["name"], t["feedback_count"], t["archived_feedback_count"]) for t in tags] == [
        ("billing", 1, 0)
    ]


async def test_the_next_reply_mail_answers_the_customers_mail(
    api, token, application, agent, mail_settings, relay, receiver
):
    thread = await make_thread(application)
    mailed = await mailed_reply(api, token, application, thread, mail_settings, relay)
    await smtp_send(receiver, answer_to(mailed, "Still broken here.", message_id="<still@example.org>"))
    await make_reply(agent, application, thread, "Looking again.")

    # The agent is told of the customer's answer; the customer gets the reply.
    assert await deliver_due(mail_settings) == 2
    [second] = [
        message for message in relay.messages[1:] if message["To"].addresses[0].addr_spec != agent.email
    ]
    assert second["In-Reply-To"] == "<still@example.org>"
    assert second["References"] == f"<thread-{thread.id}@{INTAKE_DOMAIN}> <still@example.org>"


async def test_a_reply_to_a_thread_that_came_by_mail_references_the_original(
    agent, application, intake, mail_settings, relay, receiver
):
    await smtp_send(receiver, make_mail(intake, "The app logs me out.", message_id="<original@example.org>"))
    thread = await thread_row((await Feedback.get(application_id=application.id)).id)
    await make_reply(agent, application, thread, "Which version?")

    assert await deliver_due(mail_settings) == 1
    [mailed] = relay.messages
    assert mailed["Subject"] == "Re: Checkout is broken"
    assert mailed["In-Reply-To"] == mailed["References"] == "<original@example.org>"


async def test_attachments_of_an_answer_are_kept_on_the_reply(
    api, token, application, mail_settings, relay, receiver
):
    thread = await make_thread(application)
    mailed = await mailed_reply(api, token, application, thread, mail_settings, relay)
    answer = answer_to(mailed, "Here is a screenshot.")
    answer.add_attachment(PNG, maintype="image", subtype="png", filename="shot.png")
    await smtp_send(receiver, answer)

    answer_json = (await show(api, token, application, thread))["replies"][-1]
    assert [(a["name"], a["size"]) for a in answer_json["attachments"]] == [("shot.png", len(PNG))]


async def test_a_forged_reply_address_is_refused(application, receiver, mail_settings):
    thread = await make_thread(application)
    genuine = reply_address(thread.id, mail_settings.secret_key, INTAKE_DOMAIN)
    other = await make_thread(application)
    signature = genuine.split("@")[0].split(".", 1)[1]
    forged = [
        f"reply+{other.id}.{signature}@{INTAKE_DOMAIN}",  # someone else's thread, a known signature
        f"reply+{thread.id}.{'0' * 20}@{INTAKE_DOMAIN}",
        reply_address(thread.id, "another-secret", INTAKE_DOMAIN),
        f"reply+{thread.id}@{INTAKE_DOMAIN}",
    ]
    for address in forged:
        with pytest.raises(aiosmtplib.SMTPRecipientsRefused) as refused:
            await smtp_send(receiver, make_mail(address, "Let me in."))
        assert refused.value.recipients[0].code == 550
    assert await Reply.all().count() == 0


async def test_a_redelivered_answer_is_appended_once(api, token, application, mail_settings, relay, receiver):
    thread = await make_thread(application)
    mailed = await mailed_reply(api, token, application, thread, mail_settings, relay)
    answer = answer_to(mailed, "Thanks!")
    await smtp_send(receiver, answer)
    await smtp_send(receiver, answer)

    assert await Reply.filter(feedback_id=thread.id, from_agent=False).count() == 1
    assert await InboundEmail.filter(feedback_id=thread.id).count() == 1
    assert (await Application.get(id=application.id)).reply_count == 2
