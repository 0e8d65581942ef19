"""Retention through the management API: retention_days and retention_archived_only of an application."""

from __future__ import annotations

import pytest

from app.services.deletion import ADMINISTRATORS_ONLY
from tests.factories import (
    Api,
    application_row,
    body_json,
    body_text,
    make_application,
    make_organization,
    make_token,
    make_user,
)


async def _data(response) -> dict[str, object]:
    assert response.status_code == 200, await body_text(response)
    data: dict[str, object] = (await body_json(response))["data"]
    return data


async def _refused(response, status: int, message: str) -> None:
    assert response.status_code == status
    assert response.mimetype == "text/plain"
    assert await body_text(response) == message


async def test_a_new_application_keeps_its_threads_forever(api, token, application):
    data = await _data(await api.get(f"/applications/{application.id}", token))

    assert (data["retention_days"], data["retention_archived_only"]) == (None, False)


async def test_retention_is_set_on_create(api, token):
    data = await _data(await api.post("/applications", token, json={"name": "Shop", "retention_days": 90}))

    assert (data["retention_days"], data["retention_archived_only"]) == (90, False)


async def test_retention_round_trips_as_json_and_as_a_form(api: Api, token, application):
    path = f"/applications/{application.id}"

    sent = await _data(
        await api.put(path, token, json={"retention_days": 30, "retention_archived_only": True})
    )
    shown = await _data(await api.get(path, token))
    cleared = await _data(
        await api.post(path, token, form={"retention_days": "", "retention_archived_only": "0"})
    )

    assert (sent["retention_days"], sent["retention_archived_only"]) == (30, True)
    assert (shown["retention_days"], shown["retention_archived_only"]) == (30, True)
    assert (cleared["retention_days"], cleared["retention_archived_only"]) == (None, False)


async def test_null_days_switch_retention_off(api, token, agent):
    application = await make_application(agent, retention_days=30)

    data = await _data(await api.put(f"/applications/{application.id}", token, json={"retention_days": None}))

    assert data["retention_days"] is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"retention_days": 0}, "The retention days field must be between 1 and 3650."),
        ({"retention_days": 3651}, "The retention days field must be between 1 and 3650."),
        ({"retention_days": "a month"}, "The retention days field must be an integer."),
        ({"retention_days": True}, "The retention days field must be an integer."),
        ({"retention_archived_only": "maybe"}, "The retention archived only field must be true or false."),
    ],
)
async def test_bad_retention_values_are_400_and_change_nothing(api, token, agent, body, message):
    application = await make_application(agent, retention_days=30)

    response = await api.put(f"/applications/{application.id}", token, json={"name": "Renamed", **body})

    await _refused(response, 400, message)
    stored = await application_row(application.id)
    assert (stored.name, stored.retention_days, stored.retention_archived_only) == (
        application.name,
        30,
        False,
    )


async def test_bad_retention_on_create_is_400(api, token):
    response = await api.post("/applications", token, json={"name": "Shop", "retention_days": -1})

    await _refused(response, 400, "The retention days field must be between 1 and 3650.")


@pytest.mark.parametrize(
    "body", [{"retention_days": 1}, {"retention_days": None}, {"retention_archived_only": True}]
)
async def test_an_agent_of_the_organization_may_not_change_retention(api, body):
    owner, member = await make_user(), await make_user()
    organization = await make_organization(member, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id, retention_days=30)
    member_token = await make_token(member)

    response = await api.put(
        f"/applications/{application.id}", member_token, json={"name": "Renamed", **body}
    )

    await _refused(response, 403, ADMINISTRATORS_ONLY)
    stored = await application_row(application.id)
    assert (stored.name, stored.retention_days, stored.retention_archived_only) == (
        application.name,
        30,
        False,
    )


async def test_an_agent_still_sees_the_retention_and_changes_other_fields(api):
    owner, member = await make_user(), await make_user()
    organization = await make_organization(member, owners=(owner,))
    application = await make_application(owner, organization_id=organization.id, retention_days=30)

    data = await _data(
        await api.put(f"/applications/{application.id}", await make_token(member), json={"name": "Renamed"})
    )

    assert (data["name"], data["retention_days"]) == ("Renamed", 30)


async def test_an_organization_owner_may_change_retention_of_an_application_they_did_not_create(api):
    creator, owner = await make_user(), await make_user()
    organization = await make_organization(owners=(owner, creator))
    application = await make_application(creator, organization_id=organization.id)

    data = await _data(
        await api.put(f"/applications/{application.id}", await make_token(owner), json={"retention_days": 7})
    )

    assert data["retention_days"] == 7


async def test_a_second_user_cannot_see_or_change_the_retention(api, application):
    stranger = await make_token(await make_user())

    shown = await api.get(f"/applications/{application.id}", stranger)
    changed = await api.put(f"/applications/{application.id}", stranger, json={"retention_days": 1})

    await _refused(shown, 404, "Invalid application")
    await _refused(changed, 404, "Invalid application")
    assert (await application_row(application.id)).retention_days is None
