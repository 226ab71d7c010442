"""An upstream that answers every request after a fixed delay: a stand-in for a database or API.

Run: `python delay_server.py PORT DELAY_MS` (binds 127.0.0.1). Every answer is a small JSON body,
sent `DELAY_MS` after the request arrived, on a keep-alive connection.
"""

from __future__ import annotations

import asyncio
import sys

BODY = b'{"ok": true}'
ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)


async def serve(port: int, delay_s: float) -> None:
    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                await asyncio.sleep(delay_s)
                writer.write(ANSWER)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(one, "127.0.0.1", port, backlog=1024)
    print(f"delay server on 127.0.0.1:{port}, {delay_s * 1000:g} ms", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), float(sys.argv[2]) / 1000))
