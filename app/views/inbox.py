"""The inbox of an application: its threads, newest first, with filters and keyset paging, and
the selection that bulk actions take (:mod:`app.services.bulk`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from markupsafe import Markup
from quart import Blueprint, Response, current_app, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue

from app.downloads import export_response
from app.errors import DomainError
from app.links import logo_path
from app.models import SENTIMENTS
from app.repositories.accounts import AgentRow, UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.inbox import ThreadLine
from app.services import assignment, bulk, export
from app.services.applications import get_application
from app.services.deletion import parse_thread_ids
from app.services.inbox import (
    PAGE_SIZE,
    InboxFilters,
    InboxPage,
    Total,
    count_threads,
    inbox_thread_filters,
    search_threads,
)
from app.services.storage import storage_for
from app.services.tags import search_tags as find_tags
from app.services.thread_filters import UNASSIGNED
from app.services.validation import parse_int, valid_id
from app.shared_reads import reads_on_one_connection
from app.views.addresses import IdLinks, address
from app.views.fragments import fragments
from app.views.rendering import (
    characters_truncate_reads,
    is_htmx,
    render_template,
    template_macro,
    truncator,
)
from app.views.security import agent_required, current_agent
from app.views.thread_display import HELPERS, avatar_src, full_time, inbox_filters, time_ago

blueprint = Blueprint("inbox", __name__)


# How much of a message an inbox row shows.
EXCERPT_LENGTH = 220


def _excerpt_read() -> int:
    """How much of each message the inbox reads to show its excerpt."""
    return characters_truncate_reads(EXCERPT_LENGTH)


# The inbox's assignee filter (``assignee=``): the signed-in agent's threads, or nobody's.
ASSIGNEE_CHOICES = {"mine": "Mine", "unassigned": "Unassigned"}


def _filters() -> InboxFilters:
    """Read the inbox filters from the query string; anything malformed is ignored."""
    args = request.args
    sentiment = args.get("sentiment", "")
    before = parse_int(args.get("before", ""))
    assignee = {"mine": current_agent().id, "unassigned": UNASSIGNED}.get(args.get("assignee", ""))
    return {
        "archived": args.get("status") == "archived",
        "sentiment": sentiment if sentiment in SENTIMENTS else None,
        "tag": args.get("tag", "").strip() or None,
        "query": args.get("q", "").strip(),
        "assignee": assignee,
        "before": before if before is not None and valid_id(before) else None,
    }


def inbox_url(application: ApplicationRow, **filters: object) -> str:
    """The inbox with the given filters; empty ones are left out of the address."""
    given: dict[str, Any] = {key: value for key, value in filters.items() if value}
    return address("views.inbox.list_threads", application_id=application.id, **given)


class InboxLine(NamedTuple):
    """A row of the inbox page: every value its markup is made from (partials/inbox/rows.html),
    computed here, since each call a template makes costs more than the same call from Python.
    It is also the key under which the row's markup is kept (app.views.fragments); what follows
    from these values (the avatar, the times shown, the chips joined) is worked out only when
    the row is drawn."""

    id: int
    href: str
    name: str
    email: str
    created_at: datetime
    age: str
    excerpt: str
    """The start of the message: Jinja's ``truncate`` filter, at 220 characters."""
    sentiment: str
    nps: int | None
    replied: bool
    assignee: str | None
    """The assignee's name; None when nobody is assigned."""
    assignee_left: bool
    chips: tuple[Markup, ...]


def thread_links(application: ApplicationRow, query: dict[str, Any]) -> Callable[[int], str]:
    """The thread page's address for any thread id, with the inbox filters in ``query``."""
    return IdLinks(query, application_id=application.id).by_id("views.threads.show_thread", "feedback_id")


def inbox_rows(
    application: ApplicationRow,
    page: InboxPage[ThreadLine],
    query: dict[str, str],
    agent_ids: set[int],
) -> Markup:
    """The rows of a page as the inbox shows them. An assignee who is no longer among
    ``agent_ids`` (left the organization) is marked.

    Each row is rendered once per worker and kept (app.views.fragments), keyed by its
    :class:`InboxLine`; likewise each tag's chip, by the tag's name and colour."""
    link = thread_links(application, query)
    rows = fragments("inbox rows")
    tag_chips = fragments("tag chips")
    truncate = truncator()
    now = datetime.now(UTC)
    chips: dict[int, Markup] = {}
    drawn = []
    for row in page.rows:
        thread = row.thread
        for tag in row.tags:
            if tag.id not in chips:
                chip_key = (tag.id, tag.name, tag.color)
                chips[tag.id] = tag_chips.get(chip_key) or tag_chips.keep(chip_key, _tag_chip()(tag))
        line = InboxLine(
            thread.id,
            link(thread.id),
            thread.sender_name,
            thread.sender_email,
            thread.created_at,
            time_ago(thread.created_at, now),
            truncate(thread.message, EXCERPT_LENGTH, killwords=True),
            thread.sentiment,
            thread.nps,
            thread.replied,
            thread.assignee_name,
            thread.assignee_id is not None and thread.assignee_id not in agent_ids,
            tuple([chips[tag.id] for tag in row.tags]),
        )
        found = rows.get(line)
        if found is None:
            found = rows.keep(line, _draw_row(line))
        drawn.append(found)
    return Markup("".join(drawn))


