"""Assignment in the web app: the thread page's assignee control (the inbox's Mine and
Unassigned and its bulk assignment are tests/views/test_bulk.py)."""

from __future__ import annotations

import pytest

from app.models import Feedback
from app.services import feedback
from app.services.organizations import remove_member
from tests.factories import csrf_of, make_application, make_organization, make_thread, make_user, sign_in

HTMX = {"HX-Request": "true"}


@pytest.fixture
async def team(db):
    olga = await make_user(email="olga@example.com", name="Olga Owner")
    andy = await make_user(email="andy@example.com", name="Andy Agent")
    organization = await make_organization(andy, owners=(olga,), name="Acme")
    application = await make_application(olga, organization_id=organization.id)
    return olga, andy, organization, application


def thread_page(thread) -> str:
    return f"/app/applications/{thread.application_id}/feedback/{thread.id}"


async def post_assign(client, thread, assignee: str, headers=None, query: str = ""):
    return await client.post(
        thread_page(thread) + "/assign" + query,
        form={"csrf_token": await csrf_of(client, thread_page(thread)), "assignee_id": assignee},
        headers=headers or {},
    )


async def test_the_thread_page_offers_the_applications_agents_and_assign_to_me(client, team):
    olga, andy, _, application = team
    await make_user(email="stranger@example.com", name="Stranger")
    thread = await make_thread(application)
    await sign_in(client, andy)

    body = await (await client.get(thread_page(thread))).get_data(as_text=True)

    assert 'id="thread-assignee"' in body and "Unassigned" in body
    assert f'<option value="{olga.id}">Olga Owner</option>' in body
    assert f'<option value="{andy.id}">Andy Agent (me)</option>' in body
    assert "Stranger" not in body
    assert f'name="assignee_id" value="{andy.id}"' in body and "data-assign-me" in body
    assert 'hx-post="' + thread_page(thread) + '/assign"' in body


async def test_assigning_without_javascript_goes_back_to_the_thread(client, team):
    olga, andy, _, application = team
    thread = await make_thread(application)
    await sign_in(client, olga)

    response = await post_assign(client, thread, str(andy.id), query="?assignee=mine")

    assert response.status_code == 303
    assert response.headers["Location"] == thread_page(thread) + "?assignee=mine"
    assert (await Feedback.get(id=thread.id)).assignee_id == andy.id
    body = await (await client.get(thread_page(thread))).get_data(as_text=True)
    assert "<strong>Andy Agent</strong>" in body


async def test_assigning_with_htmx_answers_the_card(client, team):
    _olga, andy, _, application = team
    thread = await make_thread(application)
    await sign_in(client, andy)

    response = await post_assign(client, thread, str(andy.id), HTMX)
    cleared = await post_assign(client, thread, "", HTMX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="thread-assignee"')
    assert "<strong>Andy Agent</strong>" in body
    assert "data-assign-me" not in body  # assigned to me already
    assert "Unassigned" in await cleared.get_data(as_text=True)
    assert (await Feedback.get(id=thread.id)).assignee_id is None


async def test_someone_who_is_no_agent_cannot_be_assigned(client, team):
    olga, _, _, application = team
    stranger = await make_user()
    thread = await make_thread(application)
    await sign_in(client, olga)

    response = await post_assign(client, thread, str(stranger.id), HTMX)

    assert response.status_code == 400
    assert "The assignee must be an agent of the application." in await response.get_data(as_text=True)
    assert (await Feedback.get(id=thread.id)).assignee_id is None


async def test_an_assignee_who_left_is_shown_as_such_and_kept(client, team):
    olga, andy, organization, application = team
    thread = await make_thread(application)
    await feedback.assign(olga, application, thread, andy.id)
    await remove_member(andy, organization, andy.id)
    await sign_in(client, olga)

    body = await (await client.get(thread_page(thread))).get_data(as_text=True)
    again = await post_assign(client, thread, str(andy.id))  # the form as shown: nothing changes

    assert '<strong>Andy Agent</strong> <span class="muted">(left)</span>' in body
    assert f'<option value="{andy.id}" selected>Andy Agent (left)</option>' in body
    assert again.status_code == 303
    assert (await Feedback.get(id=thread.id)).assignee_id == andy.id


async def test_assigning_without_csrf_token_is_refused(client, team):
    olga, andy, _, application = team
    thread = await make_thread(application)
    await sign_in(client, olga)

    response = await client.post(thread_page(thread) + "/assign", form={"assignee_id": str(andy.id)})

    assert response.status_code == 400
    assert (await Feedback.get(id=thread.id)).assignee_id is None


async def test_another_agent_cannot_assign_a_thread_of_an_application_not_theirs(app, team):
    _olga, _, _, application = team
    thread = await make_thread(application)
    bob = await make_user(email="bob@example.com")
    await make_application(bob)
    other = app.test_client()
    token = await sign_in(other, bob)

    page = await other.get(thread_page(thread))
    response = await other.post(
        thread_page(thread) + "/assign", form={"csrf_token": token, "assignee_id": str(bob.id)}
    )

    assert (page.status_code, response.status_code) == (404, 404)
    assert (await Feedback.get(id=thread.id)).assignee_id is None
