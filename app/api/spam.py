"""The management API's spam controls: an application's blocklist, and marking a thread as spam."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, json_response, parse_id, read_body, settings
from app.repositories.applications import ApplicationRow
from app.repositories.blocklist import BlockedRow
from app.representations import timestamp
from app.services import blocklist
from app.services.applications import get_application
from app.services.storage import storage_for

blueprint = Blueprint("spam", __name__)


def entry_json(entry: BlockedRow) -> dict[str, Any]:
    return {
        "id": entry.id,
        "kind": entry.kind,
        "value": entry.value,
        "created_at": timestamp(entry.created_at),
    }


async def _application(application_id: str) -> ApplicationRow:
    return await get_application(current_user(), parse_id(application_id, "Invalid application"))


@blueprint.get("/applications/<application_id>/blocklist")
@require_scope("read")
async def list_blocklist(application_id: str) -> Response:
    application = await _application(application_id)
    return json_response({"data": [entry_json(e) for e in await blocklist.list_entries(application)]})


@blueprint.post("/applications/<application_id>/blocklist")
@require_scope("write")
async def add_to_blocklist(application_id: str) -> Response:
    """Block an address, a domain or a network: 201 with the new entry, 200 with the entry the
    list already had."""
    application = await _application(application_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    entry, created = await blocklist.add_entry(application, body.get("value"))
    return json_response({"data": entry_json(entry)}, 201 if created else 200)


@blueprint.delete("/applications/<application_id>/blocklist/<entry_id>")
@require_scope("write")
async def remove_from_blocklist(application_id: str, entry_id: str) -> Response:
    application = await _application(application_id)
    await blocklist.remove_entry(application, parse_id(entry_id, blocklist.INVALID_ENTRY))
    return Response(status=204)


@blueprint.post("/applications/<application_id>/feedback/<feedback_id>/spam")
@require_scope("write")
async def mark_spam(application_id: str, feedback_id: str) -> Response:
    """Block the thread's sender address and delete the thread, in one transaction."""
    application = await _application(application_id)
    spam = await blocklist.mark_spam(
        application, parse_id(feedback_id, "Invalid feedback"), storage_for(settings())
    )
    return json_response({"data": {"deleted": spam.deleted, "blocked": entry_json(spam.blocked)}})
