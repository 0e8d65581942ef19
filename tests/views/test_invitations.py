"""An invitation's link in the web app: what it offers to whoever opens it, and accepting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.db import atomic
from app.models import Invitation, Membership, User
from app.services import invitations
from tests.factories import PASSWORD, csrf_of, make_organization, make_user, sign_in


@pytest.fixture
async def owner(db):
    return await make_user(email="olga@example.com", name="Olga Owner")


@pytest.fixture
async def organization(owner):
    return await make_organization(owner, name="Acme Support")


async def invite(owner, organization, email: str, role: str = "agent") -> str:
    """The path of a new invitation's link."""
    made = await invitations.invite(owner, organization, email, role)
    return "/app" + made.url.split("/app", 1)[1]


async def is_member(organization, email: str) -> bool:
    return await Membership.exists(organization_id=organization.id, user__email=email)


async def test_a_signed_in_invitee_sees_whom_and_joins(client, settings, owner, organization):
    carl = await make_user(email="carl@example.com", name="Carl")
    link = await invite(owner, organization, carl.email, "owner")
    await sign_in(client, carl)

    page = await client.get(link)
    body = await page.get_data(as_text=True)
    response = await client.post(link, form={"csrf_token": await csrf_of(client, link)})

    assert page.status_code == 200
    assert "Olga Owner invited" in body and "carl@example.com" in body and "as an owner" in body
    assert "Join Acme Support" in body
    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/organizations/{organization.id}"
    assert "You joined Acme Support." in await (await client.get(response.headers["Location"])).get_data(
        as_text=True
    )
    assert (await Membership.get(organization_id=organization.id, user_id=carl.id)).role == "owner"


async def test_an_invitee_with_an_account_is_asked_to_sign_in_and_comes_back(
    client, settings, owner, organization
):
    carl = await make_user(email="carl@example.com")
    link = await invite(owner, organization, carl.email)

    page = await client.get(link)
    body = await page.get_data(as_text=True)
    posted = await client.post(link, form={"csrf_token": await csrf_of(client)})

    assert page.status_code == 200
    assert "Sign in to accept" in body
    assert f'href="/app/login?next=/app/invitations/{link.rsplit("/", 1)[1]}"' in body
    assert 'name="password"' not in body
    assert posted.status_code == 303 and posted.headers["Location"].startswith("/app/login?next=")
    assert not await is_member(organization, carl.email)
    signed = await client.post(
        f"/app/login?next={link}",
        form={"email": carl.email, "password": PASSWORD, "csrf_token": await csrf_of(client)},
    )
    assert signed.headers["Location"] == link


async def test_a_new_person_chooses_a_name_and_password_and_is_signed_in(
    client, settings, owner, organization
):
    link = await invite(owner, organization, "newbie@example.com")

    page = await (await client.get(link)).get_data(as_text=True)
    response = await client.post(
        link,
        form={
            "csrf_token": await csrf_of(client, link),
            "name": "Nina New",
            "password": "a long password",
            "confirm_password": "a long password",
        },
    )

    assert 'name="password"' in page and "Create my account and join" in page
    assert response.status_code == 303
    user = await User.get(email="newbie@example.com")
    assert user.name == "Nina New"
    assert await is_member(organization, "newbie@example.com")
    organization_page = await client.get(response.headers["Location"])
    assert organization_page.status_code == 200
    assert "Acme Support" in await organization_page.get_data(as_text=True)


