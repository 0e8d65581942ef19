"""The live pages: their event streams (scoped, checked on connect and at every keep-alive, closed
when the process stops), the rows and replies they ask for, and "is writing".

The streams are read through the test client's streaming connection; events come from the
services, through a real NOTIFY on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from app.db import atomic
from app.models import Application
from app.services import live
from app.services.organizations import add_member
from app.services.passwords import set_password
from app.views import live as live_views
from app.views.rendering import render_template
from tests.factories import (
    make_application,
    make_customer_reply,
    make_organization,
    make_reply,
    make_thread,
    make_user,
    sign_in,
)
from tests.views.test_applications import intruder, signed_in

__all__ = ["intruder", "signed_in"]  # fixtures used by the tests below

HTMX = {"HX-Request": "true"}
WAIT = 3.0


class Stream:
    """An open event stream of the test client."""

    def __init__(self, connection) -> None:
        self.connection = connection
        self.received = b""

    async def until(self, needle: bytes, wait: float = WAIT) -> bytes:
        """Read until ``needle`` has come; everything read so far."""
        while needle not in self.received:
            self.received += await asyncio.wait_for(self.connection.receive(), wait)
        return self.received

    async def quiet(self, wait: float = 0.4) -> bytes:
        """What comes within ``wait`` seconds."""
        try:
            while True:
                self.received += await asyncio.wait_for(self.connection.receive(), wait)
        except TimeoutError:
            return self.received

    async def ended(self, wait: float = WAIT) -> bool:
        """Whether the response ends within ``wait`` seconds."""
        try:
            await asyncio.wait_for(self.connection._task, wait)
        except TimeoutError:
            return False
        return True


async def open_stream(client, path: str):
    connection = client.request(path, headers=HTMX)
    await connection.__aenter__()
    await connection.send_complete()
    return Stream(connection)


async def close_stream(stream: Stream) -> None:
    await stream.connection.disconnect()
    await asyncio.wait_for(stream.connection._task, WAIT)


def inbox_stream(application) -> str:
    return f"/app/applications/{application.id}/live"


def thread_path(thread, suffix: str = "") -> str:
    return f"/app/applications/{thread.application_id}/feedback/{thread.id}{suffix}"


# --- the streams -------------------------------------------------------------------------------


async def test_the_inbox_stream_names_its_applications_new_threads(client, agent, application, signed_in):
    other = await make_application(agent)
    stream = await open_stream(client, inbox_stream(application))
    try:
        start = await stream.until(b"event: earful:ready")
        assert start.startswith(b"retry: ")
        assert stream.connection.headers["Content-Type"] == "text/event-stream"
        assert stream.connection.headers["Cache-Control"] == "no-cache"

        await make_thread(other)
        thread = await make_thread(application)

        received = await stream.until(f"data: {thread.id}\n\n".encode())
        assert re.findall(rb"event: earful:threads\ndata: (\d+)", received) == [str(thread.id).encode()]
    finally:
        await close_stream(stream)


async def test_the_thread_stream_names_its_replies_and_typing_only(
    client, app, agent, application, signed_in
):
    thread, other_thread = await make_thread(application), await make_thread(application)
    colleague = await make_user(name="Bob")
    stream = await open_stream(client, thread_path(thread, "/live"))
    try:
        await stream.until(b"earful:ready")
        await make_reply(agent, application, other_thread)
        reply = await make_reply(agent, application, thread)
        await live.typing(colleague, application, thread)

        received = await stream.until(b"event: earful:typing")
        assert f"event: earful:reply\ndata: {reply.id}\n\n".encode() in received
        assert f"event: earful:typing\ndata: {colleague.id}\n\n".encode() in received
        assert received.count(b"event: earful:reply") == 1
    finally:
        await close_stream(stream)


async def test_a_signed_out_stream_is_refused_with_401_not_a_redirect(client, application):
    response = await client.get(inbox_stream(application), headers=HTMX)

    assert response.status_code == 401
    assert response.mimetype == "text/plain"


async def test_another_users_streams_are_not_found(app, agent, application, intruder):
    other, _ = intruder
    thread = await make_thread(application)
    mine = await make_application(await make_user())

    for path in (
        inbox_stream(application),
        thread_path(thread, "/live"),
        f"/app/applications/{mine.id}/live",
    ):
        response = await other.get(path, headers=HTMX)
        assert response.status_code == 404, path
        assert response.mimetype == "text/plain"


async def test_a_thread_of_another_application_has_no_stream(client, agent, application, signed_in):
    thread = await make_thread(await make_application(agent))

    response = await client.get(f"/app/applications/{application.id}/feedback/{thread.id}/live", headers=HTMX)

    assert response.status_code == 404


async def test_a_quiet_stream_sends_keep_alives(client, application, signed_in, monkeypatch):
    monkeypatch.setattr(live_views, "KEEP_ALIVE", 0.1)
    stream = await open_stream(client, inbox_stream(application))
    try:
        received = await stream.until(b": keep-alive\n\n")
        assert b"earful:ready" in received
    finally:
        await close_stream(stream)


async def test_a_stream_ends_at_its_keep_alive_once_the_agent_signed_out_everywhere(
    client, agent, application, signed_in, monkeypatch
):
    monkeypatch.setattr(live_views, "KEEP_ALIVE", 0.1)
    stream = await open_stream(client, inbox_stream(application))
    await stream.until(b"earful:ready")

    await set_password(agent, "another long password 123")

    assert await stream.ended()


async def test_stopping_the_process_ends_every_stream(client, application, signed_in):
    stream = await open_stream(client, inbox_stream(application))
    await stream.until(b"earful:ready")

    await live.stop()
    try:
        assert await stream.ended()
    finally:
        await live.start()  # as the app started it, for its own stop


async def test_a_slow_page_is_told_to_catch_up(client, application, signed_in):
    stream = await open_stream(client, inbox_stream(application))
    try:
        await stream.until(b"earful:ready")
        [subscription] = live.hub._subscriptions[application.id]
        for number in range(live.QUEUE_SIZE + 1):
            subscription.offer(live.LiveEvent(live.THREADS, application.id, ids=(number + 1,)))

        assert b"event: earful:catch-up" in await stream.until(b"event: earful:catch-up")
    finally:
        await close_stream(stream)


# --- what the pages ask for --------------------------------------------------------------------


async def test_the_first_page_of_the_inbox_is_live_and_an_older_one_is_not(client, application, signed_in):
    thread = await make_thread(application)
    first = await (await client.get(f"/app/applications/{application.id}/feedback")).get_data(as_text=True)
    older = await (
        await client.get(f"/app/applications/{application.id}/feedback?before={thread.id + 1}")
    ).get_data(as_text=True)

    assert f'data-live-connect="/app/applications/{application.id}/live"' in first
    assert "data-live-newer=" in first and f'id="thread-{thread.id}"' in first
    assert "data-live-connect" not in older and "data-live-newer" not in older


async def test_newer_threads_are_the_rows_above_after_that_match_the_filters(client, application, signed_in):
    old = await make_thread(application, sentiment="negative")
    new_negative = await make_thread(application, message="Broken again", sentiment="negative")
    await make_thread(application, sentiment="positive")

    response = await client.get(
        f"/app/applications/{application.id}/feedback/newer?after={old.id}&sentiment=negative", headers=HTMX
    )

    assert response.status_code == 200
    body = await response.get_data(as_text=True)
    assert re.findall(r'id="thread-(\d+)"', body) == [str(new_negative.id)]
    assert "Broken again" in body and "sentiment=negative" in body  # the link keeps the filter


async def test_newer_threads_without_htmx_leads_to_the_inbox(client, application, signed_in):
    response = await client.get(f"/app/applications/{application.id}/feedback/newer?after=1&q=x")

    assert response.status_code == 303
    assert response.headers["Location"] == f"/app/applications/{application.id}/feedback?q=x"


async def test_newer_replies_are_those_above_after(client, agent, application, signed_in):
    thread = await make_thread(application)
    first = await make_reply(agent, application, thread, "First <b>")
    second = await make_reply(agent, application, thread, "Second")

    response = await client.get(thread_path(thread, f"/replies?after={first.id}"), headers=HTMX)

    body = await response.get_data(as_text=True)
    assert re.findall(r'id="reply-(\d+)"', body) == [str(second.id)]
    assert "First" not in body


async def test_newer_replies_have_the_markup_of_the_thread_pages_replies(
    client, agent, application, signed_in
):
    thread = await make_thread(application, email="rita@example.org", name="Rita")
    await make_reply(agent, application, thread, "An agent's <b>answer</b>")
    await make_customer_reply(application, thread, "rita@example.org", "Still <i>broken</i>")

    page = await (await client.get(thread_path(thread, ""))).get_data(as_text=True)
    fragment = await client.get(thread_path(thread, "/replies?after=0"), headers=HTMX)

    replies = re.compile(r'<li class="reply .*?</li>', re.S)
    assert len(replies.findall(page)) == 2
    assert replies.findall(await fragment.get_data(as_text=True)) == replies.findall(page)


async def test_another_user_gets_nothing_of_the_rows_replies_or_typing(app, agent, application, intruder):
    other, csrf = intruder
    thread = await make_thread(application)
    await make_reply(agent, application, thread)

    for method, path, kwargs in [
        ("get", f"/app/applications/{application.id}/feedback/newer?after=0", {}),
        ("get", thread_path(thread, "/replies?after=0"), {}),
        ("get", thread_path(thread, "/typing"), {}),
        ("post", thread_path(thread, "/typing"), {"form": {"csrf_token": csrf}}),
    ]:
        response = await getattr(other, method)(path, headers=HTMX, **kwargs)
        assert response.status_code == 404, path


# --- is writing --------------------------------------------------------------------------------


async def heard_typing(subscription: live.Subscription) -> None:
    """Wait until this process has heard the ping (the hub notes the writer before handing the
    event to the thread's subscribers): on PostgreSQL it comes back through NOTIFY, after the
    request that sent it has answered."""
    event = await subscription.next(WAIT)
    assert isinstance(event, live.LiveEvent) and event.kind == live.TYPING, event


async def test_typing_shows_the_writer_to_the_other_agents_only(app, client, agent, application, signed_in):
    thread = await make_thread(application)
    colleague = await make_user(name="Bob Colleague")
    other = app.test_client()
    other_csrf = await sign_in(other, colleague)
    organization = await make_organization(agent)
    await add_member(organization, colleague)
    await atomic(lambda: Application.filter(id=application.id).update(organization_id=organization.id))

    async with live.subscribe(application, thread) as subscription:
        ping_headers = {**HTMX, "X-CSRF-Token": other_csrf}
        pinged = await other.post(thread_path(thread, "/typing"), headers=ping_headers)
        await heard_typing(subscription)
    seen_by_agent = await (await client.get(thread_path(thread, "/typing"), headers=HTMX)).get_data(
        as_text=True
    )
    seen_by_writer = await (await other.get(thread_path(thread, "/typing"), headers=HTMX)).get_data(
        as_text=True
    )

    assert pinged.status_code == 204
    assert "Bob Colleague is writing…" in seen_by_agent
    assert "writing" not in seen_by_writer


async def test_a_typing_ping_needs_the_csrf_token(client, application, signed_in):
    thread = await make_thread(application)

    response = await client.post(thread_path(thread, "/typing"), headers=HTMX)

    assert response.status_code == 400


async def test_the_thread_page_is_live(client, application, signed_in):
    thread = await make_thread(application)

    body = await (await client.get(thread_path(thread))).get_data(as_text=True)

    assert f'data-live-connect="{thread_path(thread, "/live")}"' in body
    assert f'data-live-typing-url="{thread_path(thread, "/typing")}"' in body
    assert 'id="typing-line"' in body


@pytest.mark.parametrize("names", [["Ann"], ["Ann", "Bob"], ["Ann", "Bob", "Cy"]])
async def test_the_typing_line_names_everyone(app, names):
    class Writer:
        def __init__(self, name: str) -> None:
            self.name = name

    async with app.test_request_context("/"):
        line = await render_template("partials/threads/typing.html", writers=[Writer(n) for n in names])

    expected = {1: "Ann is writing…", 2: "Ann and Bob are writing…", 3: "Ann, Bob and Cy are writing…"}
    assert expected[len(names)] in line
