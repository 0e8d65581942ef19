"""The inbox of an application: its threads, newest first, with filters and keyset paging."""

from __future__ import annotations

from quart import Blueprint, request, url_for

from app.errors import NotFound
from app.models import SENTIMENTS, Application
from app.services.applications import get_application
from app.services.inbox import PAGE_SIZE, search_threads
from app.services.tags import list_tags
from app.services.validation import MAX_ID, parse_int
from app.views.applications import logo_url
from app.views.rendering import render_template
from app.views.security import agent_required, current_agent
from app.views.thread_display import HELPERS, inbox_filters

blueprint = Blueprint("inbox", __name__)


def check_ids(*ids: int) -> None:
    """Ids beyond the database's integer range name nothing (and must not reach PostgreSQL)."""
    if any(not 1 <= value <= MAX_ID for value in ids):
        raise NotFound("Not found")


def _filters() -> dict[str, object]:
    """Read the inbox filters from the query string; anything malformed is ignored."""
    args = request.args
    sentiment = args.get("sentiment", "")
    before = parse_int(args.get("before", ""))
    return {
        "archived": args.get("status") == "archived",
        "sentiment": sentiment if sentiment in SENTIMENTS else None,
        "tag": args.get("tag", "").strip() or None,
        "query": args.get("q", "").strip(),
        "before": before if before is not None and 1 <= before <= MAX_ID else None,
    }


def inbox_url(application: Application, **filters: object) -> str:
    """The inbox with the given filters; empty ones are left out of the address."""
    return url_for(
        "views.inbox.list_threads",
        application_id=application.id,
        **{key: value for key, value in filters.items() if value},
    )


async def _inbox_context(application: Application) -> dict[str, object]:
    """Everything the inbox page and its results fragment show."""
    filters = _filters()
    page = await search_threads(application, limit=PAGE_SIZE, **filters)  # type: ignore[arg-type]
    current = inbox_filters(request.args)
    current.pop("before", None)
    return {
        **HELPERS,
        "application": application,
        "page": page,
        "filters": filters,
        "current": current,
        "tags": await list_tags(application.id),
        "sentiments": SENTIMENTS,
        "older_url": inbox_url(application, **current, before=page.next_before) if page.next_before else None,
        "newest_url": inbox_url(application, **current) if filters["before"] else None,
        "has_filters": bool(filters["sentiment"] or filters["tag"] or filters["query"]),
        "inbox_url": lambda **changes: inbox_url(application, **{**current, **changes}),
        "thread_query": inbox_filters(request.args),
        "section": "inbox",
        "logo_url": logo_url(application),
    }


@blueprint.get("/applications/<int:application_id>/feedback")
@agent_required
async def list_threads(application_id: int) -> tuple[str, int] | str:
    """The inbox page; an htmx request from the filters gets only the results fragment."""
    check_ids(application_id)
    application = await get_application(current_agent(), application_id)
    context = await _inbox_context(application)
    if request.headers.get("HX-Request") and not request.headers.get("HX-History-Restore-Request"):
        return await render_template("partials/inbox/results.html", **context)
    return await render_template("inbox/list.html", **context)
