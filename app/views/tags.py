"""The tags page of an application: its tags with their counts, a search, and deleting them."""

from __future__ import annotations

from urllib.parse import urlencode

from quart import Blueprint, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue

from app.links import logo_path
from app.repositories.applications import ApplicationRow
from app.services.applications import get_application
from app.services.deletion import delete_tag, is_administrator
from app.services.tags import search_tags
from app.views.rendering import is_htmx, render_template
from app.views.security import agent_required, current_agent

blueprint = Blueprint("tags", __name__)

# Tags the page shows at once, by name: an application may have thousands; a search finds the rest.
PAGE_TAGS = 50
TAGS = "/applications/<id:application_id>/tags"


def _query() -> str:
    return (request.args.get("q") or "").strip()


async def _tags_context(application: ApplicationRow, **extra: object) -> dict[str, object]:
    query = _query()
    found = await search_tags(application.id, query, PAGE_TAGS)
    return {
        "application": application,
        "logo_url": logo_path(application),
        "section": "tags",
        "tags": found,
        "query": query,
        "more": len(found) == PAGE_TAGS,
        "page_tags": PAGE_TAGS,
        "administrator": await is_administrator(current_agent(), application),
        "tags_url": url_for("views.tags.list_tags", application_id=application.id),
        "status": None,
        **extra,
    }


@blueprint.get(TAGS)
@agent_required
async def list_tags(application_id: int) -> str:
    """The first tags by name that match the search, with their open and archived counts; htmx
    (the search as the agent types) gets only the list."""
    application = await get_application(current_agent(), application_id)
    context = await _tags_context(application)
    if is_htmx() and not request.headers.get("HX-History-Restore-Request"):
        return await render_template("partials/tags/manage-list.html", **context)
    return await render_template("applications/tags.html", **context)


@blueprint.post(TAGS + "/<id:tag_id>/delete")
@agent_required
async def delete(application_id: int, tag_id: int) -> ResponseReturnValue:
    """Delete a tag (the application's administrators only): its threads lose it."""
    agent = current_agent()
    application = await get_application(agent, application_id)
    await delete_tag(agent, application, tag_id)
    if is_htmx():
        context = await _tags_context(application, status="Tag deleted.")
        return await render_template("partials/tags/manage-list.html", **context)
    await flash("Tag deleted.", "success")
    target = url_for("views.tags.list_tags", application_id=application_id)
    query = _query()
    return redirect(f"{target}?{urlencode({'q': query})}" if query else target, 303)
