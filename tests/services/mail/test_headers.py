"""Feedback text never becomes a header line of the e-mails Earful sends (CVE-2024-6923 and
RFC 2047 encoded words): the exact payload of the security review, end to end."""

from __future__ import annotations

import base64

from app.models import OutboundEmail
from app.services.mail import headers
from app.services.mail.outbox import deliver_due
from tests.factories import make_reply, make_thread

PAYLOAD = "x\r\nX-Injected: yes\r\nContent-Type: text/html\r\n\r\n<a href=//evil.test>Reset</a>"


def encoded_word(text: str) -> str:
    return "=?utf-8?b?" + base64.b64encode(text.encode()).decode() + "?="


def header_names(raw: bytes) -> list[bytes]:
    """The names of the header lines of a message as it came off the wire."""
    block = raw.split(b"\r\n\r\n", 1)[0]
    return [line.split(b":", 1)[0].lower() for line in block.split(b"\r\n") if line[:1] not in (b" ", b"\t")]


async def test_an_encoded_word_in_the_message_does_not_inject_headers_or_a_body(
    api, token, application, mail_settings, relay
):
    submitted = await api.post(
        f"/applications/{application.id}/submit?key={application.key_api}",
        json={"message": encoded_word(PAYLOAD), "email": "victim@example.org", "name": "Vic"},
    )
    assert submitted.status_code == 201
    listed = await api.get(f"/applications/{application.id}/feedback", token)
    thread_id = (await listed.get_json())["data"][0]["id"]
    replied = await api.post(
        f"/applications/{application.id}/feedback/{thread_id}/replies", token, json={"message": "Hello"}
    )
    assert replied.status_code == 200

    assert await deliver_due(mail_settings) == 1
    [envelope] = relay.envelopes
    names = header_names(envelope.original_content)
    assert b"x-injected" not in names
    assert names.count(b"content-type") == 1
    assert envelope.rcpt_tos == ["victim@example.org"]
    [message] = relay.messages
    assert message.get_content_type() == "multipart/alternative"
    assert "evil.test" not in message.get_body(("html",)).get_content().split("<blockquote")[0]
    assert message["Subject"].startswith("Re: utf-8?b?eA0K")  # kept as text, never decoded


async def test_a_customer_name_holding_an_encoded_word_still_gets_the_reply(
    agent, application, mail_settings, relay
):
    thread = await make_thread(
        application,
        email="jo@example.org",
        name=encoded_word("Jo\r\nBcc: spy@evil.test"),
        message="Where is my order?",
    )
    await make_reply(agent, application, thread)

    assert await deliver_due(mail_settings) == 1
    row = await OutboundEmail.get(feedback_id=thread.id)
    assert (row.status, row.last_error) == ("sent", "")
    [envelope] = relay.envelopes
    assert envelope.rcpt_tos == ["jo@example.org"]
    assert b"bcc" not in header_names(envelope.original_content)


def test_header_text_is_one_line_without_encoded_word_markers():
    cleaned = headers.header_text(encoded_word(PAYLOAD) + "\u2028next\x85line\x00", 500)

    assert "=?" not in cleaned and "?=" not in cleaned
    assert not any(character in cleaned for character in "\r\n\u2028\x85\x00")
    assert cleaned.endswith("next line")


def test_header_text_is_capped():
    assert headers.header_text("word " * 100, 20) == "word word word word…"


def test_message_ids_are_kept_only_in_their_strict_form():
    assert headers.message_id(" <a.b-c@example.org> ") == "<a.b-c@example.org>"
    for bad in ("<a@b>\r\nX: y", "<=?utf-8?q?x?=@b>", "a@b", "<a b@c>", "<a@b><c@d>"):
        assert headers.message_id(bad) is None, bad
