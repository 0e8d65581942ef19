"""The inbox of an application: its threads, newest first, with filters and keyset paging."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup
from quart import Blueprint, Response, current_app, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue

from app.downloads import export_response
from app.errors import DomainError
from app.links import logo_path
from app.models import SENTIMENTS
from app.repositories.applications import ApplicationRow
from app.repositories.threads import SenderRow, ThreadRow
from app.services import export
from app.services.applications import get_application
from app.services.deletion import delete_threads as remove_threads
from app.services.deletion import parse_thread_ids
from app.services.inbox import PAGE_SIZE, InboxFilters, InboxPage, search_threads
from app.services.tags import search_tags as find_tags
from app.services.thread_filters import ThreadFilters
from app.services.validation import parse_int, valid_id
from app.views.rendering import is_htmx, render_template, template_macro
from app.views.security import agent_required, current_agent
from app.views.thread_display import HELPERS, avatar_src, full_time, inbox_filters, time_ago

blueprint = Blueprint("inbox", __name__)


def _filters() -> InboxFilters:
    """Read the inbox filters from the query string; anything malformed is ignored."""
    args = request.args
    sentiment = args.get("sentiment", "")
    before = parse_int(args.get("before", ""))
    return {
        "archived": args.get("status") == "archived",
        "sentiment": sentiment if sentiment in SENTIMENTS else None,
        "tag": args.get("tag", "").strip() or None,
        "query": args.get("q", "").strip(),
        "assignee": None,
        "before": before if before is not None and valid_id(before) else None,
    }


def inbox_url(application: ApplicationRow, **filters: object) -> str:
    """The inbox with the given filters; empty ones are left out of the address."""
    given: dict[str, Any] = {key: value for key, value in filters.items() if value}
    return url_for("views.inbox.list_threads", application_id=application.id, **given)


@dataclass(frozen=True)
class InboxLine:
    """A row of the inbox page with the values its template shows, computed here: each call a
    template makes costs more than the same call from Python, and a page has fifty rows."""

    thread: ThreadRow
    member: SenderRow
    href: str
    avatar: str
    age: str
    full_time: str
    chips: Markup


def thread_links(application: ApplicationRow, query: dict[str, Any]) -> Callable[[int], str]:
    """The thread page's address for any thread id, with the inbox filters in ``query``.

    ``url_for`` is called once and the thread id, the last segment of the path, swapped in,
    rather than once for each of a page's fifty rows.
    """
    sample = url_for("views.threads.show_thread", application_id=application.id, feedback_id=1, **query)
    path, mark, arguments = sample.partition("?")
    base = path.rpartition("/")[0]
    return lambda feedback_id: f"{base}/{feedback_id}{mark}{arguments}"


def inbox_lines(application: ApplicationRow, page: InboxPage, query: dict[str, str]) -> list[InboxLine]:
    """The rows of a page as the inbox shows them; each tag's chip is drawn once per page."""
    link = thread_links(application, query)
    tag_chip = template_macro("partials/threads/tag-chip.html", "tag_chip")
    chips: dict[int, Markup] = {}
    now = datetime.now(UTC)
    lines = []
    for row in page.rows:
        thread, member = row.thread, row.thread.sender
        for tag in row.tags:
            if tag.id not in chips:
                chips[tag.id] = tag_chip(tag)
        lines.append(
            InboxLine(
                thread=thread,
                member=member,
                href=link(thread.id),
                avatar=avatar_src(member.email, member.name),
                age=time_ago(thread.created_at, now),
                full_time=full_time(thread.created_at),
                chips=Markup("").join(chips[tag.id] for tag in row.tags),
            )
        )
    return lines


