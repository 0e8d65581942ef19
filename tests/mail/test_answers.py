"""The customer's answer to a reply e-mail comes back into its thread; forged addresses do not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import aiosmtplib
import pytest

from app.models import Application, Feedback, InboundEmail, Reply
from app.services.mail.addresses import reply_address
from app.services.mail.outbox import deliver_due
from tests.conftest import INTAKE_DOMAIN
from tests.factories import body_json, make_reply, make_thread
from tests.mail.conftest import make_mail, smtp_send

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


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
    await Feedback.filter(id=thread.id).update(last_reply_at=an_hour_ago)

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

    assert await deliver_due(mail_settings) == 1
    second = relay.messages[-1]
    assert second["In-Reply-To"] == "<still@example.org>"
    assert second["References"] == f"<thread-{thread.id}@{INTAKE_DOMAIN}> <still@example.org>"


async def test_a_reply_to_a_thread_that_came_by_mail_references_the_original(
    agent, application, intake, mail_settings, relay, receiver
):
    await smtp_send(receiver, make_mail(intake, "The app logs me out.", message_id="<original@example.org>"))
    thread = await Feedback.get(application_id=application.id)
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
