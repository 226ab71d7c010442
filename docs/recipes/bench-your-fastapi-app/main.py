"""A small FastAPI app with the three kinds of endpoint a real one has.

* `GET /io`: awaits an external service (the delay server, `UPSTREAM_URL`, default
  http://127.0.0.1:8099/) through one shared httpx client, as an app awaits a database or an API;
* `GET /cpu`: pure Python work on the event loop (a checksum over a few thousand numbers);
* `POST /echo` (and `GET /echo`): reads the request body and answers its length.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI, Request

UPSTREAM_URL = os.environ.get("UPSTREAM_URL", "http://127.0.0.1:8099/")
CPU_ROUNDS = int(os.environ.get("CPU_ROUNDS", "20000"))


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
    async with httpx.AsyncClient(limits=limits, timeout=10.0) as client:
        app.state.client = client
        yield


app = FastAPI(lifespan=lifespan)


@app.get("/io")
async def io(request: Request) -> dict[str, int]:
    answer = await request.app.state.client.get(UPSTREAM_URL)
    return {"upstream_status": answer.status_code, "bytes": len(answer.content)}


@app.get("/cpu")
async def cpu() -> dict[str, int]:
    total = 0
    for i in range(CPU_ROUNDS):
        total = (total * 31 + i) % 1_000_003
    return {"checksum": total}


@app.api_route("/echo", methods=["GET", "POST"])
async def echo(request: Request) -> dict[str, int]:
    body = await request.body()
    return {"received": len(body)}
