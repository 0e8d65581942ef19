"""GET /applications/{id}/feedback/export: the feedback list's threads as a CSV or JSON Lines file."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from app.models import Feedback, Member, Reply, Tag
from tests.factories import body_text, make_thread, make_token, make_user


def export_path(application, query: str = "") -> str:
    return f"/applications/{application.id}/feedback/export{'?' + query if query else ''}"


async def downloaded(api, token, application, query: str = ""):
    response = await api.get(export_path(application, query), token)
    assert response.status_code == 200, await body_text(response)
    return response, await response.get_data(as_text=True)


async def assert_error(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == message


async def row_counts() -> tuple[int, ...]:
    return tuple([await model.all().count() for model in (Feedback, Member, Tag, Reply)])


async def test_csv_is_an_attachment_named_after_the_application_and_the_date(api, token, application):
    thread = await make_thread(application, name="=cmd", message="Hello")

    response, text = await downloaded(api, token, application, "format=csv")

    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    disposition = response.headers["Content-Disposition"]
    assert re.fullmatch(
        rf'attachment; filename="earful-application-{application.id}-\d{{4}}-\d\d-\d\d\.csv"', disposition
    )
    assert response.headers["Cache-Control"] == "no-store"
    [row] = list(csv.DictReader(io.StringIO(text)))
    assert row["id"] == str(thread.id) and row["name"] == "'=cmd" and row["message"] == "Hello"


async def test_csv_is_the_default_format(api, token, application):
    await make_thread(application)

    response, text = await downloaded(api, token, application)

    assert response.mimetype == "text/csv" and text.startswith("id,email,name,message,")


async def test_bom_starts_the_csv_with_a_byte_order_mark(api, token, application):
    response = await api.get(export_path(application, "bom=1"), token)

    assert (await response.get_data()).startswith(b"\xef\xbb\xbfid,email,")


async def test_jsonl_is_one_object_per_line(api, token, application):
    older = await make_thread(application, tags=["ui"])
    newer = await make_thread(application)

    response, text = await downloaded(api, token, application, "format=jsonl")

    assert response.headers["Content-Type"] == "application/x-ndjson"
    assert response.headers["Content-Disposition"].endswith('.jsonl"')
    items = [json.loads(line) for line in text.splitlines()]
    assert [item["id"] for item in items] == [newer.id, older.id]
    assert items[1]["tags"] == ["ui"] and isinstance(items[1]["created_at"], int)


async def test_the_export_takes_the_feedback_lists_filters(api, token, application):
    wanted = await make_thread(application, sentiment="negative", nps=2, message="Refund now")
    await make_thread(application, sentiment="negative", nps=8, message="Refund now")
    await make_thread(application, sentiment="positive", nps=2, message="Refund now")

    _, text = await downloaded(api, token, application, "format=jsonl&sentiment=negative&nps_max=5&q=refund")

    assert [json.loads(line)["id"] for line in text.splitlines()] == [wanted.id]


async def test_feedback_text_never_reaches_a_header(api, token, application):
    await make_thread(application, name='Evil"\r\nX-Injected: 1', message="Line\r\nX-Other: 2", tags=["a;b"])

    response, _ = await downloaded(api, token, application, "tag=a;b")

    assert "X-Injected" not in response.headers and "X-Other" not in response.headers
    assert "Evil" not in str(response.headers)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("format=xlsx", "The format field must be csv or jsonl."),
        ("bom=perhaps", "The bom field must be true or false."),
        ("since=yesterday", "The since field must be an integer."),
        ("sentiment=angry", "The sentiment field must be one of positive, neutral, negative."),
        ("nps_min=11", "The nps_min field must be between 0 and 10."),
    ],
)
async def test_invalid_parameters_are_a_400_that_writes_nothing(api, token, application, query, message):
    await make_thread(application)
    before = await row_counts()

    response = await api.get(export_path(application, query), token)

    await assert_error(response, 400, message)
    assert await row_counts() == before


async def test_without_a_token_the_export_is_unauthenticated(api, application):
    response = await api.get(export_path(application))

    await assert_error(response, 401, "Unauthenticated")
    assert response.headers["WWW-Authenticate"] == "Bearer"


async def test_a_token_without_read_scope_is_refused(api, agent, application):
    write_only = await make_token(agent, "write")

    response = await api.get(export_path(application), write_only)

    await assert_error(response, 403, "Insufficient scope")


async def test_another_users_application_is_not_found(api, application):
    await make_thread(application)
    stranger = await make_token(await make_user())

    response = await api.get(export_path(application, "format=jsonl"), stranger)

    await assert_error(response, 404, "Invalid application")


async def test_an_unknown_application_is_not_found(api, token):
    response = await api.get("/applications/999999/feedback/export", token)

    await assert_error(response, 404, "Invalid application")


async def test_a_nul_in_the_search_text_is_dropped_not_sent_to_the_database(api, token, application):
    """Found by schemathesis on PostgreSQL: the export's stream broke after its headers."""
    thread = await make_thread(application, message="Refund please")

    _, text = await downloaded(api, token, application, "format=jsonl&q=Ref%00und")

    assert [json.loads(line)["id"] for line in text.splitlines()] == [thread.id]


async def test_an_export_longer_than_the_response_timeout_is_sent_whole(app, api, token, application):
    for _ in range(3):
        await make_thread(application)
    app.config["RESPONSE_TIMEOUT"] = 0.000_001  # every other answer would be cut at once

    _, text = await downloaded(api, token, application, "format=jsonl")

    assert len(text.splitlines()) == 3
