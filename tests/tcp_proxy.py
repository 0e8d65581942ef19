"""A TCP proxy in the test's own event loop, to take a server away from the app and give it back
without touching the server (the shared PostgreSQL keeps serving every other test).

- :meth:`TcpProxy.cut`: the listener closes and every proxied connection is dropped, as when
  the database's host goes down (new connections are refused).
- :meth:`TcpProxy.hang`: connections stay open but nothing goes through, as when the database
  hangs; :meth:`TcpProxy.restore` lets the held bytes through and takes connections again.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit, urlunsplit


class TcpProxy:
    """Forwards 127.0.0.1:<port> to ``upstream_host:upstream_port``."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()

    @classmethod
    def for_url(cls, url: str) -> TcpProxy:
        parts = urlsplit(url)
        return cls(parts.hostname or "127.0.0.1", parts.port or 5432)

    def url(self, url: str) -> str:
        """``url`` with its host and port replaced by the proxy's."""
        parts = urlsplit(url)
        credentials = parts.netloc.rpartition("@")[0]
        netloc = f"{credentials}@127.0.0.1:{self.port}" if credentials else f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        """Refuse new connections and drop the open ones."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    def hang(self) -> None:
        """Keep every connection open and let nothing through."""
        self._flowing.clear()

    async def restore(self) -> None:
        """Let bytes through again and take connections on the same port."""
        self._flowing.set()
        if self._server is None:
            await self.start()

    async def close(self) -> None:
        self._flowing.set()
        await self.cut()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, upstream_writer}
        await asyncio.gather(
            self._pipe(reader, upstream_writer), self._pipe(upstream_reader, writer), return_exceptions=True
        )

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()
