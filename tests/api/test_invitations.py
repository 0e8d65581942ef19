"""Invitations to an organization through the management API: its owners list, make and revoke
them; accepting is the web app's (tests/views/test_invitations.py)."""

from __future__ import annotations

import pytest

from app.models import Invitation, Membership
from app.services.organizations import OWNERS_ONLY
from tests.factories import body_json, body_text, make_organization, make_token, make_user


def invitations_path(organization_id: int, suffix: str = "") -> str:
    return f"/organizations/{organization_id}/invitations{suffix}"


async def assert_error(response, status: int, message: str) -> None:
    assert (response.status_code, response.mimetype) == (status, "text/plain"), await body_text(response)
    assert await body_text(response) == message


@pytest.fixture
async def organization(agent):
    """An organization that ``agent`` (the token's user) owns."""
    return await make_organization(agent, name="Acme")


async def test_an_owner_invites_and_gets_the_link_once(api, token, agent, organization, settings):
    response = await api.post(
        invitations_path(organization.id), token, json={"email": "Carl@Example.com", "role": "owner"}
    )

    assert response.status_code == 201
    data = (await body_json(response))["data"]
    assert data["email"] == "carl@example.com"
    assert data["role"] == "owner"
    assert data["organization_id"] == organization.id
    assert data["invited_by"] == {"id": agent.id, "email": agent.email, "name": agent.name}
    assert data["expires_at"] - data["created_at"] == 7 * 86400
    assert data["url"].startswith(f"{settings.base_url}/app/invitations/")
    assert data["emailed"] is False
    listed = (await body_json(await api.get(invitations_path(organization.id), token)))["data"]
    assert [item["id"] for item in listed] == [data["id"]]
    assert "url" not in listed[0]
    assert not await Membership.exists(organization_id=organization.id, user__email="carl@example.com")


async def test_a_form_invites_an_agent_by_default(api, token, organization):
    response = await api.post(invitations_path(organization.id), token, form={"email": "carl@example.com"})

    assert response.status_code == 201
    assert (await body_json(response))["data"]["role"] == "agent"


async def test_an_owner_revokes_an_invitation(api, token, organization):
    made = await body_json(
        await api.post(invitations_path(organization.id), token, json={"email": "carl@example.com"})
    )
    path = invitations_path(organization.id, f"/{made['data']['id']}")

    response = await api.delete(path, token)

    assert response.status_code == 204
    assert (await body_json(await api.get(invitations_path(organization.id), token)))["data"] == []
    assert (await Invitation.get(id=made["data"]["id"])).revoked_at is not None
    await assert_error(await api.delete(path, token), 404, "Invalid invitation")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "The email field must be a valid email address."),
        ({"email": "nope"}, "The email field must be a valid email address."),
        ({"email": 7}, "The email field must be a valid email address."),
        ({"email": "carl@example.com", "role": "admin"}, "The selected role is invalid."),
        ({"email": "carl@example.com", "role": None}, "The selected role is invalid."),
        ({"email": "agent@example.com"}, "agent@example.com is a member of the organization already."),
    ],
)
async def test_invalid_invitations_are_refused(api, token, organization, body, message):
    response = await api.post(invitations_path(organization.id), token, json=body)

    await assert_error(response, 400, message)
    assert not await Invitation.exists()


async def test_an_agent_of_the_organization_may_not_see_make_or_revoke_invitations(
    api, token, agent, organization
):
    owner = await make_user()
    theirs = await make_organization(agent, owners=(owner,), name="Theirs")
    made = await body_json(
        await api.post(
            invitations_path(theirs.id), await make_token(owner), json={"email": "dan@example.com"}
        )
    )
    revoke = invitations_path(theirs.id, f"/{made['data']['id']}")

    await assert_error(await api.get(invitations_path(theirs.id), token), 403, OWNERS_ONLY)
    await assert_error(
        await api.post(invitations_path(theirs.id), token, json={"email": "eve@example.com"}),
        403,
        OWNERS_ONLY,
    )
    await assert_error(await api.delete(revoke, token), 403, OWNERS_ONLY)
    # Under an organization the agent owns, another organization's invitation is not found.
    await assert_error(
        await api.delete(invitations_path(organization.id, f"/{made['data']['id']}"), token),
        404,
        "Invalid invitation",
    )
    assert await Invitation.filter(revoked_at=None).count() == 1


async def test_a_read_token_lists_but_does_not_invite(api, agent, organization):
    reader = await make_token(agent, "read")

    assert (await api.get(invitations_path(organization.id), reader)).status_code == 200
    await assert_error(
        await api.post(invitations_path(organization.id), reader, json={"email": "carl@example.com"}),
        403,
        "Insufficient scope",
    )


@pytest.mark.parametrize("suffix", ["", "/1"])
async def test_unknown_organizations_and_ids_are_not_found(api, token, suffix):
    method = "get" if not suffix else "delete"
    await assert_error(
        await getattr(api, method)(invitations_path(999999, suffix), token), 404, "Invalid organization"
    )


async def test_an_invitation_id_that_is_not_a_number_is_not_found(api, token, organization):
    await assert_error(
        await api.delete(invitations_path(organization.id, "/abc"), token), 404, "Invalid invitation"
    )
