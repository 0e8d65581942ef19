"""Bad input of every kind gets a clear 4xx in the documented format, never a 5xx, and writes nothing."""

from __future__ import annotations

import json

import pytest

from app.models import Application, Feedback, Member, Reply, Tag
from tests.factories import make_application, make_thread, make_token, make_user

DEEP = "[" * 5000 + "]" * 5000
BAD_SUBMIT_BODIES = [
    b"{not json",
    b"[1, 2, 3]",
    b'"just a string"',
    DEEP.encode(),
    json.dumps({"email": ["a@b.co"], "message": "hello there"}).encode(),
    json.dumps({"email": "a@b.co", "message": {"text": "hello"}}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "nps": 99999999999999999999}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "nps": True}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "attachments": [2**40]}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "attachments": ["x"]}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "attachments": {"id": 1}}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "tags": {"a": 1}}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "tags": "[1, 2]"}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "tags": "x" * 65}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "properties": "{broken"}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "properties": 42}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "properties": DEEP}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "ip": "999.1.1.1"}).encode(),
    json.dumps({"email": "a@b.co", "message": "hello there", "name": 12}).encode(),
    json.dumps({"email": "a@b.co", "message": "x" * 20001}).encode(),
    json.dumps({"email": "not an address", "message": "hello there"}).encode(),
]


@pytest.fixture
async def owner():
    user = await make_user()
    application = await make_application(user)
    return user, application, await make_token(user)


async def _counts() -> tuple[int, ...]:
    return (
        await Feedback.all().count(),
        await Member.all().count(),
        await Tag.all().count(),
        await Reply.all().count(),
    )


@pytest.mark.parametrize("body", BAD_SUBMIT_BODIES, ids=range(len(BAD_SUBMIT_BODIES)))
async def test_malformed_submit_is_a_400_that_writes_nothing(client, owner, body):
    _, application, _ = owner
    before = await _counts()

    response = await client.post(
        f"/applications/{application.id}/submit?key={application.key_api}",
        data=body,
        headers={"Content-Type": "application/json"},
    )

    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    assert await _counts() == before


async def test_nul_characters_and_lone_surrogates_are_stored_without_error(api, owner):
    _, application, token = owner
    raw = (
        b'{"email":"a@b.co","message":"hello\\u0000 there \\ud800","name":"N\\u0000o",'
        b'"properties":"{\\"k\\": \\"v\\\\u0000\\\\udc00\\"}","tags":"a\\u0000b"}'
    )

    response = await api.post(
        f"/applications/{application.id}/submit?key={application.key_api}",
        data=raw,
        headers={"Content-Type": "application/json"},
    )
    thread = (await (await api.get(f"/applications/{application.id}/feedback", token)).get_json())["data"][0]

    assert response.status_code == 201
    assert "\x00" not in thread["message"]
    assert thread["message"].startswith("hello there")
    assert thread["tags"] == ["ab"]


@pytest.mark.parametrize(
    "query",
    [
        "limit=abc",
        "limit=-1",
        "limit=0",
        "limit=501",
        "limit=1e3",
        "offset=-5",
        "offset=x",
        "archived=maybe",
        "limit=99999999999999999999999",
    ],
)
async def test_odd_feedback_list_query_values_are_400(api, owner, query):
    _, application, token = owner

    response = await api.get(f"/applications/{application.id}/feedback?{query}", token)

    assert response.status_code == 400
    assert response.mimetype == "text/plain"


@pytest.mark.parametrize("query", ["date=2024-02-30", "date=24-01-01", "date=%00", "limit=1.5", "offset=--1"])
async def test_odd_replies_list_query_values_are_400(api, owner, query):
    _, application, token = owner

    response = await api.get(f"/applications/{application.id}/replies?{query}", token)

    assert response.status_code == 400
    assert response.mimetype == "text/plain"


@pytest.mark.parametrize(
    "path",
    [
        "/applications/abc",
        "/applications/0",
        "/applications/-1",
        "/applications/99999999999999999999",
        "/applications/1.5/feedback",
        "/applications/%00/tags",
    ],
)
async def test_odd_application_ids_are_invalid_application(api, owner, path):
    _, _, token = owner

    response = await api.get(path, token)

    assert response.status_code == 404
    assert await response.get_data(as_text=True) == "Invalid application"


