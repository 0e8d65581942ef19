"""Organizations: the list, one organization's page, inviting and removing members, their roles.

The invitation's own page (accepting) is tests/views/test_invitations.py."""

from __future__ import annotations

import re

from app.models import Invitation, Membership, Organization, OutboundEmail
from app.services.security import sha256_hex
from tests.factories import (
    csrf_of,
    make_application,
    make_organization,
    make_user,
    sign_in,
)

HTMX = {"HX-Request": "true"}


async def _signed_in_other(app):
    """A second client, signed in as another agent."""
    bob = await make_user(email="bob@example.com", name="Bob Other")
    other = app.test_client()
    await sign_in(other, bob)
    return other, bob


async def _invite(client, organization_id: int, email: str, headers=None, role: str = "agent"):
    return await client.post(
        f"/app/organizations/{organization_id}/invitations",
        form={"csrf_token": await csrf_of(client, "/app/organizations"), "email": email, "role": role},
        headers=headers or {},
    )


async def _remove(client, organization_id: int, user_id: int, headers=None):
    return await client.post(
        f"/app/organizations/{organization_id}/members/{user_id}/remove",
        form={"csrf_token": await csrf_of(client, "/app/organizations")},
        headers=headers or {},
    )


async def _change_role(client, organization_id: int, user_id: int, role: str, headers=None):
    return await client.post(
        f"/app/organizations/{organization_id}/members/{user_id}/role",
        form={"csrf_token": await csrf_of(client, "/app/organizations"), "role": role},
        headers=headers or {},
    )


async def _roles(organization) -> dict[int, str]:
    """Each member's user id and role."""
    return dict(await Membership.filter(organization_id=organization.id).values_list("user_id", "role"))


async def test_list_shows_only_the_agents_organizations_with_counts(client, agent):
    colleague = await make_user(email="carl@example.com")
    mine = await make_organization(agent, colleague, name="Acme Support")
    await make_application(agent, organization_id=mine.id)
    await make_organization(await make_user(email="x@example.com"), name="Someone Else Inc")
    await sign_in(client, agent)

    response = await client.get("/app/organizations")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await response.get_data(as_text=True)
    assert "Acme Support" in body
    assert "Someone Else Inc" not in body
    assert "2 members" in body
    assert "1 application" in body


async def test_list_runs_a_bounded_number_of_queries(client, agent, queries):
    await sign_in(client, agent)
    await make_organization(agent, name="One")
    queries.statements.clear()
    await client.get("/app/organizations")
    few = queries.count
    for number in range(5):
        organization = await make_organization(agent, await make_user(), name=f"Org {number}")
        await make_application(agent, organization_id=organization.id)
    queries.statements.clear()

    await client.get("/app/organizations")

    assert queries.count == few


async def test_list_shows_an_empty_state(client, agent):
    await sign_in(client, agent)

    body = await (await client.get("/app/organizations")).get_data(as_text=True)

    assert "You don't belong to any organization yet." in body


async def test_creating_an_organization_makes_the_agent_its_owner(client, agent):
    await sign_in(client, agent)

    response = await client.post(
        "/app/organizations",
        form={"csrf_token": await csrf_of(client, "/app/organizations"), "name": "  Acme  "},
    )

    organization = await Organization.get(name="Acme")
    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/organizations/{organization.id}"
    assert await Membership.filter(organization_id=organization.id).values_list("user_id", "role") == [
        (agent.id, "owner")
    ]


async def test_creating_an_organization_needs_a_name(client, agent):
    await sign_in(client, agent)

    response = await client.post(
        "/app/organizations", form={"csrf_token": await csrf_of(client, "/app/organizations"), "name": ""}
    )

    assert response.status_code == 422
    assert "Give the organization a name." in await response.get_data(as_text=True)
    assert not await Organization.exists()


async def test_creating_without_csrf_token_is_refused(client, agent):
    await sign_in(client, agent)

    response = await client.post("/app/organizations", form={"name": "Acme"})

    assert response.status_code == 400
    assert not await Organization.exists()


