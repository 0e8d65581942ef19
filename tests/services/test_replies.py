"""Replies and notes: who may write which, what they move (reply times, counters, the outbox),
and the list of an application's replies; concurrent first replies never count twice."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from app.db import atomic
from app.errors import Forbidden, ValidationError
from app.models import Application, Feedback, OutboundEmail, Reply
from app.services.feedback import set_archived
from app.services.replies import add_customer_reply, create_agent_reply, list_replies
from tests.factories import application_row, make_application, make_reply, make_thread, make_user, thread_row


async def test_concurrent_first_replies_count_once_in_the_average(db):
    user = await make_user()
    application = await make_application(user)
    thread = await make_thread(application)
    await atomic(
        lambda: Feedback.filter(id=thread.id).update(created_at=datetime.now(UTC) - timedelta(seconds=300))
    )
    thread = await thread_row(thread.id)

    await asyncio.gather(*(make_reply(user, application, thread, f"answer {n}") for n in range(5)))

    stored = await Application.get(id=application.id)
    answered = await Feedback.get(id=thread.id)
    assert stored.first_reply_count == 1
    assert stored.first_reply_total == answered.first_reply_time
    assert 300 <= answered.first_reply_time <= 302
    assert stored.reply_count == 5


async def test_average_is_the_rounded_mean_of_answered_threads(db):
    user = await make_user()
    application = await make_application(user)
    now = datetime.now(UTC)
    for waited in (10, 21):
        thread = await make_thread(application)
        await atomic(
            lambda thread=thread, waited=waited: Feedback.filter(id=thread.id).update(
                created_at=now - timedelta(seconds=waited)
            )
        )
        await make_reply(user, application, await thread_row(thread.id))
    await make_thread(application)

    stored = await application_row(application.id)

    assert stored.first_reply_count == 2
    assert stored.average_first_reply_time in (15, 16)


async def test_a_note_needs_a_plan_that_includes_notes(db):
    agent = await make_user(plan="free")
    application = await make_application(agent)
    thread = await make_thread(application)

    with pytest.raises(Forbidden, match="does not include internal notes"):
        await create_agent_reply(agent, application, thread, "Internal", "note")

    assert await Reply.all().count() == 0


@pytest.mark.parametrize(("message", "kind"), [("", None), ("   ", None), (5, None), ("hi", "memo")])
async def test_invalid_replies_are_refused(db, message, kind):
    agent = await make_user()
    application = await make_application(agent)
    thread = await make_thread(application)

    with pytest.raises(ValidationError):
        await create_agent_reply(agent, application, thread, message, kind)


async def test_a_public_reply_is_queued_for_e_mail_and_a_note_is_not(db):
    agent = await make_user(plan="team")
    application = await make_application(agent)
    thread = await make_thread(application, email="ann@example.org")

    reply = await create_agent_reply(agent, application, thread, "Fixed")
    await create_agent_reply(agent, application, thread, "Internal", "note")

    [queued] = await OutboundEmail.all()
    assert (queued.reply_id, queued.to_address, queued.status) == (reply.id, "ann@example.org", "pending")


async def test_a_customers_answer_reopens_an_archived_thread(db):
    agent = await make_user()
    application = await make_application(agent)
    thread = await make_thread(application, tags=["billing"])
    await set_archived(application, thread, True)

    await add_customer_reply(application, thread, "ann@example.org", "It happened again")

    stored = await application_row(application.id)
    assert (stored.open_threads, stored.archived_threads, stored.reply_count) == (1, 0, 1)
    assert not (await Feedback.get(id=thread.id)).archived


async def test_the_replies_list_is_newest_first_with_the_days_total(db):
    agent = await make_user()
    application = await make_application(agent)
    thread = await make_thread(application)
    first = await make_reply(agent, application, thread, "One")
    second = await make_reply(agent, application, thread, "Two")

    page, total, _ = await list_replies(await application_row(application.id), datetime.now(UTC).date())

    assert [reply.id for reply in page] == [second.id, first.id]
    assert total == 2
    assert page[0].thread.id == thread.id and page[0].user is not None


async def test_list_replies_of_one_type_counts_every_match(db):
    agent = await make_user(plan="team")
    application = await make_application(agent)
    thread = await make_thread(application)
    notes = [await make_reply(agent, application, thread, f"Note {n}", type="note") for n in range(3)]
    await make_reply(agent, application, thread)

    page, total, _ = await list_replies(application, None, limit=2, kind="note")

    assert [reply.id for reply in page] == [notes[2].id, notes[1].id]
    assert total == 3


async def test_list_replies_of_one_thread_leaves_the_others_out(db):
    agent = await make_user()
    application = await make_application(agent)
    first, second = await make_thread(application), await make_thread(application)
    wanted = await make_reply(agent, application, first)
    await make_reply(agent, application, second)

    page, total, _ = await list_replies(application, None, thread=first)

    assert [reply.id for reply in page] == [wanted.id] and total == 1


async def test_list_replies_refuses_an_unknown_type(db):
    application = await make_application(await make_user())

    with pytest.raises(ValidationError, match="The type field must be reply or note"):
        await list_replies(application, None, kind="comment")