def _draw_row(line: InboxLine) -> Markup:
    draw = template_macro("partials/inbox/rows.html", "inbox_row")
    return draw(
        line,
        avatar=avatar_src(line.email, line.name),
        created=line.created_at.isoformat(),
        full_time=full_time(line.created_at),
        # Every chip is markup already: joined as text, not escaped again one by one.
        chips=Markup("".join(line.chips)),
    )


def _tag_chip() -> Callable[..., Markup]:
    return template_macro("partials/threads/tag-chip.html", "tag_chip")


async def _inbox_context(application: ApplicationRow) -> dict[str, object]:
    """Everything the inbox page and its results fragment show."""
    filters = _filters()
    page = await search_threads(application, limit=PAGE_SIZE, excerpt=_excerpt_read(), **filters)
    current = inbox_filters(request.args)
    current.pop("before", None)
    agents = await assignment.agents(application)
    rows = inbox_rows(application, page, inbox_filters(request.args), {agent.id for agent in agents})
    return {
        **HELPERS,
        "application": application,
        "rows": rows,
        "shown": len(page.rows),
        "filters": filters,
        "current": current,
        "sentiments": SENTIMENTS,
        "assignee_choices": ASSIGNEE_CHOICES,
        "older_url": inbox_url(application, **current, before=page.next_before) if page.next_before else None,
        "newest_url": inbox_url(application, **current) if filters["before"] else None,
        "has_filters": bool(
            filters["sentiment"] or filters["tag"] or filters["query"] or current.get("assignee")
        ),
        "inbox_url": lambda **changes: inbox_url(application, **{**current, **changes}),
        "export_url": address("views.inbox.export_threads", application_id=application.id, **current),
        "bulk_url": address(
            "views.inbox.bulk_threads", application_id=application.id, **inbox_filters(request.args)
        ),
        "matching": await _matching(application, filters, page, len(page.rows)),
        "agents": agents,
        "section": "inbox",
        "logo_url": logo_path(application),
        # The first page of a filter is live (an older page is not): where it asks for the
        # threads newer than those it shows, and for the whole results when it shows none.
        "live_url": address("views.live.inbox_events", application_id=application.id),
        "newer_url": None
        if filters["before"]
        else address("views.inbox.newer_threads", application_id=application.id, **current),
        "results_url": inbox_url(application, **current),
    }


async def _matching(
    application: ApplicationRow, filters: InboxFilters, page: InboxPage[ThreadLine], shown: int
) -> Total:
    """How many threads the filters match, for "select all N matching": counted only when there
    is more than this page (from the counters without filters, else a count that stops at
    10,000)."""
    if not page.has_more and not filters["before"]:
        return Total(shown)
    return await count_threads(application, inbox_thread_filters({**filters, "before": None}))


@blueprint.get("/applications/<id:application_id>/feedback")
@reads_on_one_connection
@agent_required
async def list_threads(application_id: int) -> tuple[str, int] | str:
    """The inbox page; an htmx request from the filters gets only the results fragment."""
    application = await get_application(current_agent(), application_id)
    context = await _inbox_context(application)
    if is_htmx() and not request.headers.get("HX-History-Restore-Request"):
        return await render_template("partials/inbox/results.html", **context)
    return await render_template("inbox/list.html", **context)


@blueprint.get("/applications/<id:application_id>/feedback/newer")
@reads_on_one_connection
@agent_required
async def newer_threads(application_id: int) -> ResponseReturnValue:
    """The rows of the threads newer than ``after`` (the newest a live inbox shows) that match
    the inbox's filters, newest first: what the page adds when it hears of new threads
    (app/static/js/live.js). A plain visit goes to the inbox."""
    application = await get_application(current_agent(), application_id)
    if not is_htmx():
        return redirect(inbox_url(application, **inbox_filters(request.args)), 303)
    after = parse_int(request.args.get("after", ""))
    filters = _filters()
    filters["before"] = None
    page = await search_threads(
        application,
        limit=PAGE_SIZE,
        after=after if after is not None and valid_id(after) else 0,
        excerpt=_excerpt_read(),
        **filters,
    )
    current = inbox_filters(request.args)
    current.pop("before", None)
    agent_ids = {agent.id for agent in await assignment.agents(application)}
    return inbox_rows(application, page, current, agent_ids)


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
    filters = inbox_thread_filters({**_filters(), "before": None})
    export_format = export.check_format(request.args.get("format"))
    body = export.export_file(application, filters, export_format, bom=export_format == "csv")
    return export_response(application.id, body, export_format)


