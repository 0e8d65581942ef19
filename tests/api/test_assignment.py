"""Assigning threads through the management API: PATCH's ``assignee_id``, the thread JSON's
``assignee`` and the feedback list's ``assignee`` filter."""

from __future__ import annotations

import pytest

from app.models import Feedback
from app.services import feedback
from tests.factories import (
    body_json,
    body_text,
    make_application,
    make_organization,
    make_thread,
    make_token,
    make_user,
)


@pytest.fixture
async def team(agent, db):
    """An application of the agent's organization, and a colleague (an agent of it) with a token."""
    colleague = await make_user(email="carl@example.com", name="Carl Colleague")
    organization = await make_organization(colleague, owners=(agent,), name="Acme")
    application = await make_application(agent, organization_id=organization.id)
    return application, colleague, await make_token(colleague)


def thread_path(application, thread=None) -> str:
    path = f"/applications/{application.id}/feedback"
    return path if thread is None else f"{path}/{thread.id}"


async def assert_error(response, status: int, message: str) -> None:
    assert (response.status_code, response.mimetype) == (status, "text/plain"), await body_text(response)
    assert await body_text(response) == message


async def test_patch_assigns_a_thread_and_null_unassigns_it(api, token, team):
    application, colleague, _ = team
    thread = await make_thread(application)

    assigned = await api.patch(thread_path(application, thread), token, json={"assignee_id": colleague.id})
    shown = await api.get(thread_path(application, thread), token)
    unassigned = await api.patch(thread_path(application, thread), token, json={"assignee_id": None})

    assert assigned.status_code == 200
    expected = {"id": colleague.id, "email": "carl@example.com", "name": "Carl Colleague"}
    assert (await body_json(assigned))["data"]["assignee"] == expected
    assert (await body_json(shown))["data"]["assignee"] == expected
    assert (await body_json(unassigned))["data"]["assignee"] is None
    assert (await Feedback.get(id=thread.id)).assignee_id is None


async def test_patch_takes_the_assignee_with_other_changes(api, token, agent, team):
    application, _, _ = team
    thread = await make_thread(application)

    response = await api.patch(
        thread_path(application, thread), token, json={"archived": True, "assignee_id": str(agent.id)}
    )

    data = (await body_json(response))["data"]
    assert (data["archived"], data["assignee"]["id"]) == (True, agent.id)


async def test_only_an_agent_of_the_application_may_be_assigned(api, token, team):
    application, _, _ = team
    stranger = await make_user()
    thread = await make_thread(application)

    response = await api.patch(
        thread_path(application, thread), token, json={"assignee_id": stranger.id, "archived": True}
    )

    await assert_error(response, 400, "The assignee must be an agent of the application.")
    stored = await Feedback.get(id=thread.id)
    assert (stored.assignee_id, stored.archived) == (None, False)


@pytest.mark.parametrize("value", [True, "me", -4, 0, 2**31, [1], {"id": 1}])
async def test_a_malformed_assignee_id_is_refused(api, token, team, value):
    application, _, _ = team
    thread = await make_thread(application)

    response = await api.patch(thread_path(application, thread), token, json={"assignee_id": value})

    await assert_error(response, 400, "The assignee id field must be a user id or null.")


async def test_the_list_filters_by_assignee(api, token, agent, team):
    application, colleague, colleague_token = team
    mine = await make_thread(application, message="For the agent")
    theirs = await make_thread(application, message="For Carl")
    nobodys = await make_thread(application, message="For nobody")
    await feedback.assign(agent, application, mine, agent.id)
    await feedback.assign(agent, application, theirs, colleague.id)

    async def listed(user_token: str, assignee: str) -> tuple[list[int], dict]:
        response = await api.get(f"{thread_path(application)}?assignee={assignee}", user_token)
        assert response.status_code == 200, await body_text(response)
        body = await body_json(response)
        return [item["id"] for item in body["data"]], body["pagination"]

    assert (await listed(token, "me"))[0] == [mine.id]
    assert (await listed(colleague_token, "me"))[0] == [theirs.id]
    assert (await listed(token, "none"))[0] == [nobodys.id]
    assert (await listed(token, str(colleague.id)))[0] == [theirs.id]
    _ids, pagination = await listed(token, "me")
    assert (pagination["total"], pagination["total_exact"], pagination["next_before"]) == (1, True, None)


@pytest.mark.parametrize("value", ["mine", "0", "x", "-1"])
async def test_a_malformed_assignee_filter_is_refused(api, token, application, value):
    response = await api.get(f"{thread_path(application)}?assignee={value}", token)

    await assert_error(response, 400, "The assignee field must be me, none or a user id.")


async def test_the_export_takes_the_assignee_filter(api, token, agent, team):
    application, _, _ = team
    mine = await make_thread(application, message="Mine to export")
    await make_thread(application, message="Not mine")
    await feedback.assign(agent, application, mine, agent.id)

    response = await api.get(f"{thread_path(application)}/export?format=jsonl&assignee=me", token)

    text = await body_text(response)
    assert response.status_code == 200
    assert "Mine to export" in text and "Not mine" not in text


async def test_another_users_agent_cannot_be_assigned_nor_found(api, world_two_users):
    """Isolation: Bob cannot assign his thread to Alice, who is no agent of his application, and
    filtering his inbox by Alice's id finds nothing."""
    alice, _bob, bob_token, bob_app, bob_thread = world_two_users

    response = await api.patch(thread_path(bob_app, bob_thread), bob_token, json={"assignee_id": alice.id})
    listed = await body_json(await api.get(f"{thread_path(bob_app)}?assignee={alice.id}", bob_token))

    await assert_error(response, 400, "The assignee must be an agent of the application.")
    assert listed["data"] == []


@pytest.fixture
async def world_two_users(db):
    alice = await make_user(email="alice@example.com")
    alice_app = await make_application(alice)
    alice_thread = await make_thread(alice_app)
    await feedback.assign(alice, alice_app, alice_thread, alice.id)
    bob = await make_user(email="bob@example.com")
    bob_app = await make_application(bob)
    return alice, bob, await make_token(bob), bob_app, await make_thread(bob_app)
