"""The live pages' event streams (server-sent events, read by htmx 4's SSE extension), and the
thread page's "is writing" ping and line.

An open inbox streams its application's new threads, an open thread page its thread's replies
and typing: ids only (app.services.live), which the page turns into rows by asking the ordinary
views for them (app/static/js/live.js), so every row it shows passes the same checks as a page
load. A stream is for one application the agent sees, checked when it connects and again at
every keep-alive (a sign-out, a lost membership or a deleted thread end it).

Streams answer 401 (signed out) and 404 (nothing to see) rather than the web app's redirect or
page: the extension reconnects on its own, slower after each failure, but at once after an
answer that succeeds. Each stream sends ``earful:ready`` once subscribed, so that the page asks
for what it may have missed before (on every reconnect too); a keep-alive comment every
KEEP_ALIVE seconds; and ends when the process stops (the page reconnects, to another worker).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from quart import Blueprint, Response
from quart.typing import ResponseReturnValue

from app.errors import NotFound
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.threads import ThreadRow
from app.services import live
from app.services.applications import get_application
from app.services.feedback import get_thread
from app.services.users import user_in_session
from app.views.rendering import render_template
from app.views.security import agent_required, current_agent, load_agent

blueprint = Blueprint("live", __name__)

APPLICATION = "/applications/<id:application_id>"
THREAD = APPLICATION + "/feedback/<id:feedback_id>"
KEEP_ALIVE = 20.0  # seconds between comments on a quiet stream (proxies drop idle ones)
RETRY_MS = 1000  # how soon the extension reconnects after a stream ends


def event(name: str, data: str = "") -> bytes:
    """One server-sent event named ``earful:<name>``."""
    return f"event: earful:{name}\ndata: {data}\n\n".encode()


def _refused(status: int, text: str) -> Response:
    return Response(text, status=status, mimetype="text/plain")


async def _still_allowed(agent: UserRow, application_id: int, thread: ThreadRow | None) -> bool:
    """Whether the stream may go on: the same session, the application still seen, the thread
    still there."""
    if await user_in_session(agent.id, agent.session_version) is None:
        return False
    try:
        application = await get_application(agent, application_id)
        if thread is not None:
            await get_thread(application, thread.id)
    except NotFound:
        return False
    return True


def _data(found: live.LiveEvent) -> bytes:
    if found.kind == live.THREADS:
        return event("threads", " ".join(str(i) for i in found.ids))
    if found.kind == live.REPLY:
        return event("reply", " ".join(str(i) for i in found.ids))
    return event("typing", str(found.user_id or ""))


async def _stream(agent: UserRow, application: ApplicationRow, thread: ThreadRow | None) -> Response:
    """The event stream of a page; what it needs of the request is read before it starts."""

    async def events() -> AsyncIterator[bytes]:
        async with live.subscribe(application, thread) as subscription:
            yield f"retry: {RETRY_MS}\n".encode() + event("ready")
            while True:
                found = await subscription.next(KEEP_ALIVE)
                if found is live.CLOSED:
                    return
                if found is None:
                    if not await _still_allowed(agent, application.id, thread):
                        return
                    yield b": keep-alive\n\n"
                elif found is live.CATCH_UP:
                    yield event("catch-up")
                elif isinstance(found, live.LiveEvent):
                    yield _data(found)

    response = Response(
        events(),
        status=200,
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None  # Quart's RESPONSE_TIMEOUT would cut the stream after 60 s
    return response


@blueprint.get(APPLICATION + "/live")
async def inbox_events(application_id: int) -> ResponseReturnValue:
    """The inbox's stream: ``earful:threads`` with the ids of new threads."""
    agent = await load_agent()
    if agent is None:
        return _refused(401, "Sign in again")
    try:
        application = await get_application(agent, application_id)
    except NotFound as error:
        return _refused(404, str(error))
    return await _stream(agent, application, None)


@blueprint.get(THREAD + "/live")
async def thread_events(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """The thread page's stream: ``earful:reply`` with a new reply's id, ``earful:typing`` when
    another agent writes."""
    agent = await load_agent()
    if agent is None:
        return _refused(401, "Sign in again")
    try:
        application = await get_application(agent, application_id)
        thread = await get_thread(application, feedback_id)
    except NotFound as error:
        return _refused(404, str(error))
    return await _stream(agent, application, thread)


@blueprint.post(THREAD + "/typing")
@agent_required
async def typing_ping(application_id: int, feedback_id: int) -> Response:
    """The reply box says its agent is writing (throttled in the page and here): 204."""
    agent = current_agent()
    application = await get_application(agent, application_id)
    await live.typing(agent, application, await get_thread(application, feedback_id))
    return Response(status=204)


@blueprint.get(THREAD + "/typing")
@agent_required
async def typing_line(application_id: int, feedback_id: int) -> str:
    """Who else is writing a reply on the thread now: the line under the reply box."""
    agent = current_agent()
    application = await get_application(agent, application_id)
    thread = await get_thread(application, feedback_id)
    writers = await live.writers(agent, thread)
    return await render_template("partials/threads/typing.html", writers=writers)