async def test_organization_page_shows_members_and_applications(client, agent):
    organization = await make_organization(agent, await make_user(email="carl@example.com", name="Carl"))
    application = await make_application(agent, organization_id=organization.id, name="Mobile app")
    await sign_in(client, agent)

    response = await client.get(f"/app/organizations/{organization.id}")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = await response.get_data(as_text=True)
    assert "carl@example.com" in body and "Carl" in body
    assert "/avatars/" in body
    assert "Mobile app" in body
    assert f'href="/app/applications/{application.id}/feedback"' in body


async def test_inviting_shows_the_link_once_and_adds_nobody(client, agent):
    organization = await make_organization(agent)
    carl = await make_user(email="carl@example.com", name="Carl")
    await sign_in(client, agent)

    response = await _invite(client, organization.id, " Carl@Example.com ")

    assert response.status_code == 200
    body = await response.get_data(as_text=True)
    assert "Invitation for carl@example.com made. Copy its link now: it is shown only once." in body
    link = re.search(r'value="(http://earful\.test/app/invitations/[^"]+)"', body)
    assert link, body
    invitation = await Invitation.get(organization_id=organization.id)
    assert invitation.token_hash == sha256_hex(link.group(1).rsplit("/", 1)[1])
    assert not await Membership.exists(organization_id=organization.id, user_id=carl.id)
    page = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)
    assert link.group(1) not in page
    assert "Pending invitations" in page and "carl@example.com" in page


async def test_inviting_with_htmx_answers_the_members_fragment_with_the_link(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)

    response = await _invite(client, organization.id, "carl@example.com", HTMX, role="owner")

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="members"')
    assert "/app/invitations/" in body and 'data-copy="#invitation-link"' in body
    assert (await Invitation.get(organization_id=organization.id)).role == "owner"


async def test_with_e_mail_the_link_is_sent_and_not_shown(app, client, agent, mail_settings):
    organization = await make_organization(agent)
    await sign_in(client, agent)

    response = await _invite(client, organization.id, "carl@example.com")

    assert response.status_code == 303
    page = await (await client.get(response.headers["Location"].split("#")[0])).get_data(as_text=True)
    assert "Invitation sent to carl@example.com." in page
    assert "/app/invitations/" not in page
    assert (await OutboundEmail.get()).kind == "invitation"


async def test_inviting_a_member_shows_an_error(client, agent):
    organization = await make_organization(agent, await make_user(email="carl@example.com"))
    await sign_in(client, agent)

    response = await _invite(client, organization.id, "carl@example.com")

    assert response.status_code == 400
    body = await response.get_data(as_text=True)
    assert "carl@example.com is a member of the organization already." in body
    assert 'value="carl@example.com"' in body
    assert not await Invitation.exists()


async def test_inviting_needs_an_address(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)

    response = await _invite(client, organization.id, "")

    assert response.status_code == 422
    assert "Enter the e-mail address to invite." in await response.get_data(as_text=True)


async def test_revoking_asks_first_without_javascript(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)
    await _invite(client, organization.id, "carl@example.com")
    invitation = await Invitation.get(organization_id=organization.id)
    revoke = f"/app/organizations/{organization.id}/invitations/{invitation.id}/revoke"

    page = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)
    confirm = await client.get(revoke)
    response = await client.post(revoke, form={"csrf_token": await csrf_of(client, revoke)})

    assert f'action="{revoke}"' in page and f'hx-post="{revoke}"' in page and "hx-confirm=" in page
    assert confirm.status_code == 200
    assert "Revoke the invitation of carl@example.com?" in await confirm.get_data(as_text=True)
    assert response.status_code == 303
    assert (await Invitation.get(id=invitation.id)).revoked_at is not None
    after = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)
    assert "Invitation revoked: its link no longer works." in after
    assert "Pending invitations" not in after
    assert (await client.get(revoke)).status_code == 404


