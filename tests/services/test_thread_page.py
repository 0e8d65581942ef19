"""The thread page's reads: the thread and what its page shows beside it, read together."""

from __future__ import annotations

import pytest

from app.errors import NotFound
from app.services.assignment import agents
from app.services.mail.outbox import delivery_status_of_replies
from app.services.plans import includes_internal_notes
from app.services.saved_replies import saved_replies_for
from app.services.thread_details import load_thread_details
from app.services.thread_page import load_thread_page
from tests.factories import (
    make_application,
    make_organization,
    make_reply,
    make_saved_reply,
    make_thread,
    make_upload,
    make_user,
)


async def test_the_page_reads_what_each_service_reads_alone(mail_settings):
    owner = await make_user(name="Olga Owner")
    member = await make_user(name="Ann Member")
    organization = await make_organization(owner, member, plan="team")
    application = await make_application(owner, organization_id=organization.id)
    await make_saved_reply(owner, application, title="Thanks")
    await make_saved_reply(owner, organization=organization, title="Apologies")
    thread = await make_thread(application, tags="billing", attachments=[await make_upload(application)])
    await make_reply(member, application, thread, "Mailed")
    await make_reply(member, application, thread, "Kept inside", type="note")

    page = await load_thread_page(application, thread.id)

    assert page.details == await load_thread_details(application.id, thread.id)
    assert page.agents == await agents(application)
    assert [agent.name for agent in page.agents] == ["Ann Member", "Olga Owner"]
    mailed = [reply.id for reply in page.details.replies if reply.type == "reply"]
    assert page.deliveries == await delivery_status_of_replies(mailed) == {mailed[0]: "pending"}
    assert page.notes_allowed is await includes_internal_notes(application) is True
    assert page.saved_replies == await saved_replies_for(application)
    assert [saved.title for saved in page.saved_replies] == ["Apologies", "Thanks"]


async def test_notes_follow_the_owners_plan_without_an_organization(db):
    free_owner, team_owner = await make_user(plan="free"), await make_user(plan="team")
    free, team = await make_application(free_owner), await make_application(team_owner)

    on_free = await load_thread_page(free, (await make_thread(free)).id)
    on_team = await load_thread_page(team, (await make_thread(team)).id)

    assert (on_free.notes_allowed, on_team.notes_allowed) == (False, True)
    assert on_free.saved_replies == [] and on_free.deliveries == {}


async def test_a_thread_of_another_application_is_not_found(db):
    mine = await make_application(await make_user())
    theirs = await make_application(await make_user())
    their_thread = await make_thread(theirs)

    with pytest.raises(NotFound):
        await load_thread_page(mine, their_thread.id)


async def test_the_page_is_one_statement_on_postgresql(agent, application, backend, queries):
    thread = await make_thread(application)
    await make_reply(agent, application, thread)
    await load_thread_page(application, thread.id)  # the worker now knows the agents

    queries.statements.clear()
    await load_thread_page(application, thread.id)

    # SQLite: the thread with its tag ids, its replies and files, then e-mails, plan, saved replies.
    assert queries.count == (1 if backend == "postgres" else 6), queries.statements
