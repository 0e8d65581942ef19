"""The export: one row per matching thread, in batches, its text safe for spreadsheets."""

from __future__ import annotations

import csv
import io
import json
from datetime import date

import pytest

from app.errors import ValidationError
from app.services import export
from app.services.export import check_format, export_file, file_name, neutralized
from app.services.feedback import set_archived, set_sentiment
from app.services.thread_filters import ThreadFilters
from tests.factories import make_application, make_reply, make_thread, make_user


async def exported(application, filters=None, export_format="csv", bom=False) -> str:
    chosen = filters or ThreadFilters()
    chunks = [chunk async for chunk in export_file(application, chosen, export_format, bom)]
    return b"".join(chunks).decode()


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
async def agent(db):
    return await make_user(plan="team")


@pytest.fixture
async def application(agent):
    return await make_application(agent)


async def test_a_csv_row_holds_every_column_of_the_thread(agent, application):
    thread = await make_thread(
        application,
        email="ann@example.org",
        name="Ann",
        message="Export, please",
        sentiment="positive",
        nps=9,
        tags=["ui", "billing"],
        url="https://shop.example.com/cart",
        properties={"plan": "pro", "seats": 3},
        language="es",
    )
    await set_sentiment(application, thread, "negative")
    await make_reply(agent, application, thread)
    await make_reply(agent, application, thread, "internal", type="note")

    [row] = csv_rows(await exported(application))

    assert list(row) == list(export.COLUMNS)
    assert row == {
        "id": str(thread.id),
        "email": "ann@example.org",
        "name": "Ann",
        "message": "Export, please",
        "sentiment": "negative",
        "sentiment_set_by_agent": "true",
        "nps": "9",
        "tags": "billing, ui",
        "url": "https://shop.example.com/cart",
        "properties": '{"plan": "pro", "seats": 3}',
        "language": "es",
        "reply_count": "2",
        "first_reply_time": row["first_reply_time"],
        "archived": "false",
        "created_at": thread.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert row["first_reply_time"].isdigit()


async def test_a_jsonl_line_keeps_the_apis_types(application):
    thread = await make_thread(application, tags=["ui"], properties=[1, "two"])

    [line] = (await exported(application, export_format="jsonl")).splitlines()
    item = json.loads(line)

    assert item["id"] == thread.id and item["tags"] == ["ui"] and item["properties"] == [1, "two"]
    assert item["created_at"] == int(thread.created_at.timestamp())
    assert item["nps"] is None and item["first_reply_time"] is None and item["archived"] is False
    assert item["sentiment_set_by_agent"] is False and item["reply_count"] == 0


@pytest.mark.parametrize("start", ["=", "+", "-", "@"])
async def test_cells_that_a_spreadsheet_would_run_are_neutralized(application, start):
    await make_thread(application, name=f"{start}HYPERLINK(1)", message=f"{start}cmd|' /C calc'!A0 and more")

    [row] = csv_rows(await exported(application))

    assert row["name"] == f"'{start}HYPERLINK(1)"
    assert row["message"].startswith(f"'{start}cmd")


@pytest.mark.parametrize("start", ["\t", "\r"])
def test_cells_starting_with_a_tab_or_a_carriage_return_are_neutralized(start):
    # The capture API trims names and messages; a URL or a tag could still start with one.
    assert neutralized(f"{start}=1+1") == f"'{start}=1+1"


def test_neutralizing_leaves_other_text_alone():
    assert neutralized("Hello = world") == "Hello = world"
    assert neutralized("") == ""


async def test_the_bom_opens_the_csv_only_when_asked(application):
    await make_thread(application)

    assert (await exported(application, bom=True)).startswith("\ufeffid,email,")
    assert (await exported(application)).startswith("id,email,")


async def test_the_export_takes_the_lists_filters(application):
    wanted = await make_thread(
        application, sentiment="negative", nps=3, message="Refund me", tags=["billing"]
    )
    await make_thread(application, sentiment="negative", nps=3, message="Refund me")
    await make_thread(application, sentiment="positive", nps=3, message="Refund me", tags=["billing"])
    archived = await make_thread(
        application, sentiment="negative", nps=3, message="Refund me", tags=["billing"]
    )
    await set_archived(application, archived, True)

    filters = ThreadFilters(sentiment="negative", tag="billing", query="refund", nps_max=3)
    rows = csv_rows(await exported(application, filters))

    assert [int(row["id"]) for row in rows] == [wanted.id]


async def test_the_export_reads_every_thread_in_batches_newest_first(application, monkeypatch):
    monkeypatch.setattr(export, "BATCH", 2)
    threads = [await make_thread(application) for _ in range(5)]

    rows = csv_rows(await exported(application))

    assert [int(row["id"]) for row in rows] == [thread.id for thread in reversed(threads)]


async def test_another_applications_threads_are_never_exported(agent, application):
    other = await make_application(agent)
    await make_thread(other)

    assert csv_rows(await exported(application)) == []
    assert await exported(application, export_format="jsonl") == ""


def test_an_unknown_format_is_refused():
    assert check_format(None) == "csv" and check_format("jsonl") == "jsonl"
    with pytest.raises(ValidationError, match="The format field must be csv or jsonl"):
        check_format("xlsx")


def test_the_file_name_holds_only_the_id_and_the_date():
    assert file_name(7, "jsonl", date(2026, 11, 25)) == "earful-application-7-2026-11-25.jsonl"