async def test_revoking_with_htmx_answers_the_members_fragment(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)
    await _invite(client, organization.id, "carl@example.com")
    invitation = await Invitation.get(organization_id=organization.id)

    response = await client.post(
        f"/app/organizations/{organization.id}/invitations/{invitation.id}/revoke",
        form={"csrf_token": await csrf_of(client, "/app/organizations")},
        headers=HTMX,
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="members"')
    assert "carl@example.com" not in body


async def test_removing_a_member(client, agent):
    carl = await make_user(email="carl@example.com")
    organization = await make_organization(agent, carl)
    await sign_in(client, agent)

    response = await _remove(client, organization.id, carl.id)

    assert response.status_code == 303
    assert response.headers["Location"].startswith(f"/app/organizations/{organization.id}")
    assert not await Membership.exists(organization_id=organization.id, user_id=carl.id)


async def test_removing_a_member_with_htmx_answers_the_members_fragment(client, agent):
    carl = await make_user(email="carl@example.com")
    organization = await make_organization(agent, carl)
    await sign_in(client, agent)

    response = await _remove(client, organization.id, carl.id, HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="members"')
    assert "carl@example.com" not in body


async def test_removing_yourself_lands_on_the_list_without_the_organization(client, agent):
    organization = await make_organization(await make_user(), agent, name="Leaving Ltd")
    await sign_in(client, agent)

    response = await _remove(client, organization.id, agent.id)

    assert response.status_code == 303
    assert response.headers["Location"] == "/app/organizations"
    assert "Leaving Ltd" not in await (await client.get("/app/organizations")).get_data(as_text=True)
    assert (await client.get(f"/app/organizations/{organization.id}")).status_code == 404


async def test_removing_yourself_with_htmx_redirects_the_browser(client, agent):
    organization = await make_organization(await make_user(), agent)
    await sign_in(client, agent)

    response = await _remove(client, organization.id, agent.id, HTMX)

    assert response.status_code == 204
    assert response.headers["HX-Redirect"] == "/app/organizations"


async def test_removing_the_last_member_is_refused(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)

    response = await _remove(client, organization.id, agent.id)

    assert response.status_code == 400
    assert "An organization needs an owner" in await response.get_data(as_text=True)
    assert await Membership.exists(organization_id=organization.id, user_id=agent.id)


async def test_the_last_owner_cannot_leave_and_is_shown_why(client, agent):
    colleague = await make_user()
    organization = await make_organization(agent, colleague)
    await sign_in(client, agent)

    page = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)
    response = await _remove(client, organization.id, agent.id, HTMX)

    assert f"/members/{agent.id}/remove" not in page
    assert "make another member an owner before you leave" in page
    assert response.status_code == 400
    body = await response.get_data(as_text=True)
    assert body.lstrip().startswith('<section id="members"')
    assert "An organization needs an owner: make another member an owner first." in body
    assert await _roles(organization) == {agent.id: "owner", colleague.id: "agent"}


async def test_an_owner_leaves_when_another_owner_remains(client, agent):
    colleague = await make_user()
    organization = await make_organization(owners=(agent, colleague))
    await sign_in(client, agent)

    response = await _remove(client, organization.id, agent.id)

    assert response.status_code == 303
    assert await _roles(organization) == {colleague.id: "owner"}


async def test_another_agent_gets_404_on_the_organization_page(app, agent):
    organization = await make_organization(agent, name="Private Corp")
    other, _ = await _signed_in_other(app)

    response = await other.get(f"/app/organizations/{organization.id}")

    assert response.status_code == 404
    body = await response.get_data(as_text=True)
    assert "Invalid organization" in body
    assert "Private Corp" not in body


async def test_another_agent_cannot_invite_or_revoke(app, client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)
    await _invite(client, organization.id, "carl@example.com")
    invitation = await Invitation.get(organization_id=organization.id)
    other, bob = await _signed_in_other(app)
    revoke = f"/app/organizations/{organization.id}/invitations/{invitation.id}/revoke"

    invited = await _invite(other, organization.id, bob.email)
    confirm = await other.get(revoke)
    revoked = await other.post(revoke, form={"csrf_token": await csrf_of(other, "/app/organizations")})

    assert (invited.status_code, confirm.status_code, revoked.status_code) == (404, 404, 404)
    assert await Invitation.filter(revoked_at=None).count() == 1


async def test_another_agent_cannot_remove_members(app, agent):
    organization = await make_organization(agent, await make_user())
    other, _ = await _signed_in_other(app)

    response = await _remove(other, organization.id, agent.id)

    assert response.status_code == 404
    assert await Membership.exists(organization_id=organization.id, user_id=agent.id)


async def test_inviting_without_csrf_token_is_refused(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)

    response = await client.post(
        f"/app/organizations/{organization.id}/invitations", form={"email": "carl@example.com"}
    )

    assert response.status_code == 400
    assert not await Invitation.exists()


async def test_names_and_emails_are_escaped(client, agent):
    organization = await make_organization(agent, await make_user(name="<script>alert(1)</script>"))
    await sign_in(client, agent)

    body = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)

    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


