"""Organizations: the list, one organization's page, adding and removing members."""

from __future__ import annotations

from app.models import Membership, Organization
from tests.factories import (
    body_json,
    csrf_of,
    make_application,
    make_organization,
    make_token,
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


async def _add(client, organization_id: int, email: str, headers=None):
    return await client.post(
        f"/app/organizations/{organization_id}/members",
        form={"csrf_token": await csrf_of(client, "/app/organizations"), "email": email},
        headers=headers or {},
    )


async def _remove(client, organization_id: int, user_id: int, headers=None):
    return await client.post(
        f"/app/organizations/{organization_id}/members/{user_id}/remove",
        form={"csrf_token": await csrf_of(client, "/app/organizations")},
        headers=headers or {},
    )


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


async def test_creating_an_organization_makes_the_agent_its_member(client, agent):
    await sign_in(client, agent)

    response = await client.post(
        "/app/organizations",
        form={"csrf_token": await csrf_of(client, "/app/organizations"), "name": "  Acme  "},
    )

    organization = await Organization.get(name="Acme")
    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/organizations/{organization.id}"
    assert await Membership.exists(organization_id=organization.id, user_id=agent.id)


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


async def test_adding_a_member_by_email_shares_the_applications(client, api, agent):
    organization = await make_organization(agent)
    application = await make_application(agent, organization_id=organization.id)
    carl = await make_user(email="carl@example.com", name="Carl")
    await sign_in(client, agent)

    response = await _add(client, organization.id, " Carl@Example.com ")

    assert response.status_code == 303
    page = await (await client.get(response.headers["Location"].split("#")[0])).get_data(as_text=True)
    assert "Carl (carl@example.com) is a member now." in page
    found = await body_json(await api.get("/applications", await make_token(carl, "read")))
    assert [item["id"] for item in found["data"]] == [application.id]


async def test_adding_a_member_with_htmx_answers_the_members_fragment(client, agent):
    organization = await make_organization(agent)
    await make_user(email="carl@example.com", name="Carl")
    await sign_in(client, agent)

    response = await _add(client, organization.id, "carl@example.com", HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="members"')
    assert "carl@example.com" in body


async def test_adding_a_member_twice_is_harmless(client, agent):
    organization = await make_organization(agent)
    await make_user(email="carl@example.com")
    await sign_in(client, agent)

    await _add(client, organization.id, "carl@example.com")
    response = await _add(client, organization.id, "carl@example.com")

    assert response.status_code == 303
    assert await Membership.filter(organization_id=organization.id).count() == 2


async def test_adding_an_unknown_email_shows_an_error(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)

    response = await _add(client, organization.id, "nobody@example.com")

    assert response.status_code == 400
    body = await response.get_data(as_text=True)
    assert "No Earful user has the address nobody@example.com." in body
    assert 'value="nobody@example.com"' in body
    assert await Membership.filter(organization_id=organization.id).count() == 1


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
    organization = await make_organization(agent, await make_user(), name="Leaving Ltd")
    await sign_in(client, agent)

    response = await _remove(client, organization.id, agent.id)

    assert response.status_code == 303
    assert response.headers["Location"] == "/app/organizations"
    assert "Leaving Ltd" not in await (await client.get("/app/organizations")).get_data(as_text=True)
    assert (await client.get(f"/app/organizations/{organization.id}")).status_code == 404


async def test_removing_yourself_with_htmx_redirects_the_browser(client, agent):
    organization = await make_organization(agent, await make_user())
    await sign_in(client, agent)

    response = await _remove(client, organization.id, agent.id, HTMX)

    assert response.status_code == 204
    assert response.headers["HX-Redirect"] == "/app/organizations"


async def test_removing_the_last_member_is_refused(client, agent):
    organization = await make_organization(agent)
    await sign_in(client, agent)

    response = await _remove(client, organization.id, agent.id)

    assert response.status_code == 400
    assert "An organization needs at least one member" in await response.get_data(as_text=True)
    assert await Membership.exists(organization_id=organization.id, user_id=agent.id)


async def test_another_agent_gets_404_on_the_organization_page(app, agent):
    organization = await make_organization(agent, name="Private Corp")
    other, _ = await _signed_in_other(app)

    response = await other.get(f"/app/organizations/{organization.id}")

    assert response.status_code == 404
    body = await response.get_data(as_text=True)
    assert "Invalid organization" in body
    assert "Private Corp" not in body


async def test_another_agent_cannot_add_members(app, agent):
    organization = await make_organization(agent)
    other, bob = await _signed_in_other(app)

    response = await _add(other, organization.id, bob.email)

    assert response.status_code == 404
    assert not await Membership.exists(organization_id=organization.id, user_id=bob.id)


async def test_another_agent_cannot_remove_members(app, agent):
    organization = await make_organization(agent, await make_user())
    other, _ = await _signed_in_other(app)

    response = await _remove(other, organization.id, agent.id)

    assert response.status_code == 404
    assert await Membership.exists(organization_id=organization.id, user_id=agent.id)


async def test_adding_a_member_without_csrf_token_is_refused(client, agent):
    organization = await make_organization(agent)
    carl = await make_user(email="carl@example.com")
    await sign_in(client, agent)

    response = await client.post(f"/app/organizations/{organization.id}/members", form={"email": carl.email})

    assert response.status_code == 400
    assert not await Membership.exists(organization_id=organization.id, user_id=carl.id)


async def test_names_and_emails_are_escaped(client, agent):
    organization = await make_organization(agent, await make_user(name="<script>alert(1)</script>"))
    await sign_in(client, agent)

    body = await (await client.get(f"/app/organizations/{organization.id}")).get_data(as_text=True)

    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
