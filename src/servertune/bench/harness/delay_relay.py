"""A TCP hop with a network's delay: what lies between nginx and an app server on two hosts.

On loopback a server's FIN reaches nginx within microseconds, so nginx never reuses a pooled
connection the server has just closed. Between two hosts the FIN is in flight for a round trip,
and a request sent in that window meets a closed socket: nginx answers 502. This relay forwards
bytes at once both ways but delivers the server's close `delay` seconds late, and resets
nginx's side when a request arrives for a server that has already closed (the RST a real
server's kernel sends). Run: `python -m servertune.bench.harness.delay_relay LISTEN_PORT TARGET_PORT DELAY_S [LISTEN_HOST]`
(LISTEN_HOST: 127.0.0.1 unless given; a host of `bench hosts` listens on its own address).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import sys

__all__ = ["main", "relay"]

LOOPBACK = "127.0.0.1"


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST (SO_LINGER 0), as a kernel answers data for a closed socket."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()


async def _connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: int, delay: float
) -> None:
    try:
        up_reader, up_writer = await asyncio.open_connection(LOOPBACK, target)
    except OSError:
        _reset(writer)
        return
    closed = asyncio.Event()

    async def down() -> None:
        # server -> nginx: data at once, the close `delay` later.
        try:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        closed.set()
        await asyncio.sleep(delay)
        writer.close()

    async def up() -> None:
        # nginx -> server: a request for a server that has closed gets a reset.
        try:
            while data := await reader.read(65536):
                if closed.is_set():
                    _reset(writer)
                    return
                up_writer.write(data)
                await up_writer.drain()
        except OSError:
            _reset(writer)
            return
        up_writer.close()

    await asyncio.gather(down(), up(), return_exceptions=True)


async def relay(listen: int, target: int, delay: float, host: str = LOOPBACK) -> None:
    """Serve forever on `host`:`listen`, relaying to 127.0.0.1:`target`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _connection(reader, writer, target, delay)

    server = await asyncio.start_server(handle, host, listen)
    async with server:
        await server.serve_forever()


def main(argv: list[str]) -> None:
    """`LISTEN_PORT TARGET_PORT DELAY_S [LISTEN_HOST]`."""
    listen, target, delay = int(argv[0]), int(argv[1]), float(argv[2])
    host = argv[3] if len(argv) > 3 else LOOPBACK
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(relay(listen, target, delay, host))


if __name__ == "__main__":
    main(sys.argv[1:])