# Roles


async def test_list_shows_the_agents_role_in_each_organization(client, agent):
    other = await make_user()
    await make_organization(agent, other, name="Owned Ltd")
    await make_organization(other, agent, name="Worked Ltd")
    await sign_in(client, agent)

    body = await (await client.get("/app/organizations")).get_data(as_text=True)

    owned, worked = body.index("Owned Ltd"), body.index("Worked Ltd")
    assert body.index("Owner", owned) < worked
    assert "Agent" in body[worked:]


async def test_organization_page_shows_each_members_role(client, agent):
    await make_user(email="zed@example.com", name="Zed")
    organization = await make_organization(
        agent, await make_user(email="carl@example.com", name="Carl"), name="Acme"
    )
    await sign_in(client, agent)

    body = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)

    ann_row = body[body.index("agent@example.com") :]
    carl_row = body[body.index("carl@example.com") :]
    assert ann_row.index(">Owner<") < ann_row.index("</li>")
    assert carl_row.index(">Agent<") < carl_row.index("</li>")
    assert "zed@example.com" not in body


async def test_an_owner_gets_the_controls_to_manage_members(client, agent):
    carl = await make_user(email="carl@example.com", name="Carl")
    organization = await make_organization(agent, carl)
    await sign_in(client, agent)

    body = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)

    assert f'action="/app/organizations/{organization.id}/invitations"' in body
    assert f'action="/app/organizations/{organization.id}/members/{carl.id}/remove"' in body
    assert f'action="/app/organizations/{organization.id}/members/{carl.id}/role"' in body
    assert 'name="role" value="owner"' in body


async def test_an_agent_sees_the_members_without_the_controls_and_may_leave(client, agent):
    owner = await make_user(email="olga@example.com", name="Olga")
    colleague = await make_user(email="carl@example.com", name="Carl")
    organization = await make_organization(owner, agent, colleague)
    await sign_in(client, agent)

    body = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)

    assert "olga@example.com" in body and "carl@example.com" in body
    assert "/invitations" not in body
    assert "/role" not in body
    assert f"/members/{owner.id}/remove" not in body
    assert f"/members/{colleague.id}/remove" not in body
    assert f'action="/app/organizations/{organization.id}/members/{agent.id}/remove"' in body
    assert "You are an agent here" in body


async def test_an_agent_cannot_invite(client, agent):
    organization = await make_organization(await make_user(), agent)
    await sign_in(client, agent)

    response = await _invite(client, organization.id, "carl@example.com")

    assert response.status_code == 403
    assert "Only an owner of the organization can do this." in await response.get_data(as_text=True)
    assert not await Invitation.exists()


