"""GET /organizations and GET /organizations/{id}."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.models import Organization
from tests.factories import body_json, body_text, make_organization, make_token, make_user


@pytest.fixture
async def user(db: str):
    return await make_user()


@pytest.fixture
async def token(user) -> str:
    return await make_token(user, "read")


async def assert_invalid_organization(response) -> None:
    assert response.status_code == 404
    assert response.mimetype == "text/plain"
    assert await body_text(response) == "Invalid organization"


async def test_list_returns_the_organizations_the_user_belongs_to_ordered_by_id(api, user, token):
    stranger = await make_user()
    first = await make_organization(user, name="First")
    await make_organization(stranger, name="Foreign")
    await make_organization(name="Empty")
    shared = await make_organization(stranger, user, name="Shared")

    response = await api.get("/organizations", token)

    assert response.status_code == 200
    listed = (await body_json(response))["data"]
    assert [(o["id"], o["name"]) for o in listed] == [(first.id, "First"), (shared.id, "Shared")]


async def test_list_is_empty_for_a_user_without_organizations(api, token):
    await make_organization(await make_user())

    response = await api.get("/organizations", token)

    assert response.status_code == 200
    assert await body_json(response) == {"data": []}


async def test_list_shows_each_organization_once_whatever_its_members(api, user, token):
    await make_organization(user, await make_user(), await make_user(), name="Crowded")

    response = await api.get("/organizations", token)

    assert [o["name"] for o in (await body_json(response))["data"]] == ["Crowded"]


async def test_show_returns_the_organization(api, user, token):
    organization = await make_organization(user, name="Acme Corp")

    response = await api.get(f"/organizations/{organization.id}", token)

    assert response.status_code == 200
    assert await body_json(response) == {
        "data": {
            "id": organization.id,
            "name": "Acme Corp",
            "created_at": int(organization.created_at.timestamp()),
            "updated_at": int(organization.updated_at.timestamp()),
            "role": "owner",
        }
    }


async def test_list_gives_the_users_role_in_each_organization(api, user, token):
    other = await make_user()
    owned = await make_organization(user, other, name="Owned")
    worked = await make_organization(other, user, name="Worked")

    response = await api.get("/organizations", token)

    listed = (await body_json(response))["data"]
    assert [(o["id"], o["role"]) for o in listed] == [(owned.id, "owner"), (worked.id, "agent")]


async def test_show_gives_each_member_their_own_role(api, user, token):
    agent = await make_user()
    organization = await make_organization(user, agent)

    as_owner = await body_json(await api.get(f"/organizations/{organization.id}", token))
    as_agent = await body_json(
        await api.get(f"/organizations/{organization.id}", await make_token(agent, "read"))
    )

    assert as_owner["data"]["role"] == "owner"
    assert as_agent["data"]["role"] == "agent"
    assert {k: v for k, v in as_owner["data"].items() if k != "role"} == {
        k: v for k, v in as_agent["data"].items() if k != "role"
    }


async def test_show_and_list_agree(api, user, token):
    organization = await make_organization(user)

    listed = (await body_json(await api.get("/organizations", token)))["data"]
    shown = (await body_json(await api.get(f"/organizations/{organization.id}", token)))["data"]

    assert listed == [shown]


async def test_organization_fields_have_the_specified_types(api, user, token):
    before = int(datetime.now(UTC).timestamp())
    organization = await make_organization(user)
    after = int(datetime.now(UTC).timestamp())

    shown = (await body_json(await api.get(f"/organizations/{organization.id}", token)))["data"]

    assert list(shown) == ["id", "name", "created_at", "updated_at", "role"]
    assert type(shown["id"]) is int
    assert type(shown["name"]) is str
    assert all(type(shown[name]) is int for name in ("created_at", "updated_at"))
    assert before <= shown["created_at"] <= after
    assert before <= shown["updated_at"] <= after


@pytest.mark.parametrize("organization_id", ["987654", "0", "abc", "-1", "99999999999999999999"])
async def test_show_unknown_organization_is_invalid_organization(api, token, organization_id):
    response = await api.get(f"/organizations/{organization_id}", token)

    await assert_invalid_organization(response)


async def test_show_organization_the_user_does_not_belong_to_is_invalid_organization(api, token):
    foreign = await make_organization(await make_user())

    response = await api.get(f"/organizations/{foreign.id}", token)

    await assert_invalid_organization(response)


async def test_show_organization_without_members_is_invalid_organization(api, token):
    empty = await make_organization()

    response = await api.get(f"/organizations/{empty.id}", token)

    await assert_invalid_organization(response)
    assert await Organization.exists(id=empty.id)
