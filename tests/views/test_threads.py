"""The thread page: message, sender, metadata, conversation, replies and notes, archive and tags."""

from __future__ import annotations

import dataclasses
import re

import pytest

from app.config import Quotas
from app.db import atomic
from app.models import Application, Attachment, Feedback, FeedbackTag, OutboundEmail, Reply, Tag, User
from app.services.attachments import new_attachment_id
from app.services.feedback import set_archived
from tests.factories import make_reply, make_thread, make_user, sign_in

XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture
async def csrf(client, agent) -> str:
    """Sign ``agent`` in on ``client``; the CSRF token of that session."""
    return await sign_in(client, agent)


@pytest.fixture
async def thread(application) -> Feedback:
    return await make_thread(application, email="rita@example.org", name="Rita Reader")


@pytest.fixture
async def intruder(app, thread):
    """A second agent, signed in on a client of its own, with its CSRF token."""
    other = app.test_client()
    token = await sign_in(other, await make_user(email="eve@example.com"))
    return other, token


def url(thread: Feedback, suffix: str = "") -> str:
    return f"/app/applications/{thread.application_id}/feedback/{thread.id}{suffix}"


async def page(client, path: str) -> str:
    response = await client.get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    return await response.get_data(as_text=True)


async def use_team_plan(user: User) -> None:
    await atomic(lambda: User.filter(id=user.id).update(plan="team"))


HX = {"HX-Request": "true"}


async def test_thread_page_shows_the_message_sender_and_metadata(client, csrf, application):
    thread = await make_thread(
        application,
        email="rita@example.org",
        name="Rita Reader",
        message="Line one\nLine two",
        sentiment="negative",
        nps=3,
        url="https://shop.example/cart",
        language="pt",
    )

    body = await page(client, url(thread))

    assert '<div class="message__text">Line one\nLine two</div>' in body
    assert "Rita Reader" in body and "rita@example.org" in body and "Member since" in body
    assert 'class="badge badge--negative"' in body and "3 / 10" in body
    assert '<a href="https://shop.example/cart" rel="noopener nofollow noreferrer"' in body
    assert "203.0.113.7" in body and "pytest-factory/1.0" in body
    assert "<dd>pt</dd>" in body


async def test_thread_page_mailto_link_is_percent_encoded(client, csrf, application):
    thread = await make_thread(application, email="a?cc=x%40evil.test&b=@c.test")

    body = await page(client, url(thread))

    assert 'href="mailto:a%3Fcc%3Dx%2540evil.test%26b%3D@c.test"' in body
    assert "mailto:a?cc" not in body


async def test_thread_page_links_only_http_page_urls(client, csrf, application):
    thread = await make_thread(application, url="javascript:alert(1)")

    body = await page(client, url(thread))

    assert "javascript:alert(1)" in body
    assert 'href="javascript:' not in body


async def test_thread_page_shows_properties(client, csrf, application):
    thread = await make_thread(application, properties={"plan": "pro", "seats": 12, "flags": {"beta": True}})

    body = await page(client, url(thread))

    assert '<dt>plan</dt><dd class="facts__long">pro</dd>' in body
    assert '<dt>seats</dt><dd class="facts__long">12</dd>' in body
    assert "{&#34;beta&#34;: true}" in body


async def test_thread_page_shows_list_properties_as_a_list(client, csrf, application):
    thread = await make_thread(application, properties=["first", {"second": 2}])

    body = await page(client, url(thread))

    assert "<li>first</li>" in body and "<li>{&#34;second&#34;: 2}</li>" in body


async def test_thread_page_previews_images_and_links_other_attachments(client, csrf, application):
    image = await atomic(
        lambda: Attachment.create(
            id=new_attachment_id(),
            application_id=application.id,
            name="shot.png",
            mime_type="image/png",
            size=2048,
            storage_name="a",
            token="tok1",
        )
    )
    report = await atomic(
        lambda: Attachment.create(
            id=new_attachment_id(),
            application_id=application.id,
            name="report.pdf",
            mime_type="application/pdf",
            size=300,
            storage_name="b",
            token="tok2",
        )
    )
    thread = await make_thread(application, attachments=[image.id, report.id])

    body = await page(client, url(thread))

    assert f'<img src="/files/attachments/{image.id}/tok1/shot.png" alt="shot.png"' in body
    assert f'href="/files/attachments/{report.id}/tok2/report.pdf" download' in body
    assert "2.0 KB" in body and "300 B" in body