async def _inbox_context(application: ApplicationRow) -> dict[str, object]:
    """Everything the inbox page and its results fragment show."""
    filters = _filters()
    page = await search_threads(application, limit=PAGE_SIZE, **filters)
    current = inbox_filters(request.args)
    current.pop("before", None)
    return {
        **HELPERS,
        "application": application,
        "lines": inbox_lines(application, page, inbox_filters(request.args)),
        "filters": filters,
        "current": current,
        "sentiments": SENTIMENTS,
        "older_url": inbox_url(application, **current, before=page.next_before) if page.next_before else None,
        "newest_url": inbox_url(application, **current) if filters["before"] else None,
        "has_filters": bool(filters["sentiment"] or filters["tag"] or filters["query"]),
        "inbox_url": lambda **changes: inbox_url(application, **{**current, **changes}),
        "export_url": url_for("views.inbox.export_threads", application_id=application.id, **current),
        "delete_url": url_for(
            "views.inbox.delete_threads", application_id=application.id, **inbox_filters(request.args)
        ),
        "section": "inbox",
        "logo_url": logo_path(application),
    }


@blueprint.get("/applications/<id:application_id>/feedback")
@agent_required
async def list_threads(application_id: int) -> tuple[str, int] | str:
    """The inbox page; an htmx request from the filters gets only the results fragment."""
    application = await get_application(current_agent(), application_id)
    context = await _inbox_context(application)
    if is_htmx() and not request.headers.get("HX-History-Restore-Request"):
        return await render_template("partials/inbox/results.html", **context)
    return await render_template("inbox/list.html", **context)


@blueprint.get("/applications/<id:application_id>/tags/search")
@agent_required
async def search_tags(application_id: int) -> str:
    """Tags matching what the agent types in a tag picker (the inbox's filter, a thread's add
    tag field): a short list, so that no page carries every tag of the application. The text
    comes as ``q``, or under the name of the picker's field."""
    application = await get_application(current_agent(), application_id)
    args = request.args
    query = args.get("q") or args.get("tag") or args.get("name") or ""
    tags = await find_tags(application.id, query)
    return await render_template("partials/tags/matches.html", tags=tags, query=query.strip())


@blueprint.get("/applications/<id:application_id>/feedback/export")
@agent_required
async def export_threads(application_id: int) -> Response:
    """The inbox's threads as a file, with the page's filters (status, sentiment, tag, text):
    the same export as the management API's (:mod:`app.services.export`)."""
    application = await get_application(current_agent(), application_id)
    shown = _filters()
    filters = ThreadFilters(
        archived=shown["archived"], sentiment=shown["sentiment"], tag=shown["tag"], query=shown["query"]
    )
    export_format = export.check_format(request.args.get("format"))
    body = export.export_file(application, filters, export_format, bom=export_format == "csv")
    return export_response(application.id, body, export_format)


@blueprint.post("/applications/<id:application_id>/feedback/delete")
@agent_required
async def delete_threads(application_id: int) -> ResponseReturnValue:
    """Delete the threads checked in the inbox, in one transaction, then back to the same page.

    htmx posts with ``confirmed`` once the browser's confirm box said yes; a plain form post
    gets a confirmation page first, whose button posts the same ids with ``confirmed``."""
    application = await get_application(current_agent(), application_id)
    form = await request.form
    filters = inbox_filters(request.args)
    back = inbox_url(application, **filters)
    context = {
        "application": application,
        "logo_url": logo_path(application),
        "section": "inbox",
        "back_url": back,
        "action": url_for("views.inbox.delete_threads", application_id=application.id, **filters),
    }
    try:
        ids = parse_thread_ids(form.getlist("feedback_ids"))
    except DomainError as error:
        if is_htmx():
            await flash(str(error), "error")
            return Response("", error.status, headers={"HX-Redirect": back})
        return await render_template("inbox/delete.html", **context, error=str(error)), error.status
    if form.get("confirmed") != "1":
        return await render_template("inbox/delete.html", **context, ids=ids, error=None)
    deleted = await remove_threads(application, ids, current_app.config["EARFUL"].data_dir)
    await flash(f"{deleted} thread{'' if deleted == 1 else 's'} deleted.", "success")
    if is_htmx():
        return Response("", 200, headers={"HX-Redirect": back})
    return redirect(back, 303)
