"""Turning e-mail notifications off from the link in one of them, without signing in.

The link carries a signature of the agent and the application (app.services.notifications), so
it is its own permission: opening it shows a button, and a POST to it (the button, or a mail
client's one-click unsubscribe of RFC 8058, which sends no CSRF token) sets the agent's mode for
that application to ``none``. Settings change back on the application's settings page.
"""

from __future__ import annotations

from quart import Blueprint, current_app
from quart.typing import ResponseReturnValue

from app.config import Settings
from app.services import notifications
from app.views.rendering import render_template

blueprint = Blueprint("notifications", __name__)

UNSUBSCRIBE = "/notifications/unsubscribe/<id:user_id>/<id:application_id>/<signature>"


def _settings() -> Settings:
    config: Settings = current_app.config["EARFUL"]
    return config


@blueprint.get(UNSUBSCRIBE)
async def unsubscribe_page(user_id: int, application_id: int, signature: str) -> ResponseReturnValue:
    """Ask before turning the e-mails off (a link opened by a mail scanner changes nothing)."""
    application = await notifications.unsubscribe_target(user_id, application_id, signature, _settings())
    return await render_template("notifications/unsubscribe.html", application=application, done=False)


@blueprint.post(UNSUBSCRIBE)
async def unsubscribe(user_id: int, application_id: int, signature: str) -> ResponseReturnValue:
    """Turn the agent's e-mails about the application off."""
    application = await notifications.unsubscribe(user_id, application_id, signature, _settings())
    return await render_template("notifications/unsubscribe.html", application=application, done=True)