async def test_a_new_account_form_with_mistakes_comes_back_with_them(client, settings, owner, organization):
    link = await invite(owner, organization, "newbie@example.com")

    response = await client.post(
        link,
        form={
            "csrf_token": await csrf_of(client, link),
            "name": "Nina <b>",
            "password": "a long password",
            "confirm_password": "another one",
        },
    )
    short = await client.post(
        link,
        form={
            "csrf_token": await csrf_of(client, link),
            "name": "Nina",
            "password": "short",
            "confirm_password": "short",
        },
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 422
    assert "The two passwords differ." in body
    assert 'value="Nina &lt;b&gt;"' in body
    assert short.status_code == 400
    assert "at least 8 characters" in await short.get_data(as_text=True)
    assert not await User.exists(email="newbie@example.com")


async def test_signed_in_as_another_address_the_link_does_not_work(client, settings, owner, organization):
    mallory = await make_user(email="mallory@example.com")
    link = await invite(owner, organization, "carl@example.com")
    await sign_in(client, mallory)

    page = await client.get(link)
    response = await client.post(link, form={"csrf_token": await csrf_of(client, "/app/account")})

    assert page.status_code == 403
    body = await page.get_data(as_text=True)
    assert "This invitation is for carl@example.com. Sign in with that address to accept it." in body
    assert "You are signed in as mallory@example.com" in body
    assert response.status_code == 403
    assert not await is_member(organization, "mallory@example.com")
    assert (await Invitation.get(organization_id=organization.id)).accepted_at is None


async def test_an_invitation_of_another_organization_does_not_work_for_a_stranger(
    app, client, settings, owner, organization
):
    """Isolation: Bob, who belongs to none of Olga's organizations, gets nothing from a link that is
    not his (the owner's page of the organization stays 404 to him too)."""
    bob = await make_user(email="bob@example.com")
    await make_organization(bob, name="Bob Ltd")
    link = await invite(owner, organization, "carl@example.com")
    await sign_in(client, bob)

    response = await client.post(link, form={"csrf_token": await csrf_of(client, "/app/account")})

    assert response.status_code == 403
    assert (await client.get(f"/app/organizations/{organization.id}")).status_code == 404
    assert not await is_member(organization, bob.email)


async def test_an_accepted_link_says_so(client, settings, owner, organization):
    carl = await make_user(email="carl@example.com")
    link = await invite(owner, organization, carl.email)
    await invitations.accept(carl, link.rsplit("/", 1)[1])

    response = await client.get(link)

    assert response.status_code == 410
    assert "This invitation was accepted already." in await response.get_data(as_text=True)


async def test_a_revoked_link_says_so(client, settings, owner, organization):
    link = await invite(owner, organization, "carl@example.com")
    invitation = await Invitation.get(organization_id=organization.id)
    await invitations.revoke(owner, organization, invitation.id)

    response = await client.get(link)
    posted = await client.post(
        link, form={"csrf_token": await csrf_of(client), "name": "Carl", "password": "a long password"}
    )

    assert response.status_code == 410
    assert "This invitation was revoked." in await response.get_data(as_text=True)
    assert posted.status_code == 410
    assert not await User.exists(email="carl@example.com")


async def test_an_expired_link_says_so(client, settings, owner, organization):
    link = await invite(owner, organization, "carl@example.com")
    past = datetime.now(UTC) - timedelta(seconds=1)
    await atomic(lambda: Invitation.filter(organization_id=organization.id).update(expires_at=past))

    response = await client.get(link)

    assert response.status_code == 410
    assert "This invitation has expired." in await response.get_data(as_text=True)


async def test_an_unknown_link_is_not_found(client, settings):
    response = await client.get("/app/invitations/not-a-real-token")

    assert response.status_code == 404
    assert "This invitation link is not valid." in await response.get_data(as_text=True)


async def test_accepting_without_csrf_token_is_refused(client, settings, owner, organization):
    link = await invite(owner, organization, "newbie@example.com")

    response = await client.post(
        link, form={"name": "Nina", "password": "a long password", "confirm_password": "a long password"}
    )

    assert response.status_code == 400
    assert not await User.exists(email="newbie@example.com")


async def test_names_are_escaped(client, settings, organization):
    sly = await make_user(email="sly@example.com", name="<script>alert(1)</script>")
    sly_org = await make_organization(sly, name="<b>Org</b>")
    link = await invite(sly, sly_org, "carl@example.com")

    body = await (await client.get(link)).get_data(as_text=True)

    assert "<script>alert(1)</script>" not in body and "<b>Org</b>" not in body
    assert "&lt;script&gt;" in body
