"""The thread page: the message, its sender and metadata, the conversation, replies, tags, archive.

The reply box offers the saved replies of the application and of its organization: a typeahead
(app/static/js/saved-replies.js) fetches one filled for the thread from
:func:`filled_saved_reply` and puts it into the message; without JavaScript the box's select
and its Insert button post the draft to :func:`insert_saved_reply`, which shows the page again
with the filled text after the draft.
"""

from __future__ import annotations

from quart import Blueprint, Response, current_app, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import StringField, TextAreaField

from app.errors import DomainError
from app.links import logo_path
from app.models import SENTIMENTS
from app.repositories.applications import ApplicationRow
from app.repositories.threads import ThreadRow
from app.services import assignment
from app.services.applications import get_application
from app.services.deletion import delete_thread as remove_thread
from app.services.feedback import assign, get_thread, get_thread_details, set_archived, set_sentiment
from app.services.mail.outbox import delivery_status_of_replies
from app.services.replies import create_agent_reply
from app.services.saved_replies import fill_for_thread
from app.services.storage import storage_for
from app.services.tags import add_tag_to_thread, remove_tag_from_thread
from app.services.thread_page import load_thread_page
from app.services.validation import parse_int, valid_id
from app.shared_reads import reads_on_one_connection
from app.views.addresses import IdLinks
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent
from app.views.thread_display import HELPERS, display_properties, inbox_filters

blueprint = Blueprint("threads", __name__)

THREAD = "/applications/<id:application_id>/feedback/<id:feedback_id>"
NOTES_REASON = "Internal notes are part of the Team plan."


class ReplyForm(CSRFForm):
    message = TextAreaField("Message")
    type = StringField("Send as", default="reply")  # "reply" or "note", checked by the service


class TagForm(CSRFForm):
    name = StringField("Tag")


async def _thread_context(
    application: ApplicationRow,
    feedback_id: int,
    reply_form: ReplyForm | None = None,
    reply_error: str | None = None,
    tag_form: TagForm | None = None,
    tag_error: str | None = None,
) -> dict[str, object]:
    """Everything the thread page and its fragments show; used by GET and by failed POSTs."""
    page = await load_thread_page(application, feedback_id)
    details, agents = page.details, page.agents
    filters = inbox_filters(request.args)
    assignee_id = details.thread.assignee_id
    # The thread's links, with the inbox's filters (views.addresses: url_for is a tenth of the page).
    link = IdLinks(filters, application_id=application.id, feedback_id=feedback_id)
    return {
        **HELPERS,
        "application": application,
        "details": details,
        "thread": details.thread,
        "member": details.thread.member,
        "properties": display_properties(details.thread.properties),
        "deliveries": page.deliveries,
        "email_sending": current_app.config["EARFUL"].smtp_url is not None,
        "notes_allowed": page.notes_allowed,
        "notes_reason": NOTES_REASON,
        "saved_replies": page.saved_replies,
        "reply_form": reply_form or ReplyForm(),
        "reply_error": reply_error,
        "tag_form": tag_form or TagForm(),
        "tag_error": tag_error,
        "agents": agents,
        "assignee_left": assignee_id is not None and all(agent.id != assignee_id for agent in agents),
        "filters": filters,
        "back_url": url_for("views.inbox.list_threads", application_id=application.id, **filters),
        "action": lambda name, **more: link(f"views.threads.{name}", **more),
        "link": link,
        "live_link": IdLinks({}, application_id=application.id, feedback_id=feedback_id),
        "section": "inbox",
        "logo_url": logo_path(application),
        "sentiments": SENTIMENTS,
    }


async def _load(application_id: int, feedback_id: int) -> tuple[ApplicationRow, ThreadRow]:
    """The agent's application and one of its threads; NotFound for anything else."""
    application = await get_application(current_agent(), application_id)
    return application, await get_thread(application, feedback_id)


