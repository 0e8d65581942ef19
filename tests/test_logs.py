"""Log lines (app/logs.py, app/observation.py): one JSON line per request and per job run, each
with its id, tracebacks included; no e-mail address, feedback text or query string in any line."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from app.logs import JsonLines, TextLines, WithId, configure_logging, current_id, job_run, scrub
from app.repositories import applications
from tests.factories import make_token, make_user

SECRET_MESSAGE = "My invoice 4471 was charged twice, please refund"
CUSTOMER = "carol.customer@example.org"


class Lines:
    """What the app logged during the test, as the JSON formatter writes it."""

    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    @property
    def raw(self) -> str:
        return self.stream.getvalue()

    def parsed(self) -> list[dict]:
        return [json.loads(line) for line in self.raw.splitlines()]

    def of(self, logger: str) -> list[dict]:
        return [line for line in self.parsed() if line["logger"] == logger]


@pytest.fixture
def lines() -> Iterator[Lines]:
    """The root logger's handler as ``earful serve`` sets it in JSON (writing to a buffer)."""
    root = logging.getLogger()
    previous = (root.handlers[:], root.level)
    stream = io.StringIO()
    configure_logging("json")
    [handler] = root.handlers
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(stream)
    root.handlers[:] = [handler, *previous[0]]  # pytest's capture keeps working
    try:
        yield Lines(stream)
    finally:
        root.handlers[:], _ = previous
        root.setLevel(previous[1])


def fail(*args: object, **kwargs: object) -> None:
    raise RuntimeError(f"the disk is full while writing for {CUSTOMER}")


async def test_a_request_logs_one_json_line_with_its_id_route_status_and_user(api, lines):
    user = await make_user(email="ops@example.com")
    token = await make_token(user)

    response = await api.get("/users/me?fields=email", token, scope_base={"client": ("203.0.113.9", 40000)})

    [line] = lines.of("earful.access")
    assert line["request_id"] == response.headers["X-Request-ID"]
    assert line["method"] == "GET"
    assert line["route"] == "/users/me"
    assert line["status"] == 200
    assert line["user_id"] == user.id
    assert line["client"] == "203.0.113.9"
    assert line["duration_ms"] >= 0
    assert line["level"] == "INFO" and "time" in line and "process" in line
    assert "fields=" not in lines.raw  # the query string is never logged


async def test_a_route_with_ids_is_logged_by_its_rule(api, token, application, lines):
    await api.get(f"/applications/{application.id}/tags", token)

    [line] = lines.of("earful.access")
    assert line["route"] == "/applications/<application_id>/tags"
    assert f"/applications/{application.id}/" not in lines.raw


async def test_a_traceback_carries_the_id_of_its_request(api, token, monkeypatch, lines):
    monkeypatch.setattr(applications, "visible_applications", fail)

    response = await api.get("/applications", token)

    assert response.status_code == 500
    request_id = response.headers["X-Request-ID"]
    [failure] = lines.of("earful.requests")
    assert failure["request_id"] == request_id
    assert "RuntimeError: the disk is full" in failure["traceback"]
    [access] = lines.of("earful.access")
    assert (access["request_id"], access["status"]) == (request_id, 500)
    assert CUSTOMER not in lines.raw
    assert "<email>" in failure["traceback"]


async def test_submitted_feedback_leaves_no_address_or_message_in_any_line(api, application, lines):
    response = await api.post(
        f"/applications/{application.id}/submit?key={application.key_javascript}",
        json={"email": CUSTOMER, "name": "Carol", "message": SECRET_MESSAGE},
        headers={"User-Agent": f"Widget ({CUSTOMER})", "Referer": f"https://shop.example/?email={CUSTOMER}"},
    )

    assert response.status_code == 201
    assert lines.of("earful.access")[0]["status"] == 201
    assert CUSTOMER not in lines.raw
    assert SECRET_MESSAGE not in lines.raw
    assert "invoice" not in lines.raw
    assert application.key_javascript not in lines.raw


async def test_a_job_run_logs_its_worker_duration_outcome_and_id(lines):
    logger = logging.getLogger("earful.test")

    with job_run("outbox", "outbox: delivery round failed", logger) as run:
        run.items = 2
    with job_run("outbox", "outbox: delivery round failed", logger):
        logger.warning("about to fail")
        raise RuntimeError(f"relay refused {CUSTOMER}")

    ok, warning, failure, failed = lines.parsed()
    assert (ok["worker"], ok["outcome"], ok["items"]) == ("outbox", "ok", 2)
    assert ok["duration_ms"] >= 0
    assert failed["outcome"] == "failed"
    assert warning["request_id"] == failure["request_id"] == failed["request_id"] != ok["request_id"]
    assert "RuntimeError: relay refused <email>" in failure["traceback"]
    assert current_id.get() == ""  # the run's id is gone with it


async def test_an_idle_job_run_is_not_logged_at_info(lines):
    with job_run("webhooks", "round failed", logging.getLogger("earful.test")) as run:
        run.items = 0

    assert lines.raw == ""


def test_text_lines_keep_hypercorns_format_with_the_fields_and_id():
    record = logging.LogRecord(
        "earful.access", logging.INFO, __file__, 1, "GET %s %d", ("/healthz", 200), None
    )
    record.duration_ms = 1.5
    record.client = "10.0.0.7"
    token = current_id.set("abc123")
    try:
        WithId().filter(record)
    finally:
        current_id.reset(token)

    line = TextLines().format(record)

    assert line.endswith("[INFO] GET /healthz 200 duration_ms=1.5 client=10.0.0.7 [abc123]")
    assert f"[{record.process}]" in line


def test_json_lines_write_what_orjson_refuses_with_the_standard_encoder():
    record = logging.LogRecord("earful.jobs", logging.INFO, __file__, 1, "seeded to %s", ("Zoë",), None)
    record.items = 10**30  # past 64 bits: orjson refuses it
    record.email = CUSTOMER

    line = json.loads(JsonLines().format(record))

    assert line["message"] == "seeded to Zoë" and line["items"] == 10**30 and line["email"] == "<email>"
    assert line["time"].endswith("+00:00") and "T" in line["time"]


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("550 <bob.smith+tag@mail.example.co.uk> unknown", "550 <<email>> unknown"),
        ("Key (email)=(ann@example.org) exists", "Key (email)=(<email>) exists"),
        ("no address here", "no address here"),
    ],
)
def test_addresses_are_scrubbed(text, scrubbed):
    assert scrub(text) == scrubbed


async def test_a_job_run_cut_short_by_its_workers_stop_says_so(lines):
    async def round_that_hangs() -> None:
        with job_run("webhooks", "round failed", logging.getLogger("earful.test")):
            await asyncio.sleep(30)

    task = asyncio.create_task(round_that_hangs())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    [line] = lines.parsed()
    assert (line["worker"], line["outcome"]) == ("webhooks", "stopped")
