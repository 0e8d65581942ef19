"""A real SMTP relay on loopback (aiosmtpd) that keeps what it receives, for the tests of mail
that Earful sends."""

from __future__ import annotations

import asyncio
import socket
from email import message_from_bytes, policy
from email.message import EmailMessage

from aiosmtpd.smtp import SMTP, Envelope, Session


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
        # While cleared, the relay holds every message before answering (a slow relay).
        self.open = asyncio.Event()
        self.open.set()
        # Set once a message has arrived and its answer is being held.
        self.holding = asyncio.Event()
        self._received = asyncio.Condition()

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if not self.open.is_set():
            self.holding.set()
        await self.open.wait()
        async with self._received:
            self.envelopes.append(envelope)
            self._received.notify_all()
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

    async def wait_for(self, count: int) -> list[EmailMessage]:
        """The received messages once there are ``count`` of them (mail sent in the background);
        wrap it in ``asyncio.timeout``."""
        async with self._received:
            await self._received.wait_for(lambda: len(self.envelopes) >= count)
        return self.messages

    @property
    def messages(self) -> list[EmailMessage]:
        """The received messages, parsed (with the wire's CRLF line ends made LF)."""
        return [
            message_from_bytes(envelope.original_content.replace(b"\r\n", b"\n"), policy=policy.default)
            for envelope in self.envelopes
        ]
