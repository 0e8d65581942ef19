"""``/docs``: the API reference, Swagger UI rendering ``/openapi.json``.

It lives at the root, not under the web app's ``/app`` prefix, because integrators look for it
there and it needs no account; it gets the web app's headers (strict content policy included:
Swagger UI is served from our static files and started by a script file, never inline).
"""

from __future__ import annotations

from quart import Blueprint, Response
from quart.typing import ResponseReturnValue

from app.config import Settings
from app.views.rendering import render_template
from app.views.security import harden


def build_blueprint(settings: Settings) -> Blueprint:
    blueprint = Blueprint("docs", __name__)

    @blueprint.get("/docs")
    async def api_reference() -> ResponseReturnValue:
        return await render_template("docs/reference.html")

    @blueprint.after_request
    async def harden_page(response: Response) -> Response:
        return harden(response, settings.is_secure)

    return blueprint
