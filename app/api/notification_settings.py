"""The management API's notification settings: which e-mails the calling agent gets about an
application (``instant``, ``digest`` or ``none``)."""

from __future__ import annotations

from quart import Blueprint, Response

from app.api.auth import current_user, require_scope
from app.api.common import NOT_A_JSON_OBJECT, json_response, parse_id, read_body
from app.repositories.applications import ApplicationRow
from app.services import notifications
from app.services.applications import get_application

blueprint = Blueprint("notification_settings", __name__)


async def _application(application_id: str) -> ApplicationRow:
    return await get_application(current_user(), parse_id(application_id, "Invalid application"))


@blueprint.get("/applications/<application_id>/notifications")
@require_scope("read")
async def show_notification_settings(application_id: str) -> Response:
    """The agent's mode for the application: their choice, else their role's default."""
    application = await _application(application_id)
    mode = await notifications.mode_of(current_user(), application)
    return json_response({"data": {"mode": mode}})


@blueprint.put("/applications/<application_id>/notifications")
@require_scope("write")
async def update_notification_settings(application_id: str) -> Response:
    """Record the agent's mode for the application (JSON or a form with ``mode``)."""
    application = await _application(application_id)
    body = await read_body(NOT_A_JSON_OBJECT)
    mode = await notifications.set_mode(current_user(), application, body.get("mode"))
    return json_response({"data": {"mode": mode}})
