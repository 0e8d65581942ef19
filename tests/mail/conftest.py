"""Fixtures of the e-mail tests: a real SMTP relay on loopback, Earful's SMTP receiver, settings.

Both servers run on the test's event loop (aiosmtpd's SMTP protocol behind ``create_server``),
so the receiver's handler uses the same ORM connections as the test.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import AsyncIterator
from email import message_from_bytes, policy
from email.message import EmailMessage

import aiosmtplib
import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from quart import Quart
from quart.typing import TestClientProtocol

from app import create_app
from app.config import Settings
from app.mail.smtp import start_smtp_server
from app.models import Application
from app.services.applications import intake_address
from tests.conftest import INTAKE_DOMAIN

INBOUND_SECRET = "inbound-test-secret"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Relay:
    """An outgoing SMTP relay that keeps what it receives; stop it to play "relay down"."""

    def __init__(self) -> None:
        self.port = free_port()
        self.envelopes: list[Envelope] = []
        self.server: asyncio.Server | None = None

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        return "250 2.0.0 Queued"

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(
            lambda: SMTP(self, hostname="relay.test"), "127.0.0.1", self.port, reuse_address=True
        )

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None

    @property
    def messages(self) -> list[EmailMessage]:
        """The received messages, parsed (with the wire's CRLF line ends made LF)."""
        return [
            message_from_bytes(envelope.original_content.replace(b"\r\n", b"\n"), policy=policy.default)
            for envelope in self.envelopes
        ]


@pytest.fixture
async def relay() -> AsyncIterator[Relay]:
    """A running relay on a free loopback port."""
    server = Relay()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def mail_settings(settings: Settings, relay: Relay) -> Settings:
    """The test settings, sending through ``relay`` and taking posted mail with a secret."""
    return dataclasses.replace(
        settings,
        smtp_url=f"smtp://127.0.0.1:{relay.port}",
        inbound_secret=INBOUND_SECRET,
        mail_from="Acme Support <support@earful.test>",
    )


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