@pytest.mark.parametrize("feedback_id", ["abc", "0", "99999999999999999999", "2147483648"])
async def test_odd_feedback_ids_are_invalid_feedback(api, owner, feedback_id):
    _, application, token = owner

    response = await api.get(f"/applications/{application.id}/feedback/{feedback_id}", token)

    assert response.status_code == 404
    assert await response.get_data(as_text=True) == "Invalid feedback"


@pytest.mark.parametrize(
    "body",
    [
        b"{broken",
        b"[]",
        b"null",
        DEEP.encode(),
        b'{"message": 5}',
        b'{"message": ["a"]}',
        b'{"message": "hi", "type": 3}',
    ],
    ids=range(7),
)
async def test_malformed_reply_is_a_400_that_writes_nothing(api, owner, body):
    _, application, token = owner
    thread = await make_thread(application)

    response = await api.post(
        f"/applications/{application.id}/feedback/{thread.id}/replies",
        token,
        data=body,
        headers={"Content-Type": "application/json"},
    )

    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    assert await Reply.all().count() == 0


@pytest.mark.parametrize(
    "body", [b"{broken", b"[true]", b'{"archived": "perhaps"}', b'{"archived": null}'], ids=range(4)
)
async def test_malformed_patch_is_a_400_that_changes_nothing(api, owner, body):
    _, application, token = owner
    thread = await make_thread(application)

    response = await api.patch(
        f"/applications/{application.id}/feedback/{thread.id}",
        token,
        data=body,
        headers={"Content-Type": "application/json"},
    )

    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    assert (await Feedback.get(id=thread.id)).archived is False


@pytest.mark.parametrize(
    "form",
    [
        {"name": ""},
        {"name": "x" * 201},
        {"name": "A", "url": "javascript:alert(1)"},
        {"name": "A", "url": "ftp://example.com"},
        {"name": "A", "organization_id": "99999999999999999999"},
        {"name": "A", "uploads_enabled": "maybe"},
        {"name": "A", "target_average_first_reply_time": "-1"},
        {"name": "A", "target_average_first_reply_time": "soon"},
    ],
    ids=range(8),
)
async def test_invalid_application_forms_write_nothing(api, owner, form):
    _, _, token = owner

    response = await api.post("/applications", token, form=form)

    assert response.status_code in (400, 404)
    assert response.mimetype == "text/plain"
    assert await Application.all().count() == 1


async def test_broken_multipart_upload_is_no_files_found(client, owner):
    _, application, _ = owner

    response = await client.post(
        f"/applications/{application.id}/upload?key={application.key_api}",
        data=b'--xyz\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nabc',
        headers={"Content-Type": "multipart/form-data; boundary=xyz"},
    )

    assert response.status_code == 400
    assert await response.get_data(as_text=True) == "No files found"


async def test_chunked_body_is_refused_with_411(client, owner):
    _, application, _ = owner

    response = await client.post(
        f"/applications/{application.id}/submit?key={application.key_api}",
        data=b'{"email":"a@b.co","message":"hello there"}',
        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )

    assert response.status_code == 411
    assert response.mimetype == "text/plain"


async def test_oversized_request_is_413_text(client, owner, app):
    _, application, _ = owner
    app.config["MAX_CONTENT_LENGTH"] = 1000

    response = await client.post(
        f"/applications/{application.id}/submit?key={application.key_api}",
        data=json.dumps({"email": "a@b.co", "message": "x" * 5000}).encode(),
        headers={"Content-Type": "application/json"},
    )

    assert response.status_code == 413
    assert response.mimetype == "text/plain"


async def test_unknown_route_is_a_plain_404(api):
    response = await api.get("/no/such/thing")

    assert response.status_code == 404
    assert response.mimetype == "text/plain"


async def test_wrong_method_is_a_plain_405(api, owner):
    _, _, token = owner

    response = await api.client.delete("/users/me", headers={"Authorization": f"Bearer {token}"})

    assert response.status_code == 405
    assert response.mimetype == "text/plain"