async def test_thread_page_shows_replies_and_notes_distinctly(client, csrf, agent, application, thread):
    await use_team_plan(agent)
    await make_reply(agent, application, thread, "We are looking into it.")
    await make_reply(agent, application, thread, "Escalated to billing.", type="note")
    await atomic(
        lambda: Reply.create(
            application_id=application.id,
            feedback_id=thread.id,
            message="Thanks a lot!",
            from_agent=False,
            email="rita@example.org",
        )
    )

    body = await page(client, url(thread))

    agent_reply = body.index("We are looking into it.")
    note = body.index("Escalated to billing.")
    customer = body.index("Thanks a lot!")
    assert agent_reply < note < customer
    assert body.count('class="reply reply--agent"') == 1
    assert body.count('class="reply reply--note"') == 1
    assert body.count('class="reply reply--customer"') == 1
    assert "Internal note</span>" in body and "Agent reply</span>" in body and "Customer</span>" in body


async def test_reply_without_htmx_redirects_back_to_the_thread(client, csrf, application, thread):
    response = await client.post(url(thread, "/replies"), form={"csrf_token": csrf, "message": "On it!"})

    assert response.status_code == 303
    assert response.headers["Location"] == url(thread)
    reply = await Reply.get(feedback_id=thread.id)
    assert reply.message == "On it!" and reply.type == "reply"
    assert (await Feedback.get(id=thread.id)).first_reply_time is not None


