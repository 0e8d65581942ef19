"""Privacy requests in the management API: erase or export a person's data, and the audit trail."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, request

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, json_response, read_body, settings
from app.links import attachment_path
from app.repositories.attachments import AttachmentRow
from app.repositories.audit import AuditRow
from app.representations import timestamp
from app.services import erasure
from app.services.storage import storage_for

blueprint = Blueprint("privacy", __name__)


def audit_entry_json(entry: AuditRow) -> dict[str, Any]:
    return {
        "id": entry.id,
        "action": entry.action,
        "application_id": entry.application_id,
        "actor_id": entry.actor_id,
        "counts": entry.counts,
        "created_at": timestamp(entry.created_at),
    }


def _attachment_url(attachment: AttachmentRow) -> str:
    return settings().base_url + attachment_path(attachment)


@blueprint.post("/people/erase")
@require_scope("write")
async def erase_person() -> Response:
    body = await read_body(NOT_A_JSON_OBJECT)
    counts = await erasure.erase_person(
        current_user(), body.get("email"), body.get("application_id"), storage=storage_for(settings())
    )
    return json_response({"data": counts})


@blueprint.get("/people/export")
@require_scope("read")
async def export_person() -> Response:
    document = await erasure.export_person(
        current_user(),
        request.args.get("email"),
        request.args.get("application_id"),
        attachment_url=_attachment_url,
    )
    return json_response({"data": document})


@blueprint.get("/audit")
@require_scope("read")
async def list_audit_entries() -> Response:
    entries = await erasure.recent_audit_entries(current_user())
    return json_response({"data": [audit_entry_json(entry) for entry in entries]})