def _back_to_thread(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Without JavaScript, a successful POST goes back to the thread page (POST/redirect/GET)."""
    target = url_for(
        "views.threads.show_thread",
        application_id=application_id,
        feedback_id=feedback_id,
        **inbox_filters(request.args),
    )
    return redirect(target, 303)


async def _render(fragment: str, context: dict[str, object], status: int = 200) -> tuple[str, int]:
    """The fragment for htmx, else the whole page (with the same context)."""
    template = fragment if is_htmx() else "threads/show.html"
    return await render_template(template, **context), status


@blueprint.get(THREAD)
@reads_on_one_connection
@agent_required
async def show_thread(application_id: int, feedback_id: int) -> tuple[str, int] | str:
    """The thread page."""
    application = await get_application(current_agent(), application_id)
    context = await _thread_context(application, feedback_id)
    return await render_template("threads/show.html", **context)


async def thread_page(
    application: ApplicationRow,
    feedback_id: int,
    reply_form: ReplyForm | None = None,
    reply_error: str | None = None,
    status: int = 200,
) -> tuple[str, int]:
    """The whole thread page, with the reply box as given."""
    context = await _thread_context(application, feedback_id, reply_form=reply_form, reply_error=reply_error)
    return await render_template("threads/show.html", **context), status


@blueprint.get(THREAD + "/saved-replies/<id:saved_reply_id>")
@agent_required
async def filled_saved_reply(application_id: int, feedback_id: int, saved_reply_id: int) -> Response:
    """A saved reply the thread's application offers, filled for the thread, as plain text: what
    the typeahead puts into the reply box (the browser inserts it as text, never as markup)."""
    application, thread = await _load(application_id, feedback_id)
    filled = await fill_for_thread(application, thread, saved_reply_id)
    return Response(filled.text, mimetype="text/plain")


def with_inserted(draft: str, text: str) -> str:
    """The draft with a saved reply's text after it (a blank line between)."""
    draft = draft.rstrip()
    return f"{draft}\n\n{text}" if draft else text


@blueprint.post(THREAD + "/saved-replies/insert")
@agent_required
async def insert_saved_reply(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Without JavaScript: the thread page again, the chosen saved reply filled after the draft
    in the reply box; nothing is sent."""
    application, thread = await _load(application_id, feedback_id)
    posted = await request.form
    form = ReplyForm(posted)
    chosen = parse_int(posted.get("saved_reply", ""))
    if chosen is None or not valid_id(chosen):
        return await thread_page(application, feedback_id, form, "Choose a saved reply to insert.", 400)
    filled = await fill_for_thread(application, thread, chosen)
    form.message.data = with_inserted(form.message.data or "", filled.text)
    return await thread_page(application, feedback_id, form)


@blueprint.get(THREAD + "/replies")
@reads_on_one_connection
@agent_required
async def newer_replies(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """The replies, notes and customer answers newer than ``after`` (the newest a live thread
    page shows): what the page adds when it hears of a reply (app/static/js/live.js). A plain
    visit goes to the thread page."""
    if not is_htmx():
        return _back_to_thread(application_id, feedback_id)
    application = await get_application(current_agent(), application_id)
    details = await get_thread_details(application, feedback_id)
    after = parse_int(request.args.get("after", "")) or 0
    shown = [reply for reply in details.replies if reply.id > after]
    return await render_template(
        "partials/threads/replies.html",
        **HELPERS,
        replies=shown,
        details=details,
        member=details.thread.member,
        deliveries=await delivery_status_of_replies(
            [reply.id for reply in shown if reply.from_agent and reply.type == "reply"]
        ),
    )


@blueprint.post(THREAD + "/replies")
@agent_required
async def create_reply(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Send a reply to the customer or add an internal note."""
    application, thread = await _load(application_id, feedback_id)
    form = ReplyForm(await request.form)
    try:
        await create_agent_reply(current_agent(), application, thread, form.message.data, form.type.data)
    except DomainError as error:
        context = await _thread_context(application, feedback_id, reply_form=form, reply_error=str(error))
        return await _render("partials/threads/conversation.html", context, error.status)
    if not is_htmx():
        return _back_to_thread(application_id, feedback_id)
    return await _render("partials/threads/reply-swap.html", await _thread_context(application, feedback_id))


async def _set_archived(application_id: int, feedback_id: int, archived: bool) -> ResponseReturnValue:
    application, thread = await _load(application_id, feedback_id)
    try:
        await set_archived(application, thread, archived)
    except DomainError as error:
        context = await _thread_context(application, feedback_id)
        return await _render(
            "partials/threads/status.html", {**context, "status_error": str(error)}, error.status
        )
    if not is_htmx():
        return _back_to_thread(application_id, feedback_id)
    return await _render("partials/threads/status.html", await _thread_context(application, feedback_id))


@blueprint.post(THREAD + "/archive")
@agent_required
async def archive_thread(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Archive a thread."""
    return await _set_archived(application_id, feedback_id, True)


@blueprint.post(THREAD + "/unarchive")
@agent_required
async def unarchive_thread(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Move an archived thread back to the open inbox."""
    return await _set_archived(application_id, feedback_id, False)


@blueprint.post(THREAD + "/assign")
@agent_required
async def assign_thread(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Assign the thread to an agent of the application (``assignee_id``; empty: nobody)."""
    application, thread = await _load(application_id, feedback_id)
    form = await request.form
    try:
        await assign(
            current_agent(), application, thread, assignment.parse_assignee_id(form.get("assignee_id"))
        )
    except DomainError as error:
        context = await _thread_context(application, feedback_id)
        return await _render(
            "partials/threads/assignee.html", {**context, "assignee_error": str(error)}, error.status
        )
    if not is_htmx():
        return _back_to_thread(application_id, feedback_id)
    return await _render("partials/threads/assignee.html", await _thread_context(application, feedback_id))


@blueprint.post(THREAD + "/tags")
@agent_required
async def add_tag(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Tag a thread, creating the tag if it is new."""
    application, thread = await _load(application_id, feedback_id)
    form = TagForm(await request.form)
    try:
        quotas = current_app.config["EARFUL"].quotas
        await add_tag_to_thread(application, thread, form.name.data, quotas.tags_per_application)
    except DomainError as error:
        context = await _thread_context(application, feedback_id, tag_form=form, tag_error=str(error))
        return await _render("partials/threads/tags.html", context, error.status)
    if not is_htmx():
        return _back_to_thread(application_id, feedback_id)
    return await _render("partials/threads/tags.html", await _thread_context(application, feedback_id))


@blueprint.post(THREAD + "/tags/<id:tag_id>/remove")
@agent_required
async def remove_tag(application_id: int, feedback_id: int, tag_id: int) -> ResponseReturnValue:
    """Remove a tag from a thread."""
    application, thread = await _load(application_id, feedback_id)
    await remove_tag_from_thread(application, thread, tag_id)
    if not is_htmx():
        return _back_to_thread(application_id, feedback_id)
    return await _render("partials/threads/tags.html", await _thread_context(application, feedback_id))


@blueprint.post(THREAD + "/sentiment")
@agent_required
async def correct_sentiment(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Correct the thread's sentiment; later recomputation keeps the agent's label."""
    application, thread = await _load(application_id, feedback_id)
    form = await request.form
    try:
        await set_sentiment(application, thread, form.get("sentiment", ""))
    except DomainError as error:
        context = await _thread_context(application, feedback_id)
        return await _render(
            "partials/threads/sentiment.html", {**context, "sentiment_error": str(error)}, error.status
        )
    if not is_htmx():
        return _back_to_thread(application_id, feedback_id)
    return await _render("partials/threads/sentiment.html", await _thread_context(application, feedback_id))


@blueprint.get(THREAD + "/delete")
@agent_required
async def confirm_delete_thread(application_id: int, feedback_id: int) -> str:
    """Without JavaScript, the thread page's Delete button asks here first (with it, the browser's
    confirm box does)."""
    application = await get_application(current_agent(), application_id)
    context = await _thread_context(application, feedback_id)
    return await render_template("threads/delete.html", **context)


@blueprint.post(THREAD + "/delete")
@agent_required
async def delete_thread(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Delete the thread with its replies, notes and files, then back to the inbox."""
    application = await get_application(current_agent(), application_id)
    await remove_thread(application, feedback_id, storage_for(current_app.config["EARFUL"]))
    await flash("Thread deleted.", "success")
    target = url_for("views.inbox.list_threads", application_id=application_id, **inbox_filters(request.args))
    if is_htmx():
        return Response("", 200, headers={"HX-Redirect": target})
    return redirect(target, 303)
