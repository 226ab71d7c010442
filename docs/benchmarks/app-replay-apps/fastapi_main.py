"""A small FastAPI app for `bench app --replay`: a cheap route, an awaited I/O call, a report."""

import asyncio
import hashlib

from fastapi import FastAPI

app = FastAPI()


@app.get("/items/{item_id}")
async def item(item_id: int) -> dict[str, object]:
    digest = hashlib.sha256(str(item_id).encode() * 200).hexdigest()
    return {"id": item_id, "digest": digest[:16]}


@app.get("/io")
async def io() -> dict[str, str]:
    await asyncio.sleep(0.05)  # an upstream call
    return {"ok": "io"}


@app.get("/report")
async def report() -> dict[str, str]:
    await asyncio.sleep(0.3)  # a slow query
    return {"ok": "report"}
