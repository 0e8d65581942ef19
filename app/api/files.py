"""Files served by Earful: avatars, attachments (capability URLs) and application logos.

Attachments and logos are sent by Earful whatever keeps them: from the data dir as files, from a
bucket streamed (app/services/storage.py says why not through pre-signed URLs), with the same
capability check, content type, nosniff and sandbox rules."""

from __future__ import annotations

import mimetypes
import re

from quart import Blueprint, Response, request, send_file

from app.api.common import parse_id, settings, text_response
from app.errors import NotFound
from app.services.applications import open_logo
from app.services.attachments import MAX_ATTACHMENT_ID, find_attachment, open_attachment
from app.services.avatars import render_avatar
from app.services.files import IMAGE_TYPES
from app.services.storage import StoredFile, storage_for

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


async def _send(stored: StoredFile, mimetype: str, download_name: str | None = None) -> Response:
    """A stored file's answer: from disk as Quart sends a file; from a bucket streamed in chunks,
    with the same headers (type, length, disposition, last modification, ETag)."""
    if stored.path is not None:
        return await send_file(
            stored.path,
            mimetype=mimetype,
            as_attachment=download_name is not None,
            attachment_filename=download_name,
        )
    assert stored.chunks is not None
    response = Response(stored.chunks, mimetype=mimetype)
    response.content_length = stored.size
    if download_name is not None:
        response.headers.add("Content-Disposition", "attachment", filename=download_name)
    if stored.last_modified is not None:
        response.last_modified = stored.last_modified
    if stored.etag is not None:
        response.set_etag(stored.etag)
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
    stored = await open_attachment(storage_for(settings()), found)
    response = await _send(stored, found.mime_type, found.name)
    if found.mime_type in IMAGE_TYPES:
        disposition = response.headers["Content-Disposition"]
        response.headers["Content-Disposition"] = "inline" + disposition.removeprefix("attachment")
    response.headers["Cache-Control"] = "private, max-age=31536000, immutable"
    return _harden(response)


@blueprint.get("/files/logos/<application_id>/<name>")
async def logo(application_id: str, name: str) -> Response:
    number = parse_id(application_id, "Not found")
    if not _LOGO_NAME.match(name):
        raise NotFound("Not found")
    stored = await open_logo(number, name, storage_for(settings()))
    # The name's extension is the type sniffed from the logo's bytes when it was stored.
    response = await _send(stored, mimetypes.guess_type(name)[0] or "application/octet-stream")
    response.headers["Cache-Control"] = IMMUTABLE
    return _harden(response)
