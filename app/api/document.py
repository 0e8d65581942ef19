"""``GET /openapi.json``: the description of both APIs (see :mod:`app.openapi`), without auth."""

from __future__ import annotations

from quart import Blueprint, Response

from app.api.common import settings
from app.openapi import document_json

blueprint = Blueprint("document", __name__)


@blueprint.get("/openapi.json")
async def openapi_document() -> Response:
    response = Response(document_json(settings().base_url), mimetype="application/json")
    # Generators and the docs page of any origin may read it; it holds nothing of a tenant.
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Cache-Control"] = "public, max-age=300"
    return response