async def test_reply_with_htmx_returns_the_conversation_fragment(client, csrf, application, thread):
    response = await client.post(
        url(thread, "/replies"), form={"csrf_token": csrf, "message": "Fixed now."}, headers=HX
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="conversation"')
    assert "Fixed now." in body and "<html" not in body
    assert '<textarea name="message"' in body


async def test_empty_reply_is_refused_with_the_message_in_the_box(client, csrf, application, thread):
    response = await client.post(url(thread, "/replies"), form={"csrf_token": csrf, "message": "   "})

    assert response.status_code == 400
    assert "The message field is required." in await response.get_data(as_text=True)
    assert await Reply.filter(feedback_id=thread.id).count() == 0


async def test_failed_htmx_reply_keeps_the_typed_text(client, csrf, application, thread):
    response = await client.post(
        url(thread, "/replies"),
        form={"csrf_token": csrf, "message": "Draft kept", "type": "note"},
        headers=HX,
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 403
    assert body.lstrip().startswith('<section id="conversation"')
    assert ">Draft kept</textarea>" in body


async def test_note_is_disabled_with_the_reason_on_the_free_plan(client, csrf, application, thread):
    body = await page(client, url(thread))

    assert re.search(r'value="note"\s+disabled', body)
    assert "Internal notes are part of the Team plan." in body


async def test_posting_a_note_on_the_free_plan_is_refused(client, csrf, application, thread):
    response = await client.post(
        url(thread, "/replies"), form={"csrf_token": csrf, "message": "Secret", "type": "note"}
    )

    assert response.status_code == 403
    assert "Your plan does not include internal notes" in await response.get_data(as_text=True)
    assert await Reply.filter(feedback_id=thread.id).count() == 0


async def test_notes_are_enabled_on_the_team_plan(client, csrf, agent, application, thread):
    await use_team_plan(agent)

    body = await page(client, url(thread))
    response = await client.post(
        url(thread, "/replies"), form={"csrf_token": csrf, "message": "Only for us", "type": "note"}
    )

    assert not re.search(r'value="note"\s+disabled', body)
    assert "Internal notes are part of the Team plan." not in body
    assert response.status_code == 303
    note = await Reply.get(feedback_id=thread.id)
    assert note.type == "note"
    assert (await Feedback.get(id=thread.id)).first_reply_time is None


async def test_archive_and_unarchive_move_the_counters(client, csrf, application, thread):
    archive = await client.post(url(thread, "/archive"), form={"csrf_token": csrf})
    archived = await Application.get(id=application.id)
    unarchive = await client.post(url(thread, "/unarchive"), form={"csrf_token": csrf})
    reopened = await Application.get(id=application.id)

    assert archive.status_code == 303 and unarchive.status_code == 303
    assert (archived.open_threads, archived.archived_threads) == (0, 1)
    assert (reopened.open_threads, reopened.archived_threads) == (1, 0)
    assert not (await Feedback.get(id=thread.id)).archived


async def test_archive_with_htmx_returns_the_status_fragment(client, csrf, application, thread):
    response = await client.post(url(thread, "/archive"), form={"csrf_token": csrf}, headers=HX)

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="thread-status"')
    assert "Move back to inbox" in body and "/unarchive" in body
    assert (await Feedback.get(id=thread.id)).archived


async def test_adding_a_tag_counts_the_thread_once(client, csrf, application, thread):
    first = await client.post(url(thread, "/tags"), form={"csrf_token": csrf, "name": "  Billing  Issue "})
    again = await client.post(url(thread, "/tags"), form={"csrf_token": csrf, "name": "billing issue"})

    assert first.status_code == 303 and again.status_code == 303
    tag = await Tag.get(application_id=application.id, name="billing issue")
    assert (tag.open_count, tag.archived_count) == (1, 0)
    assert await FeedbackTag.filter(feedback_id=thread.id).count() == 1


async def test_tagging_an_archived_thread_counts_it_as_archived(client, csrf, application, thread):
    await set_archived(application, thread, True)

    await client.post(url(thread, "/tags"), form={"csrf_token": csrf, "name": "later"})

    tag = await Tag.get(application_id=application.id, name="later")
    assert (tag.open_count, tag.archived_count) == (0, 1)


async def test_removing_a_tag_uncounts_the_thread(client, csrf, application):
    thread = await make_thread(application, tags="billing,bugs")
    billing = await Tag.get(application_id=application.id, name="billing")

    response = await client.post(url(thread, f"/tags/{billing.id}/remove"), form={"csrf_token": csrf})

    assert response.status_code == 303
    await billing.refresh_from_db()
    assert billing.open_count == 0
    assert await FeedbackTag.filter(feedback_id=thread.id).count() == 1
    assert (await Tag.get(application_id=application.id, name="bugs")).open_count == 1


async def test_tags_with_htmx_return_the_tags_fragment(client, csrf, application, thread):
    response = await client.post(
        url(thread, "/tags"), form={"csrf_token": csrf, "name": "urgent"}, headers=HX
    )

    body = await response.get_data(as_text=True)
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="thread-tags"')
    assert "urgent" in body and "Remove tag urgent" in body and "data-tag-picker" in body


async def test_an_invalid_tag_name_is_refused(client, csrf, application, thread):
    empty = await client.post(url(thread, "/tags"), form={"csrf_token": csrf, "name": "   "})
    long = await client.post(url(thread, "/tags"), form={"csrf_token": csrf, "name": "x" * 65})

    assert empty.status_code == 400 and "Enter a tag name." in await empty.get_data(as_text=True)
    assert long.status_code == 400 and "64 characters" in await long.get_data(as_text=True)
    assert await Tag.filter(application_id=application.id).count() == 0


async def test_posts_without_a_csrf_token_are_refused(client, csrf, application, thread):
    reply = await client.post(url(thread, "/replies"), form={"message": "No token"})
    archive = await client.post(url(thread, "/archive"), form={})
    tag = await client.post(url(thread, "/tags"), form={"name": "x"})

    assert (reply.status_code, archive.status_code, tag.status_code) == (400, 400, 400)
    assert await Reply.filter(feedback_id=thread.id).count() == 0
    assert not (await Feedback.get(id=thread.id)).archived
    assert await Tag.filter(application_id=application.id).count() == 0


async def test_another_agent_cannot_see_the_thread(intruder, thread):
    other, _ = intruder

    response = await other.get(url(thread))

    assert response.status_code == 404
    assert "Rita Reader" not in await response.get_data(as_text=True)


async def test_another_agent_cannot_reply_archive_or_tag(intruder, application, thread):
    other, token = intruder
    await make_thread(application, tags="keep")
    keep = await Tag.get(application_id=application.id, name="keep")

    responses = [
        await other.post(url(thread, "/replies"), form={"csrf_token": token, "message": "Hi there"}),
        await other.post(url(thread, "/archive"), form={"csrf_token": token}),
        await other.post(url(thread, "/tags"), form={"csrf_token": token, "name": "evil"}),
        await other.post(url(thread, f"/tags/{keep.id}/remove"), form={"csrf_token": token}),
    ]

    assert [response.status_code for response in responses] == [404, 404, 404, 404]
    assert await Reply.filter(feedback_id=thread.id).count() == 0
    assert not (await Feedback.get(id=thread.id)).archived
    assert await Tag.filter(name="evil").count() == 0
    assert (await Tag.get(id=keep.id)).open_count == 1


async def test_a_thread_of_another_application_is_not_found(client, csrf, agent, application):
    from tests.factories import make_application

    other_app = await make_application(agent)
    thread = await make_thread(other_app)

    response = await client.get(f"/app/applications/{application.id}/feedback/{thread.id}")

    assert response.status_code == 404


async def test_back_link_keeps_the_inbox_filters(client, csrf, application, thread):
    body = await page(client, url(thread, "?status=archived&q=rita&evil=1"))

    back = re.search(r'<a href="([^"]+)">← Back to inbox</a>', body).group(1)
    assert back.startswith(f"/app/applications/{application.id}/feedback?")
    assert "status=archived" in back and "q=rita" in back and "evil" not in back


async def test_posts_redirect_back_with_the_inbox_filters(client, csrf, application, thread):
    response = await client.post(url(thread, "/archive?q=rita"), form={"csrf_token": csrf})

    assert response.headers["Location"] == url(thread, "?q=rita")


async def test_thread_page_escapes_untrusted_text(client, csrf, agent, application):
    await use_team_plan(agent)
    thread = await make_thread(
        application,
        message=XSS,
        name="<b>Bold</b> Name",
        tags="<i>tag</i>",
        properties={"<u>key</u>": "<script>alert(3)</script>"},
        url='https://x.example/"><script>alert(4)</script>',
    )
    await make_reply(agent, application, thread, "<script>alert(5)</script>", type="note")

    body = await page(client, url(thread))

    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in body and "&lt;u&gt;key&lt;/u&gt;" in body
    assert "&lt;script&gt;alert(5)&lt;/script&gt;" in body
    assert "<b>Bold</b>" not in body and "&lt;b&gt;Bold&lt;/b&gt; Name" in body
    assert "<i>tag</i>" not in body and "&lt;i&gt;tag&lt;/i&gt;" in body


async def test_a_thread_keeps_at_most_twenty_tags(client, csrf, application):
    thread = await make_thread(
        application, tags=",".join(f"tag {number}" for number in range(20)), quotas=Quotas(tags_per_submit=20)
    )

    response = await client.post(url(thread, "/tags"), form={"csrf_token": csrf, "name": "one too many"})

    assert response.status_code == 400
    assert "at most 20 tags" in await response.get_data(as_text=True)
    assert await FeedbackTag.filter(feedback_id=thread.id).count() == 20
    assert not await Tag.exists(application_id=application.id, name="one too many")


async def test_reply_that_could_not_be_emailed_is_flagged_on_the_thread(
    client, csrf, agent, application, thread
):
    delivered = await make_reply(agent, application, thread, "This one went out.")
    bounced = await make_reply(agent, application, thread, "This one bounced.")
    await atomic(lambda: OutboundEmail.filter(reply_id=delivered.id).update(status="sent"))
    await atomic(
        lambda: OutboundEmail.filter(reply_id=bounced.id).update(
            status="failed", last_error="550 no such user"
        )
    )

    body = await (await client.get(f"/app/applications/{application.id}/feedback/{thread.id}")).get_data(
        as_text=True
    )

    bounced_item = re.search(rf'<li class="reply[^"]*" id="reply-{bounced.id}">.*?</li>', body, re.S).group(0)
    delivered_item = re.search(
        rf'<li class="reply[^"]*" id="reply-{delivered.id}">.*?</li>', body, re.S
    ).group(0)
    assert "E-mail not delivered" in bounced_item
    assert "E-mail not delivered" not in delivered_item
    assert "E-mailed" in delivered_item


async def test_reply_still_in_the_outbox_is_shown_as_queued(client, csrf, agent, application, thread):
    waiting = await make_reply(agent, application, thread, "Not sent yet.")

    body = await page(client, url(thread))

    item = re.search(rf'<li class="reply[^"]*" id="reply-{waiting.id}">.*?</li>', body, re.S).group(0)
    assert "E-mail queued" in item
    assert "E-mailed" not in item


async def test_reply_box_says_replies_wait_when_the_server_sends_no_email(client, csrf, thread):
    body = await page(client, url(thread))

    assert "e-mail goes out once this server has <code>EARFUL_SMTP_URL</code>" in body
    assert "The customer gets this by e-mail." not in body


async def test_reply_box_promises_email_when_the_server_sends_it(app, client, csrf, settings, thread):
    app.config["EARFUL"] = dataclasses.replace(settings, smtp_url="smtp://127.0.0.1:2525")

    body = await page(client, url(thread))

    assert "The customer gets this by e-mail." in body


async def test_thread_page_reads_the_agent_with_the_application_and_the_rest_with_the_thread(
    client, csrf, agent, application, thread, backend, queries
):
    await make_reply(agent, application, thread)
    await page(client, url(thread))  # the worker now knows the application's agents

    queries.statements.clear()
    await page(client, url(thread))

    # The agent with the application, then the thread with everything the page shows
    # (app.services.thread_page); SQLite reads the thread and its six parts in turn.
    assert queries.count == (2 if backend == "postgres" else 7), queries.statements
    assert "LEFT JOIN applications a" in queries.statements[0]
