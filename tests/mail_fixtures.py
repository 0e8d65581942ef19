"""Fixtures of the e-mail tests (a pytest plugin of tests/conftest.py): Earful's SMTP receiver,
and settings that send through the real SMTP relay on loopback (``relay``, tests/conftest.py).

Both servers run on the test's event loop (aiosmtpd's SMTP protocol behind ``create_server``),
so the receiver's handler uses the same ORM connections as the test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from email.message import EmailMessage

import aiosmtplib
import pytest
from quart import Quart
from quart.typing import TestClientProtocol

from app import create_app
from app.config import Settings
from app.mail.smtp import start_smtp_server
from app.models import Application
from app.services.applications import intake_address
from app.services.deployment import use_settings
from tests.conftest import INTAKE_DOMAIN
from tests.smtp_relay import Relay

INBOUND_SECRET = "inbound-test-secret"


@pytest.fixture
def mail_settings(settings: Settings, relay: Relay) -> Settings:
    """The test settings, sending through ``relay`` and taking posted mail with a secret (the
    deployment's settings for the services too)."""
    changed = dataclasses.replace(
        settings,
        smtp_url=f"smtp://127.0.0.1:{relay.port}",
        inbound_secret=INBOUND_SECRET,
        mail_from="Acme Support <support@earful.test>",
    )
    use_settings(changed)
    return changed


@pytest.fixture
async def receiver(mail_settings: Settings) -> AsyncIterator[int]:
    """Earful's SMTP receiver (``earful smtp``) on a free loopback port; yields the port."""
    server = await start_smtp_server(mail_settings, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


@pytest.fixture
async def inbound_app(mail_settings: Settings) -> AsyncIterator[Quart]:
    """The web app with an inbound secret and no outbox worker (no EARFUL_SMTP_URL)."""
    application = create_app(dataclasses.replace(mail_settings, smtp_url=None), manage_db=False)
    async with application.test_app():
        yield application


@pytest.fixture
def inbound_client(inbound_app: Quart) -> TestClientProtocol:
    return inbound_app.test_client()


@pytest.fixture
def intake(application: Application) -> str:
    """The intake address of the test application."""
    return intake_address(application, INTAKE_DOMAIN)


def make_mail(
    to: str,
    text: str | None = "Checkout crashes when I pay with a card.",
    *,
    sender: str = "Jo Customer <jo@example.org>",
    subject: str = "Checkout is broken",
    html: str | None = None,
    message_id: str | None = None,
    headers: dict[str, str] | None = None,
) -> EmailMessage:
    """An e-mail as a customer's mail client would write it."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    if message_id:
        message["Message-ID"] = message_id
    for name, value in (headers or {}).items():
        message[name] = value
    if text is not None:
        message.set_content(text)
        if html is not None:
            message.add_alternative(html, subtype="html")
    elif html is not None:
        message.set_content(html, subtype="html")
    return message


async def smtp_send(port: int, message: EmailMessage, recipients: list[str] | None = None) -> None:
    """Deliver a message to Earful's receiver over real SMTP."""
    await aiosmtplib.send(message, hostname="127.0.0.1", port=port, recipients=recipients, timeout=10)
