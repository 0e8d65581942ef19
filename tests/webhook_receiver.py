"""A real HTTP receiver of webhooks on loopback (aiohttp) that keeps what it receives, for the
tests of deliveries (services, views through the test app's worker, the browser through a live
``earful serve``): answer with scripted statuses, hang, redirect, or verify."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass(frozen=True)
class Received:
    """One POST as the receiver got it: the raw body and the headers (names in lower case)."""

    path: str
    body: bytes
    headers: dict[str, str]

    def verified_with(self, secret: str) -> dict[str, object] | None:
        """The event, when the signature verifies with ``secret`` (the library's own check)."""
        try:
            event: dict[str, object] = Webhook(secret).verify(self.body, self.headers)
        except (WebhookVerificationError, ValueError):
            return None
        return event


class Receiver:
    """An endpoint that keeps every POST and answers it with the next of ``statuses`` (then
    ``status``) and ``answer``; while ``hang`` is set, requests wait until the receiver stops;
    ``/redirect`` answers 302."""

    def __init__(self, status: int = 200, answer: str = "thanks") -> None:
        self.port = free_port()
        self.status = status
        self.answer = answer
        self.statuses: list[int] = []
        self.hang = False
        self.received: list[Received] = []
        self._arrived = asyncio.Condition()
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/earful"

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {name.lower(): value for name, value in request.headers.items()}
        async with self._arrived:
            self.received.append(Received(request.path, body, headers))
            self._arrived.notify_all()
        if self.hang:
            await self._closing.wait()
        if request.path == "/redirect":
            raise web.HTTPFound("/hooks/earful")
        status = self.statuses.pop(0) if self.statuses else self.status
        return web.Response(status=status, text=self.answer, headers={"X-Receiver": "pytest"})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def wait_for(self, count: int) -> list[Received]:
        """The requests once there are ``count`` of them; wrap it in ``asyncio.timeout``."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.received) >= count)
        return self.received


@asynccontextmanager
async def running_receiver(status: int = 200, answer: str = "thanks") -> AsyncIterator[Receiver]:
    """A receiver listening on a free loopback port for the block."""
    receiver = Receiver(status, answer)
    await receiver.start()
    try:
        yield receiver
    finally:
        await receiver.stop()
