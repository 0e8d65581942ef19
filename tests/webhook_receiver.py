"""A real HTTP receiver of webhooks on loopback (aiohttp) that keeps what it receives, for the
tests of deliveries: the views' through the test app's worker, the browser's through a live
``earful serve``."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass

from aiohttp import web


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


class Receiver:
    """An endpoint that answers every POST with ``status`` and keeps the request."""

    def __init__(self, status: int = 200, answer: str = "thanks") -> None:
        self.port = free_port()
        self.status = status
        self.answer = answer
        self.received: list[Received] = []
        self._arrived = asyncio.Condition()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/earful"

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        async with self._arrived:
            self.received.append(
                Received(request.path, body, {name.lower(): value for name, value in request.headers.items()})
            )
            self._arrived.notify_all()
        return web.Response(status=self.status, text=self.answer, headers={"X-Receiver": "pytest"})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def wait_for(self, count: int) -> list[Received]:
        """The requests once there are ``count`` of them; wrap it in ``asyncio.timeout``."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.received) >= count)
        return self.received
