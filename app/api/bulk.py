"""The management API's bulk actions on an application's threads (:mod:`app.services.bulk`)."""

from __future__ import annotations

from quart import Blueprint, Response

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, json_response, parse_id, read_body, settings
from app.services import bulk
from app.services.applications import get_application
from app.services.storage import storage_for

blueprint = Blueprint("bulk", __name__)


@blueprint.post("/applications/<application_id>/feedback/bulk")
@require_scope("write")
async def bulk_feedback(application_id: str) -> Response:
    """Archive, unarchive, tag, untag, assign, mark as spam or delete threads, chosen by id or by
    the feedback list's filters, in batches; answers what was done."""
    user = current_user()
    application = await get_application(user, parse_id(application_id, "Invalid application"))
    asked = bulk.read_request(await read_body(NOT_A_JSON_OBJECT), user.id)
    done = await bulk.run(
        user,
        application,
        asked.action,
        asked.selection,
        storage_for(settings()),
        tag=asked.tag,
        assignee_id=asked.assignee_id,
        most_tags=settings().quotas.tags_per_application,
    )
    return json_response(
        {
            "data": {
                "action": done.action,
                "selected": done.selected,
                "changed": done.changed,
                "next_before": done.next_before,
            }
        }
    )
