"""The HTTP answer of a file made on the fly (an export), shared by the API and the web app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

from quart import Response

from app.services import export


def export_response(application_id: int, body: AsyncIterator[bytes], export_format: str) -> Response:
    """A streamed attachment; its name holds the application's id and the date, nothing a user wrote."""
    name = export.file_name(application_id, export_format, datetime.now(UTC).date())
    disposition = f'attachment; filename="{name}"'
    # text/csv gets "; charset=utf-8" from werkzeug; JSON Lines is UTF-8 by definition.
    response = Response(
        body, mimetype=export.FORMATS[export_format], headers={"Content-Disposition": disposition}
    )
    # Quart ends every answer that takes longer than RESPONSE_TIMEOUT (60 s) to send, silently:
    # an export of ten million threads takes minutes, and was cut after a minute. The body is
    # read in keyset batches, a statement each, and sent as the client reads it: a slow client
    # slows its export, and one that stops reading holds its socket and one batch, no database
    # connection (app.services.export.export_rows).
    response.timeout = None
    return response