# What a bulk action's notice says it did, by action.
DONE = {
    "archive": "archived",
    "unarchive": "moved back to the inbox",
    "tag": "tagged {tag}",
    "untag": "untagged {tag}",
    "assign": "assigned to {assignee}",
    "spam": "marked as spam and deleted (their senders are blocked)",
    "delete": "deleted",
}


@blueprint.post("/applications/<id:application_id>/feedback/bulk")
@agent_required
async def bulk_threads(application_id: int) -> ResponseReturnValue:
    """Apply a bulk action (``action``) to the threads ticked in the inbox (``feedback_ids``),
    or to every thread matching its filters (``scope=matching``; the filters are this address's
    query string), then back to the inbox with a notice.

    Marking as spam and deleting ask first: htmx posts with ``confirmed`` once the browser's
    confirm box said yes; a plain form post gets a confirmation page, whose button posts the
    same fields with ``confirmed``."""
    agent = current_agent()
    application = await get_application(agent, application_id)
    form = await request.form
    query = inbox_filters(request.args)
    back = inbox_url(application, **query)
    try:
        action = bulk.check_action(form.get("action"))
        matching = form.get("scope") == "matching"
        filters = inbox_thread_filters({**_filters(), "before": None})
        selection = (
            bulk.Selection.matching(filters)
            if matching
            else bulk.Selection.of_ids(parse_thread_ids(form.getlist("feedback_ids")))
        )
        assignee_id = assignment.parse_assignee_id(form.get("assignee_id")) if action == "assign" else None
    except DomainError as error:
        return await _refused(application, back, str(error), error.status)
    if action in bulk.DESTRUCTIVE and form.get("confirmed") != "1":
        count = await count_threads(application, filters) if matching else Total(len(selection.ids))
        return await render_template(
            "inbox/bulk-confirm.html",
            **_confirm_context(application, back),
            action=action,
            matching=matching,
            count=count,
            ids=selection.ids,
            error=None,
        )
    try:
        done = await bulk.run(
            agent,
            application,
            action,
            selection,
            storage_for(current_app.config["EARFUL"]),
            tag=form.get("tag"),
            assignee_id=assignee_id,
            most_tags=current_app.config["EARFUL"].quotas.tags_per_application,
        )
    except DomainError as error:
        return await _refused(application, back, str(error), error.status)
    await flash(
        _notice(
            done, form.get("tag", ""), _name_of(assignee_id, agent, await assignment.agents(application))
        ),
        "success",
    )
    if matching:  # the selection was the filter, not this page: back to its newest threads
        back = inbox_url(application, **{key: value for key, value in query.items() if key != "before"})
    if is_htmx():
        return Response("", 200, headers={"HX-Redirect": back})
    return redirect(back, 303)


def _confirm_context(application: ApplicationRow, back: str) -> dict[str, object]:
    return {
        "application": application,
        "logo_url": logo_path(application),
        "section": "inbox",
        "back_url": back,
        "action_url": url_for(
            "views.inbox.bulk_threads", application_id=application.id, **inbox_filters(request.args)
        ),
    }


async def _refused(application: ApplicationRow, back: str, error: str, status: int) -> ResponseReturnValue:
    """A bulk action refused: htmx goes back to the inbox, which shows why; a plain form post
    gets a page that says it."""
    if is_htmx():
        await flash(error, "error")
        return Response("", status, headers={"HX-Redirect": back})
    page = await render_template(
        "inbox/bulk-confirm.html", **_confirm_context(application, back), action=None, error=error
    )
    return page, status


def _name_of(assignee_id: int | None, agent: UserRow, agents: list[AgentRow]) -> str:
    if assignee_id is None:
        return "nobody"
    if assignee_id == agent.id:
        return "you"
    return next((person.name for person in agents if person.id == assignee_id), "them")


def _notice(done: bulk.Outcome, tag: str, assignee: str) -> str:
    """What a bulk action did, in a sentence: how many threads it changed, how many it left as
    they were, and whether more matched than one request takes."""
    verb = DONE[done.action].format(tag=" ".join(tag.split()).lower(), assignee=assignee)
    notice = f"{done.changed} thread{'' if done.changed == 1 else 's'} {verb}."
    if done.selected > done.changed:
        notice += f" {done.selected - done.changed} left as they were."
    if done.next_before is not None:
        notice += f" More than {bulk.MAX_BY_FILTER} matched: select them again to go on."
    return notice
