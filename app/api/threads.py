"""The management API's feedback threads and replies."""

from __future__ import annotations

from datetime import date, datetime

from quart import Blueprint, Response, request

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, parse_id, query_int, read_body, settings
from app.api.management import data
from app.errors import ValidationError
from app.repositories.applications import ApplicationRow
from app.repositories.threads import ThreadRow
from app.representations import listed_reply_json, thread_json
from app.services import deletion
from app.services import feedback as feedback_service
from app.services import replies as replies_service
from app.services.applications import get_application
from app.services.assignment import parse_assignee_id
from app.services.storage import storage_for
from app.services.thread_details import load_details
from app.services.thread_filters import parse_filters
from app.services.validation import parse_bool
from app.shared_reads import reads_on_one_connection

blueprint = Blueprint("threads", __name__)


async def _application(application_id: str) -> ApplicationRow:
    return await get_application(current_user(), parse_id(application_id, "Invalid application"))


async def _thread(application_id: str, feedback_id: str) -> tuple[ApplicationRow, ThreadRow]:
    """The user's application and one of its threads, from the path."""
    application = await _application(application_id)
    return application, await feedback_service.get_thread(
        application, parse_id(feedback_id, "Invalid feedback")
    )


def _date_filter() -> date | None:
    raw = request.args.get("date")
    if raw is None or raw == "":
        return None
    try:
        return datetime.strptime(raw, "%Y-%m-%d").date()
    except ValueError:
        raise ValidationError("The date field must match the format Y-m-d.") from None


def _page(threads_or_replies_total: int, limit: int, offset: int) -> dict[str, object]:
    return {"total": threads_or_replies_total, "limit": limit, "offset": offset}


@blueprint.get("/applications/<application_id>/feedback")
@reads_on_one_connection
@require_scope("read")
async def list_feedback(application_id: str) -> Response:
    """The feedback list; with the inbox's filters or a ``before`` cursor, its pagination also
    says whether the total is exact and where the next page starts (see
    :func:`app.services.inbox.count_threads`)."""
    application = await _application(application_id)
    filters = parse_filters(request.args, current_user().id)
    limit, offset = query_int("limit", 50), query_int("offset", 0)
    found = await feedback_service.filter_threads(application, filters, limit, offset)
    pagination = _page(found.total.count, limit, offset)
    if not filters.plain():
        pagination.update(total_exact=found.total.exact, next_before=found.next_before)
    config = settings()  # once, not through the app proxy per thread
    return data([thread_json(t, config) for t in found.threads], pagination=pagination)


@blueprint.get("/applications/<application_id>/feedback/<feedback_id>")
@reads_on_one_connection
@require_scope("read")
async def show_feedback(application_id: str, feedback_id: str) -> Response:
    application = await _application(application_id)
    details = await feedback_service.get_thread_details(
        application, parse_id(feedback_id, "Invalid feedback")
    )
    return data(thread_json(details, settings()))


@blueprint.patch("/applications/<application_id>/feedback/<feedback_id>")
@require_scope("write")
async def update_feedback(application_id: str, feedback_id: str) -> Response:
    application, thread = await _thread(application_id, feedback_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    if not {"archived", "sentiment", "assignee_id"} & set(body):
        raise ValidationError("Nothing sent to update")
    archived = None
    if "archived" in body:
        archived = parse_bool(body["archived"])
        if archived is None:
            raise ValidationError("The archived field must be true or false.")
    sentiment = None
    if "sentiment" in body:
        sentiment = feedback_service.check_sentiment(body["sentiment"])
    assignee: int | feedback_service.Keep | None = feedback_service.KEEP
    if "assignee_id" in body:
        assignee = parse_assignee_id(body["assignee_id"])
    thread = await feedback_service.update_thread(
        application, thread, archived, sentiment, assignee, actor=current_user()
    )
    details = (await load_details([thread]))[0]
    return data(thread_json(details, settings()))


@blueprint.delete("/applications/<application_id>/feedback/<feedback_id>")
@require_scope("write")
async def delete_feedback(application_id: str, feedback_id: str) -> Response:
    """Delete a thread with its replies, notes, tag links and files; 204, no body."""
    application = await _application(application_id)
    await deletion.delete_thread(
        application, parse_id(feedback_id, "Invalid feedback"), storage_for(settings())
    )
    return Response(status=204)


@blueprint.post("/applications/<application_id>/feedback/delete")
@require_scope("write")
async def delete_feedback_selection(application_id: str) -> Response:
    """Delete several threads in one transaction (``{"feedback_ids": [...]}``); ids that are not
    the application's threads are ignored, so the answer says how many went."""
    application = await _application(application_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    if "feedback_ids" not in body:
        raise ValidationError("The feedback ids field is required.")
    values = body["feedback_ids"]
    if not isinstance(values, list):
        raise ValidationError("The feedback ids field must hold thread ids.")
    ids = deletion.parse_thread_ids(values)
    return data({"deleted": await deletion.delete_threads(application, ids, storage_for(settings()))})


@blueprint.post("/applications/<application_id>/feedback/<feedback_id>/replies")
@require_scope("write")
async def create_reply(application_id: str, feedback_id: str) -> Response:
    application, thread = await _thread(application_id, feedback_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    await replies_service.create_agent_reply(
        current_user(), application, thread, body.get("message"), body.get("type")
    )
    details = await feedback_service.get_thread_details(application, thread.id)
    return data(thread_json(details, settings()))


@blueprint.get("/applications/<application_id>/replies")
@reads_on_one_connection
@require_scope("read")
async def list_replies(application_id: str) -> Response:
    application = await _application(application_id)
    on_date = _date_filter()
    limit, offset = query_int("limit", 50), query_int("offset", 0)
    kind = request.args.get("type") or None
    thread = None
    if request.args.get("feedback_id"):
        feedback_id = str(query_int("feedback_id", 0))
        thread = await feedback_service.get_thread(application, parse_id(feedback_id, "Invalid feedback"))
    listed = await replies_service.list_replies(application, on_date, limit, offset, kind, thread)
    config = settings()
    return data(
        [listed_reply_json(r, listed.attachments.get(r.id, []), config) for r in listed.replies],
        pagination=_page(listed.total, limit, offset),
    )
