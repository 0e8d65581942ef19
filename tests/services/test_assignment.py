"""Assignment: who may be assigned, what an assignment announces and whom it e-mails, and the
inbox's Mine and Unassigned."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from app.db import atomic
from app.errors import ValidationError
from app.models import OutboundEmail, WebhookEvent
from app.services import assignment, feedback, inbox, notifications
from app.services.deployment import use_settings
from app.services.mail.outbox import deliver_due
from app.services.organizations import add_member, remove_member
from app.services.thread_filters import UNASSIGNED, ThreadFilters, parse_filters
from tests.factories import (
    make_application,
    make_organization,
    make_thread,
    make_user,
    make_webhook,
    thread_row,
)

HOOK = "http://127.0.0.1:9/hooks"


@pytest.fixture
async def team(db):
    """An organization's application: Olga owns both, Andy is an agent of the organization."""
    olga = await make_user(email="olga@example.com", name="Olga Owner")
    andy = await make_user(email="andy@example.com", name="Andy Agent")
    organization = await make_organization(andy, owners=(olga,), name="Acme")
    application = await make_application(olga, organization_id=organization.id)
    return olga, andy, organization, application


async def test_the_agents_of_an_application_are_its_creator_and_its_organizations_members(team):
    olga, andy, _, application = team
    await make_user(email="stranger@example.com")
    solo_owner = await make_user(name="Solo")
    solo = await make_application(solo_owner)

    assert [user.id for user in await assignment.agents(application)] == [andy.id, olga.id]
    assert [user.id for user in await assignment.agents(solo)] == [solo_owner.id]


async def test_the_agents_are_read_as_pickers_show_them_without_their_accounts_secrets(team):
    olga, andy, _, application = team

    agents = await assignment.agents(application)

    assert [(agent.id, agent.email, agent.name) for agent in agents] == [
        (andy.id, "andy@example.com", "Andy Agent"),
        (olga.id, "olga@example.com", "Olga Owner"),
    ]
    assert not any(hasattr(agent, "password_hash") for agent in agents)


async def test_the_agents_are_read_once_while_kept(team, queries):
    _, _, _, application = team
    await assignment.agents(application)

    queries.statements.clear()
    await assignment.agents(application)

    assert queries.count == 0


async def test_a_member_who_joins_is_an_agent_at_once(team):
    _, _, organization, application = team
    await assignment.agents(application)
    carl = await make_user(email="carl@example.com", name="Carl")

    await add_member(organization, carl)

    assert carl.id in [agent.id for agent in await assignment.agents(application)]


async def test_a_member_who_leaves_is_no_longer_an_agent_at_once(team):
    olga, andy, organization, application = team
    await assignment.agents(application)

    await remove_member(olga, organization, andy.id)

    assert [agent.id for agent in await assignment.agents(application)] == [olga.id]


async def test_a_thread_is_assigned_to_an_agent_and_unassigned(team, settings):
    olga, andy, _, application = team
    thread = await make_thread(application)

    assigned = await feedback.assign(olga, application, thread, andy.id)

    assert assigned.assignee_id == andy.id
    assert assigned.assignee is not None
    assert (assigned.assignee.email, assigned.assignee.name) == ("andy@example.com", "Andy Agent")
    details = await feedback.get_thread_details(application, thread.id)
    assert details.thread.assignee == assigned.assignee
    unassigned = await feedback.assign(olga, application, thread, None)
    assert (unassigned.assignee_id, unassigned.assignee) == (None, None)


async def test_nobody_but_an_agent_of_the_application_may_be_assigned(team, settings):
    olga, _, _, application = team
    stranger = await make_user()
    thread = await make_thread(application)

    for assignee_id in (stranger.id, 2**31 - 1):
        with pytest.raises(ValidationError, match=re.escape(assignment.NOT_AN_AGENT)):
            await feedback.assign(olga, application, thread, assignee_id)

    assert (await thread_row(thread.id)).assignee_id is None


async def test_an_assignment_with_other_changes_is_one_transaction(team, settings):
    olga, _, _, application = team
    stranger = await make_user()
    thread = await make_thread(application)

    with pytest.raises(ValidationError):
        await feedback.update_thread(application, thread, archived=True, assignee_id=stranger.id, actor=olga)

    assert (await thread_row(thread.id)).archived is False


@pytest.mark.parametrize("value", [True, "x", -1, 0, 2**31, 1.5, [1]])
def test_a_malformed_assignee_id_is_refused(value):
    with pytest.raises(ValidationError, match=re.escape(assignment.INVALID_ASSIGNEE)):
        assignment.parse_assignee_id(value)


def test_null_or_empty_means_nobody_and_digits_are_an_id():
    assert assignment.parse_assignee_id(None) is None
    assert assignment.parse_assignee_id("") is None
    assert assignment.parse_assignee_id("12") == 12
    assert assignment.parse_assignee_id(12) == 12