async def test_an_agent_cannot_invite_with_htmx_either(client, agent):
    organization = await make_organization(await make_user(), agent)
    await sign_in(client, agent)

    response = await _invite(client, organization.id, "carl@example.com", HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 403
    assert body.lstrip().startswith('<section id="members"')
    assert "Only an owner of the organization can do this." in body
    assert not await Invitation.exists()


async def test_an_agent_cannot_remove_the_owner_or_another_agent(client, agent):
    owner, colleague = await make_user(), await make_user()
    organization = await make_organization(owner, agent, colleague)
    await sign_in(client, agent)

    for target in (owner, colleague):
        response = await _remove(client, organization.id, target.id)

        assert response.status_code == 403
        assert "Only an owner of the organization can do this." in await response.get_data(as_text=True)
    assert await _roles(organization) == {owner.id: "owner", agent.id: "agent", colleague.id: "agent"}


async def test_an_agent_cannot_make_themself_an_owner(client, agent):
    owner = await make_user()
    organization = await make_organization(owner, agent)
    await sign_in(client, agent)

    response = await _change_role(client, organization.id, agent.id, "owner")

    assert response.status_code == 403
    assert "Only an owner of the organization can do this." in await response.get_data(as_text=True)
    assert await _roles(organization) == {owner.id: "owner", agent.id: "agent"}


async def test_an_agent_cannot_demote_the_owner(client, agent):
    owner = await make_user()
    organization = await make_organization(owner, agent)
    await sign_in(client, agent)

    response = await _change_role(client, organization.id, owner.id, "agent")

    assert response.status_code == 403
    assert await _roles(organization) == {owner.id: "owner", agent.id: "agent"}


async def test_an_owner_makes_an_agent_an_owner(client, agent):
    carl = await make_user(email="carl@example.com", name="Carl")
    organization = await make_organization(agent, carl)
    await sign_in(client, agent)

    response = await _change_role(client, organization.id, carl.id, "owner")

    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/organizations/{organization.id}#members"
    page = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)
    assert "Carl (carl@example.com) is an owner now." in page
    assert await _roles(organization) == {agent.id: "owner", carl.id: "owner"}


async def test_an_owner_makes_another_owner_an_agent_with_htmx(client, agent):
    carl = await make_user(email="carl@example.com", name="Carl")
    organization = await make_organization(owners=(agent, carl))
    await sign_in(client, agent)

    response = await _change_role(client, organization.id, carl.id, "agent", HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="members"')
    assert "Carl (carl@example.com) is an agent now." in body
    assert await _roles(organization) == {agent.id: "owner", carl.id: "agent"}


async def test_an_owner_who_steps_down_loses_the_controls(client, agent):
    carl = await make_user()
    organization = await make_organization(owners=(agent, carl))
    await sign_in(client, agent)

    response = await _change_role(client, organization.id, agent.id, "agent", HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert f'action="/app/organizations/{organization.id}/invitations"' not in body
    assert "You are an agent here" in body
    assert await _roles(organization) == {agent.id: "agent", carl.id: "owner"}


async def test_the_last_owner_cannot_become_an_agent(client, agent):
    carl = await make_user()
    organization = await make_organization(agent, carl)
    await sign_in(client, agent)

    response = await _change_role(client, organization.id, agent.id, "agent")

    assert response.status_code == 400
    assert "An organization needs an owner" in await response.get_data(as_text=True)
    assert await _roles(organization) == {agent.id: "owner", carl.id: "agent"}


async def test_an_unknown_role_is_refused(client, agent):
    carl = await make_user()
    organization = await make_organization(agent, carl)
    await sign_in(client, agent)

    response = await _change_role(client, organization.id, carl.id, "admin")

    assert response.status_code == 400
    assert "The selected role is invalid." in await response.get_data(as_text=True)
    assert await _roles(organization) == {agent.id: "owner", carl.id: "agent"}


async def test_another_agent_cannot_change_roles(app, agent):
    organization = await make_organization(agent)
    other, _ = await _signed_in_other(app)

    response = await _change_role(other, organization.id, agent.id, "agent")

    assert response.status_code == 404
    assert "Invalid organization" in await response.get_data(as_text=True)
    assert await _roles(organization) == {agent.id: "owner"}


async def test_changing_a_role_without_csrf_token_is_refused(client, agent):
    carl = await make_user()
    organization = await make_organization(agent, carl)
    await sign_in(client, agent)

    response = await client.post(
        f"/app/organizations/{organization.id}/members/{carl.id}/role", form={"role": "owner"}
    )

    assert response.status_code == 400
    assert await _roles(organization) == {agent.id: "owner", carl.id: "agent"}
