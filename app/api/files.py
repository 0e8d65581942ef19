"""Files served by Earful: avatars, attachments (capability URLs) and application logos."""

from __future__ import annotations

import re

from quart import Blueprint, Response, request, send_file

from app.api.common import parse_id, settings, text_response
from app.errors import NotFound
from app.services.applications import has_logo, logos_dir
from app.services.attachments import MAX_ATTACHMENT_ID, attachment_path, find_attachment
from app.services.avatars import render_avatar
from app.services.files import IMAGE_TYPES

blueprint = Blueprint("files", __name__)

_HEX = re.compile(r"^[0-9a-f]{1,64}$")
_LOGO_NAME = re.compile(r"^[0-9a-f]{32}\.(png|jpg|gif|webp)$")
IMMUTABLE = "public, max-age=31536000, immutable"


def _harden(response: Response) -> Response:
    """Files from users are never run as documents of our origin."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"
    )
    return response


@blueprint.get("/avatars/<digest>.svg")
async def avatar(digest: str) -> Response:
    if not _HEX.match(digest):
        return text_response("Not found", 404)
    response = Response(render_avatar(digest, request.args.get("i", "")), mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "public, max-age=86400"
    return _harden(response)


@blueprint.get("/files/attachments/<attachment_id>/<token>/<path:name>")
async def attachment(attachment_id: str, token: str, name: str) -> Response:
    found = await find_attachment(parse_id(attachment_id, "Not found", MAX_ATTACHMENT_ID), token)
    path = attachment_path(settings().data_dir, found)
    if not path.is_file():
        raise NotFound("Not found")
    response = await send_file(
        path, mimetype=found.mime_type, as_attachment=True, attachment_filename=found.name
    )
    if found.mime_type in IMAGE_TYPES:
        disposition = response.headers["Content-Disposition"]
        response.headers["Content-Disposition"] = "inline" + disposition.removeprefix("attachment")
    response.headers["Cache-Control"] = "private, max-age=31536000, immutable"
    return _harden(response)


@blueprint.get("/files/logos/<application_id>/<name>")
async def logo(application_id: str, name: str) -> Response:
    number = parse_id(application_id, "Not found")
    if not _LOGO_NAME.match(name) or not await has_logo(number, name):
        raise NotFound("Not found")
    path = logos_dir(settings().data_dir, number) / name
    if not path.is_file():
        raise NotFound("Not found")
    response = await send_file(path)
    response.headers["Cache-Control"] = IMMUTABLE
    return _harden(response)
