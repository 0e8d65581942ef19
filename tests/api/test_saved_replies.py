"""Saved replies through the management API: an application's and an organization's, and a saved
reply filled for a thread."""

from __future__ import annotations

import pytest

from app.models import SavedReply
from app.services.organizations import OWNERS_ONLY, add_member
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_saved_reply,
    make_thread,
    make_token,
    make_user,
)


@pytest.fixture
async def organization(agent):
    return await make_organization(agent, name="Acme")


def owners(application, organization) -> list[str]:
    return [
        f"/applications/{application.id}/saved-replies",
        f"/organizations/{organization.id}/saved-replies",
    ]


@pytest.mark.parametrize("owner", [0, 1], ids=["application", "organization"])
async def test_create_show_change_list_and_delete(api, token, application, organization, owner):
    prefix = owners(application, organization)[owner]

    created = await api.post(prefix, token, json={"title": "Refund", "text": "Hi {name}, {unknown}"})
    assert created.status_code == 201
    saved = (await body_json(created))["data"]
    assert (saved["title"], saved["text"]) == ("Refund", "Hi {name}, {unknown}")
    assert (saved["application_id"] is None) == (owner == 1)
    assert (saved["organization_id"] is None) == (owner == 0)

    changed = await api.patch(f"{prefix}/{saved['id']}", token, json={"title": "Refunds"})
    assert (await body_json(changed))["data"]["title"] == "Refunds"
    assert (await body_json(await api.get(f"{prefix}/{saved['id']}", token)))["data"]["text"] == (
        "Hi {name}, {unknown}"
    )
    assert [s["id"] for s in (await body_json(await api.get(prefix, token)))["data"]] == [saved["id"]]

    deleted = await api.delete(f"{prefix}/{saved['id']}", token)
    assert deleted.status_code == 204
    assert await SavedReply.filter(id=saved["id"]).count() == 0


async def test_a_form_creates_one_too(api, token, application):
    response = await api.post(
        f"/applications/{application.id}/saved-replies", token, form={"title": "Form", "text": "From a form"}
    )

    assert response.status_code == 201


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": "x"}, "The title field is required."),
        ({"title": "x", "text": ""}, "The text field is required."),
        ({"title": "x" * 101, "text": "x"}, "The title field must not be greater than 100 characters."),
    ],
)
async def test_invalid_fields_are_400_with_the_rule(api, token, application, body, message):
    response = await api.post(f"/applications/{application.id}/saved-replies", token, json=body)

    assert response.status_code == 400
    assert await body_text(response) == message


async def test_a_saved_reply_is_filled_for_a_thread(api, token, agent, organization):
    application = await make_application(agent, name="Shop <3", organization_id=organization.id)
    thread = await make_thread(application, email="rita@example.org", name="Rita <b>R</b>")
    saved = await make_saved_reply(
        agent, organization=organization, text="Hi {name} ({email}) on {application}"
    )

    response = await api.get(
        f"/applications/{application.id}/feedback/{thread.id}/saved-replies/{saved.id}", token
    )

    assert response.status_code == 200
    assert (await body_json(response))["data"] == {
        "id": saved.id,
        "feedback_id": thread.id,
        "title": saved.title,
        "text": "Hi Rita <b>R</b> (rita@example.org) on Shop <3",
    }


async def test_a_saved_reply_the_application_does_not_offer_is_invalid(api, token, agent, application):
    thread = await make_thread(application)
    elsewhere = await make_saved_reply(agent, await make_application(agent))

    response = await api.get(
        f"/applications/{application.id}/feedback/{thread.id}/saved-replies/{elsewhere.id}", token
    )

    assert response.status_code == 404
    assert await body_text(response) == "Invalid saved reply"


async def test_an_organization_agent_reads_but_may_not_change_its_saved_replies(api, agent, organization):
    member = await make_user()
    await add_member(organization, member)
    member_token = await make_token(member)
    saved = await make_saved_reply(agent, organization=organization, title="Welcome")
    prefix = f"/organizations/{organization.id}/saved-replies"

    listed = await api.get(prefix, member_token)
    refused = [
        await api.post(prefix, member_token, json={"title": "Mine", "text": "x"}),
        await api.patch(f"{prefix}/{saved.id}", member_token, json={"title": "Taken"}),
        await api.delete(f"{prefix}/{saved.id}", member_token),
    ]

    assert [s["title"] for s in (await body_json(listed))["data"]] == ["Welcome"]
    assert [response.status_code for response in refused] == [403, 403, 403]
    assert {await body_text(response) for response in refused} == {OWNERS_ONLY}
    assert await SavedReply.filter(organization_id=organization.id).values_list("title", flat=True) == [
        "Welcome"
    ]


async def test_an_organization_agent_manages_the_saved_replies_of_its_applications(api, agent, organization):
    application = await make_application(agent, organization_id=organization.id)
    member = await make_user()
    await add_member(organization, member)

    response = await api.post(
        f"/applications/{application.id}/saved-replies",
        await make_token(member),
        json={"title": "t", "text": "x"},
    )

    assert response.status_code == 201


async def test_a_read_token_may_not_write(api, agent, application):
    read_only = await make_token(agent, "read")

    response = await api.post(
        f"/applications/{application.id}/saved-replies", read_only, json={"title": "t", "text": "x"}
    )

    assert response.status_code == 403
    assert await body_text(response) == "Insufficient scope"
