"""A real HTTP receiver on loopback (aiohttp) that keeps the webhook deliveries it gets, for the
tests of what Earful sends: answer with scripted statuses, hang, redirect, or verify."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


@dataclass
class Received:
    """One request as it reached the receiver."""

    path: str
    headers: dict[str, str]
    body: bytes

    def verified_with(self, secret: str) -> dict[str, object] | None:
        """The event, when the signature verifies with ``secret`` (the library's own check)."""
        try:
            event: dict[str, object] = Webhook(secret).verify(self.body, self.headers)
        except (WebhookVerificationError, ValueError):
            return None
        return event


@dataclass
class Receiver:
    """What the receiver got, and how it answers next: ``statuses`` are used one per request
    (then 200); while ``hang`` is set, requests wait for ever."""

    port: int = 0
    received: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    body: bytes = b"ok"
    hang: bool = False
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)
    _closing: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    async def wait_for(self, count: int) -> list[Received]:
        """The requests once there are ``count``; wrap it in ``asyncio.timeout``."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.received) >= count)
        return self.received

    async def handle(self, request: web.Request) -> web.StreamResponse:
        arrived = Received(request.path, dict(request.headers), await request.read())
        async with self._arrived:
            self.received.append(arrived)
            self._arrived.notify_all()
        if self.hang:
            await self._closing.wait()  # until the receiver stops
        if request.path == "/redirect":
            raise web.HTTPFound("/hooks")
        status = self.statuses.pop(0) if self.statuses else 200
        return web.Response(status=status, body=self.body, content_type="text/plain")


@asynccontextmanager
async def running_receiver() -> AsyncIterator[Receiver]:
    """A receiver listening on a free loopback port for the block."""
    receiver = Receiver()
    server = web.Application()
    server.router.add_route("POST", "/{tail:.*}", receiver.handle)
    runner = web.AppRunner(server, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    receiver.port = runner.addresses[0][1]
    try:
        yield receiver
    finally:
        receiver._closing.set()
        await runner.cleanup()
