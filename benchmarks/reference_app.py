"""The bare reference for ``make bench``: Quart + Hypercorn + Tortoise, one table.

``POST /submit`` validates a JSON body (an e-mail address and a message) and inserts one row,
which is the least any capture endpoint on this stack can do; ``POST /submit-webhook`` also
POSTs the row to ``REFERENCE_WEBHOOK``, the least one that tells a webhook can do. ``GET /list``
reads the fifty newest rows through the ORM and returns them as JSON, the least any list
endpoint can do. ``GET /ping`` answers ``ok``: the least any request costs on this stack. Serve it with
``hypercorn -k uvloop -w 2 benchmarks.reference_app:app`` after creating the table with
``python -m benchmarks.reference_app init``, which also writes the fifty rows the list reads
(both read ``REFERENCE_DATABASE_URL``).

The database is opened exactly as Earful opens its own (:func:`app.db.connection_settings`): on
SQLite the bench passes a URL made by :func:`app.config.sqlite_url`, with the product's pragmas
(``synchronous=NORMAL`` spares an fsync per commit: without it this app's submit served 783
req/s, with it 2,052), on PostgreSQL the product's pool settings. tests/test_bench_reference.py
fails when the two differ.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp
from quart import Quart, Response, request
from tortoise import Tortoise, fields
from tortoise.models import Model

from app.db import connection_settings
from app.representations import encode_json


def tortoise_config(database_url: str) -> dict:
    """The reference's ORM configuration: its one model, on a connection set up as Earful's."""
    return {
        "connections": {"default": connection_settings(database_url)},
        "apps": {"models": {"models": [__name__], "default_connection": "default"}},
        "use_tz": True,
        "timezone": "UTC",
    }


DATABASE_URL = os.environ.get("REFERENCE_DATABASE_URL", "sqlite://:memory:")
CONFIG = tortoise_config(DATABASE_URL)


class Submission(Model):
    """One submitted message."""

    id = fields.IntField(primary_key=True)
    email = fields.CharField(max_length=254)
    message = fields.TextField()
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "reference_submissions"


app = Quart(__name__)


@app.before_serving
async def _orm_up() -> None:
    await Tortoise.init(config=CONFIG, _enable_global_fallback=True)


@app.after_serving
async def _orm_down() -> None:
    await Tortoise.close_connections()
    for client in _client:
        await client.close()


@app.post("/submit")
async def submit() -> tuple[str, int]:
    body = await request.get_json(force=True, silent=True)
    if not isinstance(body, dict):
        return "Invalid request body", 400
    email, message = body.get("email"), body.get("message")
    if not isinstance(email, str) or "@" not in email or len(email) > 254:
        return "Invalid email address", 400
    if not isinstance(message, str) or len(message.strip()) < 3:
        return "Your message is required", 400
    await Submission.create(email=email.strip().lower(), message=message.strip())
    return "Feedback sent!", 201


# The bench's webhook receiver (``REFERENCE_WEBHOOK``), told of every row ``/submit-webhook``
# inserts.
WEBHOOK = os.environ.get("REFERENCE_WEBHOOK", "")
_posting: set[asyncio.Task[None]] = set()
_client: list[aiohttp.ClientSession] = []


@app.post("/submit-webhook")
async def submit_with_webhook() -> tuple[str, int]:
    """``/submit``, then the new row POSTed to ``REFERENCE_WEBHOOK`` after the answer, without
    waiting for it: the least a submit that tells a webhook costs on this stack (one insert, one
    outgoing request; no queue, no signature, no retry, no log of the attempt, all of which
    Earful's delivery has). The floor of capture submit with webhooks on."""
    answer = await submit()
    if answer[1] == 201:
        body = encode_json({"type": "feedback.created", "data": await request.get_json(force=True)})
        task = asyncio.get_running_loop().create_task(_post(body))
        _posting.add(task)
        task.add_done_callback(_posting.discard)
    return answer


async def _post(body: bytes) -> None:
    if not _client:
        _client.append(aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)))
    try:
        async with _client[0].post(
            WEBHOOK, data=body, headers={"Content-Type": "application/json"}
        ) as answer:
            await answer.read()
    except (aiohttp.ClientError, TimeoutError):
        pass  # a floor does not retry


@app.get("/ping")
async def ping() -> str:
    return "ok"


@app.get("/list")
async def newest() -> list[dict]:
    rows = await Submission.all().order_by("-id").limit(50)
    return [
        {"id": row.id, "email": row.email, "message": row.message, "created_at": row.created_at.isoformat()}
        for row in rows
    ]


# Earful's own answers, saved by the bench before it starts this app (``REFERENCE_DOCUMENTS``):
# the size and shape of what a read returns, without the work of making it.
DOCUMENTS = Path(os.environ.get("REFERENCE_DOCUMENTS", "/nonexistent"))


@app.get("/document/<name>")
async def document(name: str) -> Response:
    """The fifty rows of ``/list`` read as there, then one of Earful's answers returned instead
    of them: a JSON document decoded at start-up and encoded again on every request (with
    Earful's own encoder, :func:`app.representations.encode_json`), or an HTML page sent as it is.
    This is the floor of a read whose answer is that large on this stack (the ORM read, the
    encoding, the transport), which no amount of work on Earful's side can go below: the
    feedback list carries every thread with its sender, tags and replies."""
    rows = await Submission.all().order_by("-id").limit(50)
    if not rows or name not in _documents:
        return Response("Not found", 404)
    kind, body = _documents[name]
    if kind == "json":
        return Response(encode_json(body), content_type="application/json")
    return Response(body, content_type="text/html; charset=utf-8")


def _read_documents(folder: Path) -> dict[str, tuple[str, Any]]:
    documents: dict[str, tuple[str, Any]] = {}
    for path in folder.glob("*") if folder.is_dir() else []:
        if path.suffix == ".json":
            documents[path.stem] = ("json", json.loads(path.read_bytes()))
        elif path.suffix == ".html":
            documents[path.stem] = ("html", path.read_bytes())
    return documents


_documents = _read_documents(DOCUMENTS)


async def _init() -> None:
    await Tortoise.init(config=CONFIG)
    try:
        await Tortoise.generate_schemas(safe=True)
        missing = 50 - await Submission.all().count()
        if missing > 0:
            await Submission.bulk_create(
                Submission(email=f"reader-{n}@example.org", message="The export button does nothing.")
                for n in range(missing)
            )
    finally:
        await Tortoise.close_connections()


if __name__ == "__main__" and sys.argv[1:] == ["init"]:
    asyncio.run(_init())
