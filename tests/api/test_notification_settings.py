"""An agent's notification settings of an application, through the management API."""

from __future__ import annotations

import pytest

from app.models import NotificationSetting
from app.services.organizations import add_member
from tests.factories import body_json, body_text, make_application, make_organization, make_token, make_user


def settings_path(application_id: int) -> str:
    return f"/applications/{application_id}/notifications"


async def mode_of(api, token: str, application_id: int) -> str:
    response = await api.get(settings_path(application_id), token)
    assert response.status_code == 200, await body_text(response)
    body = await body_json(response)
    assert list(body) == ["data"] and list(body["data"]) == ["mode"]
    return body["data"]["mode"]


async def assert_error(response, status: int, message: str) -> None:
    assert (response.status_code, response.mimetype) == (status, "text/plain")
    assert await body_text(response) == message


@pytest.fixture
async def shared(agent, application):
    """An application of the agent's organization, and a token of another agent of it."""
    organization = await make_organization(agent, name="Acme")
    colleague = await make_user()
    await add_member(organization, colleague)
    shared_app = await make_application(agent, organization_id=organization.id)
    return shared_app, await make_token(colleague)


async def test_an_administrator_gets_the_digest_by_default(api, token, application):
    assert await mode_of(api, token, application.id) == "digest"


async def test_another_agent_gets_nothing_by_default(api, shared):
    shared_app, colleague_token = shared

    assert await mode_of(api, colleague_token, shared_app.id) == "none"


@pytest.mark.parametrize("mode", ["instant", "digest", "none"])
async def test_a_json_choice_is_recorded(api, token, application, mode):
    response = await api.put(settings_path(application.id), token, json={"mode": mode})

    assert response.status_code == 200
    assert await body_json(response) == {"data": {"mode": mode}}
    assert await mode_of(api, token, application.id) == mode


async def test_a_form_choice_is_recorded(api, token, application):
    response = await api.put(settings_path(application.id), token, form={"mode": "instant"})

    assert await body_json(response) == {"data": {"mode": "instant"}}
    assert await mode_of(api, token, application.id) == "instant"


async def test_choosing_again_replaces_the_choice(api, token, application):
    await api.put(settings_path(application.id), token, json={"mode": "instant"})
    await api.put(settings_path(application.id), token, json={"mode": "none"})

    assert await mode_of(api, token, application.id) == "none"
    assert await NotificationSetting.all().count() == 1


async def test_each_agent_chooses_for_themselves(api, agent, token, shared):
    shared_app, colleague_token = shared

    await api.put(settings_path(shared_app.id), colleague_token, json={"mode": "instant"})

    assert await mode_of(api, colleague_token, shared_app.id) == "instant"
    assert await mode_of(api, token, shared_app.id) == "digest"


@pytest.mark.parametrize(
    "body",
    [{}, {"mode": "weekly"}, {"mode": ""}, {"mode": None}, {"mode": ["instant"]}, {"mode": "INSTANT"}],
)
async def test_a_bad_mode_is_400(api, token, application, body):
    response = await api.put(settings_path(application.id), token, json=body)

    await assert_error(response, 400, "The mode field must be instant, digest or none.")
    assert await NotificationSetting.all().count() == 0


@pytest.mark.parametrize("body", [b'{"mode": "instant"', b'["instant"]', b"mode"])
async def test_a_body_that_is_not_a_json_object_is_400(api, token, application, body):
    response = await api.put(
        settings_path(application.id), token, data=body, headers={"Content-Type": "application/json"}
    )

    await assert_error(response, 400, "The request body must be a JSON object.")
    assert await NotificationSetting.all().count() == 0


async def test_a_read_token_may_look_but_not_choose(api, agent, application):
    reader = await make_token(agent, "read")

    assert await mode_of(api, reader, application.id) == "digest"
    response = await api.put(settings_path(application.id), reader, json={"mode": "none"})
    await assert_error(response, 403, "Insufficient scope")
    assert await NotificationSetting.all().count() == 0


@pytest.mark.parametrize("application_id", ["999999", "0", "abc", str(2**31)])
async def test_an_unknown_application_is_invalid_application(api, token, application_id):
    await assert_error(
        await api.get(f"/applications/{application_id}/notifications", token), 404, "Invalid application"
    )
    response = await api.put(f"/applications/{application_id}/notifications", token, json={"mode": "none"})
    await assert_error(response, 404, "Invalid application")


async def test_a_stranger_is_told_the_application_does_not_exist(api, application):
    stranger = await make_user()
    await make_application(stranger)
    stranger_token = await make_token(stranger)

    await assert_error(
        await api.get(settings_path(application.id), stranger_token), 404, "Invalid application"
    )
    response = await api.put(settings_path(application.id), stranger_token, json={"mode": "instant"})
    await assert_error(response, 404, "Invalid application")
    assert await NotificationSetting.all().count() == 0
