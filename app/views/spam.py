"""Spam controls in the web app: the settings page's blocklist card, and a thread's Spam button."""

from __future__ import annotations

from quart import Blueprint, current_app, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue

from app.errors import DomainError, ValidationError
from app.services import blocklist
from app.services.applications import get_application
from app.services.storage import storage_for
from app.views import applications as applications_views
from app.views import threads as threads_views
from app.views.rendering import render_template
from app.views.security import agent_required, current_agent
from app.views.thread_display import inbox_filters

blueprint = Blueprint("spam", __name__)


def _blocklist_url(application_id: int) -> str:
    return url_for("views.applications.show_application", application_id=application_id) + "#blocklist"


@blueprint.post("/applications/<id:application_id>/blocklist")
@agent_required
async def add_to_blocklist(application_id: int) -> ResponseReturnValue:
    """Block an address, a domain or a network; a refused value shows the settings page again
    with the card's error and the value as typed."""
    agent = current_agent()
    application = await get_application(agent, application_id)
    value = (await request.form).get("value", "")
    try:
        entry, created = await blocklist.add_entry(application, value)
    except DomainError as error:
        context = await applications_views._settings_context(
            agent, application, blocklist_error=str(error), blocklist_value=value
        )
        return await render_template("applications/show.html", **context), error.status
    await flash(f"{entry.value} is blocked." if created else f"{entry.value} was blocked already.", "success")
    return redirect(_blocklist_url(application.id), 303)


@blueprint.post("/applications/<id:application_id>/blocklist/<id:entry_id>/remove")
@agent_required
async def remove_from_blocklist(application_id: int, entry_id: int) -> ResponseReturnValue:
    application = await get_application(current_agent(), application_id)
    await blocklist.remove_entry(application, entry_id)
    await flash("Removed from the blocklist.", "success")
    return redirect(_blocklist_url(application.id), 303)


@blueprint.post("/applications/<id:application_id>/feedback/<id:feedback_id>/spam")
@agent_required
async def mark_spam(application_id: int, feedback_id: int) -> ResponseReturnValue:
    """Block the thread's sender and delete the thread; back to the inbox (with its filters)."""
    application = await get_application(current_agent(), application_id)
    try:
        spam = await blocklist.mark_spam(application, feedback_id, storage_for(current_app.config["EARFUL"]))
    except ValidationError as error:  # the blocklist is full: the thread stays, and its page says why
        context = await threads_views._thread_context(application, feedback_id)
        return await render_template("threads/show.html", **context, spam_error=str(error)), error.status
    await flash(f"Marked as spam: {spam.blocked.value} is blocked.", "success")
    return redirect(
        url_for("views.inbox.list_threads", application_id=application.id, **inbox_filters(request.args)), 303
    )
