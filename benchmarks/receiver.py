"""A webhook receiver for the bench: answers every POST with 204 and counts them.

``python -m benchmarks.receiver PORT`` listens on 127.0.0.1:PORT. ``GET /count`` answers the
number of POSTs received so far. It reads just enough HTTP/1.1 for the deliveries Earful sends
(a Content-Length body, keep-alive), so that the receiver, which shares this machine's cores with
the server under test, costs as little CPU as it can: a real receiver runs elsewhere.
"""

from __future__ import annotations

import asyncio
import sys

NO_CONTENT = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"


class Receiver(asyncio.Protocol):
    received = 0  # POSTs received by every connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            if head.startswith("GET /count"):
                text = str(Receiver.received).encode()
                self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text))
            else:
                Receiver.received += 1
                self.transport.write(NO_CONTENT)


async def main(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(Receiver, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