async def test_assigning_announces_feedback_updated_with_the_assignee(team, settings):
    olga, andy, _, application = team
    hooks = dataclasses.replace(settings, webhook_allow_private=True)
    use_settings(hooks)
    await make_webhook(olga, application, HOOK, hooks)
    thread = await make_thread(application)
    await atomic(lambda: WebhookEvent.all().delete())  # the creation's

    await feedback.update_thread(application, thread, archived=True, assignee_id=andy.id, actor=olga)
    await feedback.assign(olga, application, thread, andy.id)  # no change, no event

    [event] = await WebhookEvent.all()
    body = json.loads(event.payload)
    assert event.type == "feedback.updated"
    assert body["data"]["assignee"] == {"id": andy.id, "email": "andy@example.com", "name": "Andy Agent"}
    assert body["data"]["archived"] is True


async def test_an_agent_who_chose_instant_is_e_mailed_when_assigned(team, mail_settings, relay):
    olga, andy, _, application = team
    await notifications.set_mode(andy, application, "instant")
    thread = await make_thread(application, email="jane@example.org", message="Checkout fails twice")
    await atomic(lambda: OutboundEmail.all().delete())

    await feedback.assign(olga, application, thread, andy.id)

    assert await deliver_due(mail_settings) == 1
    [message] = relay.messages
    assert message["To"].addresses[0].addr_spec == "andy@example.com"
    assert message["Subject"] == "Olga Owner assigned you a thread in " + application.name
    text = message.get_body(("plain",)).get_content()
    assert "jane@example.org" in text and "Checkout fails twice" in text
    assert f"/app/applications/{application.id}/feedback/{thread.id}" in text
    assert "/app/notifications/unsubscribe/" in message["List-Unsubscribe"]
    assert (await OutboundEmail.get()).feedback_id == thread.id


async def test_no_e_mail_for_other_modes_or_for_assigning_oneself(team, mail_settings, relay):
    olga, andy, _, application = team
    await notifications.set_mode(olga, application, "instant")
    thread = await make_thread(application)
    other = await make_thread(application)
    await atomic(lambda: OutboundEmail.all().delete())

    await feedback.assign(olga, application, thread, olga.id)  # herself
    await feedback.assign(olga, application, other, andy.id)  # Andy chose nothing: none

    assert await deliver_due(mail_settings) == 0


async def test_assignment_writes_nothing_to_the_outbox_without_e_mail(team, settings):
    olga, andy, _, application = team
    await notifications.set_mode(andy, application, "instant")
    thread = await make_thread(application)

    await feedback.assign(olga, application, thread, andy.id)

    assert not await OutboundEmail.filter(kind="notification").exists()


async def test_an_agent_who_leaves_stays_assigned_but_may_no_longer_be_assigned(team, settings):
    olga, andy, organization, application = team
    thread = await make_thread(application)
    other = await make_thread(application)
    await feedback.assign(olga, application, thread, andy.id)

    await remove_member(andy, organization, andy.id)

    assert (await thread_row(thread.id)).assignee_id == andy.id
    with pytest.raises(ValidationError, match="agent of the application"):
        await feedback.assign(olga, application, other, andy.id)
    await add_member(organization, andy)
    await feedback.assign(olga, application, other, andy.id)


async def test_mine_and_unassigned_filter_the_inbox(team, settings):
    olga, andy, _, application = team
    mine = await make_thread(application, message="Mine, please")
    theirs = await make_thread(application, message="For Olga")
    nobodys = await make_thread(application, message="Nobody's yet")
    await feedback.assign(andy, application, mine, andy.id)
    await feedback.assign(andy, application, theirs, olga.id)

    def ids(page):
        return [row.thread.id for row in page.rows]

    assert ids(await inbox.search(application, ThreadFilters(assignee=andy.id))) == [mine.id]
    assert ids(await inbox.search(application, ThreadFilters(assignee=UNASSIGNED))) == [nobodys.id]
    assert ids(await inbox.search(application, ThreadFilters())) == [nobodys.id, theirs.id, mine.id]
    assert (await inbox.count_threads(application, ThreadFilters(assignee=andy.id))).count == 1
    assert (await inbox.count_threads(application, ThreadFilters(assignee=UNASSIGNED))).count == 1
    page = await inbox.search(application, ThreadFilters(assignee=andy.id))
    assert page.rows[0].thread.assignee is not None and page.rows[0].thread.assignee.name == "Andy Agent"


@pytest.mark.parametrize(("given", "expected"), [("me", 42), ("none", UNASSIGNED), ("7", 7), ("", None)])
def test_the_assignee_filter_reads_me_none_or_an_id(given, expected):
    assert parse_filters({"assignee": given}, user_id=42).assignee == expected


@pytest.mark.parametrize("given", ["mine", "0", "-3", "99999999999", "me"])
def test_a_malformed_assignee_filter_is_refused(given):
    with pytest.raises(ValidationError, match="The assignee field must be me, none or a user id"):
        parse_filters({"assignee": given})
