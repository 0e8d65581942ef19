"""Reading e-mail: the new text only (quotes, separators, signatures cut), HTML made text."""

from __future__ import annotations

import pytest

from app.services.mail.parsing import html_to_text, parse_mail, strip_quoted


@pytest.mark.parametrize(
    "text",
    [
        "Thanks!\n\nOn Tue, 4 Mar 2025 at 09:12, Acme <support@acme.test> wrote:\n> Fixed.\n",
        "Thanks!\n\nOn Tue, 4 Mar 2025 at 09:12, Acme Support\n<support@acme.test> wrote:\n> Fixed.\n",
        "Thanks!\n\n-----Original Message-----\nFrom: Acme\nSent: Tuesday\nFixed.\n",
        "Thanks!\n\n________________________________\nFrom: Acme <support@acme.test>\nSent: Tuesday\n",
        "Thanks!\n\nFrom: Acme <support@acme.test>\nSent: Tuesday, March 4\nTo: Jo\nSubject: Re: x\n",
        "Thanks!\n\nEl mar, 4 mar 2025 a las 9:12, Acme (<support@acme.test>) escribió:\n> Hecho.\n",
        "Thanks!\n\nEm ter., 4 de mar. de 2025 às 09:12, Acme <support@acme.test> escreveu:\n> Feito.\n",
        "Thanks!\n\n-- \nJo Customer\nExample Org\n",
        "Thanks!\n\nSent from my iPhone\n",
        "> Fixed.\nThanks!\n",
    ],
)
def test_quoted_history_separators_and_signatures_are_cut(text):
    assert strip_quoted(text) == "Thanks!"


def test_inline_answers_keep_the_customers_lines():
    text = "> Which browser?\nFirefox 120.\n> Which system?\nLinux.\n"
    assert strip_quoted(text) == "Firefox 120.\nLinux."


def test_outlook_html_stops_at_the_reply_marker():
    html = '<div>Thanks, it works.</div><div id="appendonsend"></div><hr><div>From: Acme</div><p>Fixed.</p>'
    assert html_to_text(html) == "Thanks, it works."


def test_html_scripts_styles_and_entities():
    html = "<style>a{}</style><script>alert(1)</script><p>5 &lt; 6&nbsp;&amp; <a href='https://x.test/'>see</a></p>"
    assert html_to_text(html) == "5 < 6 & see (https://x.test/)"


def test_sender_name_address_and_language_are_read():
    raw = (
        b"From: =?utf-8?q?Jos=C3=A9_P=C3=A9rez?= <Jose@Example.ORG>\r\n"
        b"To: x@y.test\r\nSubject: Hola\r\nContent-Language: es-ES\r\nMessage-ID: <m1@example.org>\r\n"
        b"Content-Type: text/plain; charset=latin-1\r\n\r\nNo funciona el pago.\r\n"
    )
    mail = parse_mail(raw)
    assert (mail.sender_name, mail.sender_email, mail.language) == ("José Pérez", "jose@example.org", "es")
    assert (mail.message_id, mail.text, mail.automatic) == ("<m1@example.org>", "No funciona el pago.", False)


def test_bounces_and_auto_replies_are_automatic():
    raw = b"From: a@b.test\r\nTo: x@y.test\r\nSubject: x\r\n\r\nbody\r\n"
    assert parse_mail(raw, envelope_sender="").automatic
    assert parse_mail(b"Auto-Submitted: auto-replied\r\n" + raw).automatic
    assert not parse_mail(raw, envelope_sender="a@b.test").automatic


def test_mail_without_a_message_id_is_known_by_its_bytes():
    raw = b"From: a@b.test\r\nTo: x@y.test\r\nSubject: x\r\n\r\nbody\r\n"
    assert parse_mail(raw).message_id == parse_mail(raw).message_id != parse_mail(raw + b"!").message_id
