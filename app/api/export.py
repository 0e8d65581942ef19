"""The management API's export of an application's threads, as CSV or JSON Lines."""

from __future__ import annotations

from quart import Blueprint, Response, request

from app.api.auth import current_user, require_scope
from app.api.common import parse_id
from app.downloads import export_response
from app.errors import ValidationError
from app.services import export
from app.services.applications import get_application
from app.services.thread_filters import parse_filters
from app.services.validation import parse_bool

blueprint = Blueprint("export", __name__)


def parse_bom(raw: str | None) -> bool:
    """``bom``: whether a CSV starts with a byte order mark (for older Excel)."""
    if raw is None or raw == "":
        return False
    value = parse_bool(raw)
    if value is None:
        raise ValidationError("The bom field must be true or false.")
    return value


@blueprint.get("/applications/<application_id>/feedback/export")
@require_scope("read")
async def export_feedback(application_id: str) -> Response:
    """Every thread matching the feedback list's filters, streamed as CSV or JSON Lines.

    Everything the body needs is read from the request here, before the stream starts: the
    body is produced after this handler has returned.
    """
    application = await get_application(current_user(), parse_id(application_id, "Invalid application"))
    filters = parse_filters(request.args, current_user().id)
    export_format = export.check_format(request.args.get("format"))
    bom = parse_bom(request.args.get("bom"))
    return export_response(
        application.id, export.export_file(application, filters, export_format, bom), export_format
    )
