"""What the fuzzer found answering 500, each now a clear 4xx (or a correct 200) that writes nothing."""

from __future__ import annotations

import json

import pytest

from app.models import Application, Feedback, Reply
from app.services.validation import MAX_JSON_DEPTH
from tests.factories import body_json, body_text, make_reply, make_thread


def nested(depth: int) -> object:
    """A value whose lists nest ``depth`` levels deep."""
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


def nested_text(depth: int) -> str:
    return "[" * depth + "]" * depth


def submit_path(application: Application) -> str:
    return f"/applications/{application.id}/submit?key={application.key_api}"


async def test_replies_on_the_last_date_there_is_are_listed(api, token, application, agent):
    await make_reply(agent, application, await make_thread(application))

    response = await api.get(f"/applications/{application.id}/replies?date=9999-12-31", token)

    assert response.status_code == 200
    payload = await body_json(response)
    assert payload["data"] == [] and payload["pagination"]["total"] == 0


async def test_replies_on_the_first_date_there_is_are_listed(api, token, application):
    response = await api.get(f"/applications/{application.id}/replies?date=0001-01-01", token)

    assert response.status_code == 200
    assert (await body_json(response))["data"] == []


@pytest.mark.parametrize("depth", [500, 700, 950, 5000])
async def test_deeply_nested_properties_on_submit_are_a_400(client, application, depth):
    body = '{"email": "a@b.co", "message": "hello there", "properties": ' + nested_text(depth) + "}"

    response = await client.post(submit_path(application), data=body.encode())

    assert response.status_code == 400
    assert await body_text(response) == "Invalid request body"
    assert await Feedback.all().count() == 0


async def test_properties_as_deep_as_allowed_are_kept(api, token, application):
    properties = {"deep": nested(MAX_JSON_DEPTH - 2)}

    submitted = await api.post(
        submit_path(application), json={"email": "a@b.co", "message": "hello there", "properties": properties}
    )
    listed = await api.get(f"/applications/{application.id}/feedback", token)

    assert submitted.status_code == 201
    assert (await body_json(listed))["data"][0]["properties"] == properties


async def test_deeply_nested_properties_given_as_a_string_are_invalid_properties(client, application):
    body = {"email": "a@b.co", "message": "hello there", "properties": nested_text(600)}

    response = await client.post(submit_path(application), json=body)

    assert response.status_code == 400
    assert await body_text(response) == "Invalid properties"


@pytest.mark.parametrize("method", ["patch", "reply", "create", "update"])
async def test_deeply_nested_management_bodies_are_a_400_that_says_why(api, token, application, method):
    thread = await make_thread(application)
    body = ('{"archived": true, "message": "hi there", "name": "X", "x": ' + nested_text(700) + "}").encode()
    headers = {"Content-Type": "application/json"}
    base = f"/applications/{application.id}"
    call = {
        "patch": lambda: api.patch(f"{base}/feedback/{thread.id}", token, data=body, headers=headers),
        "reply": lambda: api.post(f"{base}/feedback/{thread.id}/replies", token, data=body, headers=headers),
        "create": lambda: api.post("/applications", token, data=body, headers=headers),
        "update": lambda: api.put(base, token, data=body, headers=headers),
    }[method]

    response = await call()

    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    assert await body_text(response) == (
        f"The request body must not be nested more than {MAX_JSON_DEPTH} levels deep."
    )
    assert await Application.all().count() == 1
    assert await Reply.all().count() == 0
    assert (await Feedback.get(id=thread.id)).archived is False


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
async def test_non_finite_numbers_in_properties_are_refused(client, application, number):
    body = '{"email": "a@b.co", "message": "hello there", "properties": {"budget": ' + number + "}}"

    response = await client.post(submit_path(application), data=body.encode())

    assert response.status_code == 400
    assert await body_text(response) == "Invalid request body"
    assert await Feedback.all().count() == 0


async def test_non_finite_numbers_are_refused_in_properties_given_as_a_string(client, application):
    body = {"email": "a@b.co", "message": "hello there", "properties": '{"budget": NaN}'}

    response = await client.post(submit_path(application), json=body)

    assert response.status_code == 400
    assert await body_text(response) == "Invalid properties"


async def test_the_feedback_list_stays_json_after_a_non_finite_submit(api, token, application):
    await api.client.post(
        submit_path(application),
        data=b'{"email": "a@b.co", "message": "hello there", "properties": {"budget": Infinity}}',
    )
    await make_thread(application, properties={"budget": 1.5})

    response = await api.get(f"/applications/{application.id}/feedback", token)

    text = await body_text(response)
    assert json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the list"))
    assert "Infinity" not in text


@pytest.mark.parametrize("number", ["NaN", "1e400"])
async def test_non_finite_numbers_in_a_management_body_say_why(api, token, application, number):
    thread = await make_thread(application)

    response = await api.patch(
        f"/applications/{application.id}/feedback/{thread.id}",
        token,
        data=('{"archived": true, "x": ' + number + "}").encode(),
        headers={"Content-Type": "application/json"},
    )

    assert response.status_code == 400
    assert "must not hold" in await body_text(response)
    assert (await Feedback.get(id=thread.id)).archived is False


async def test_offset_beyond_the_range_says_so(api, token, application):
    response = await api.get(f"/applications/{application.id}/feedback?offset=2147483648", token)

    assert response.status_code == 400
    assert await body_text(response) == "The offset field must not be greater than 2147483647."


async def test_a_very_long_integer_is_still_called_an_integer(api, token, application):
    response = await api.get(f"/applications/{application.id}/replies?limit=9999999999999999999999", token)

    assert response.status_code == 400
    assert await body_text(response) == "The limit field must not be greater than 500."


@pytest.mark.parametrize("organization_id", ["9999999999999999999", "99999999999999999999999"])
async def test_a_huge_organization_id_is_an_invalid_organization(api, token, organization_id):
    response = await api.post("/applications", token, form={"name": "A", "organization_id": organization_id})

    assert response.status_code == 404
    assert await body_text(response) == "Invalid organization"
