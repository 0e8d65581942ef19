"""E-mail notifications in the web app: the settings page's Notifications card, where each agent
chooses what they are e-mailed about an application, and turning the e-mails off from the link
in one of them, without signing in.

The unsubscribe link carries a signature of the agent and the application
(app.services.notifications), so it is its own permission: opening it shows a button, and a POST
to it (the button, or a mail client's one-click unsubscribe of RFC 8058, which sends no CSRF
token) sets the agent's mode for that application to ``none``. Settings change back on the
application's settings page.
"""

from __future__ import annotations

from quart import Blueprint, current_app, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import RadioField, SelectChoice  # type: ignore[attr-defined]  # SelectChoice: WTForms 3.3's

from app.config import Settings
from app.errors import ValidationError
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.services import applications, notifications
from app.views import applications as applications_views
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent

blueprint = Blueprint("notifications", __name__)

UNSUBSCRIBE = "/notifications/unsubscribe/<id:user_id>/<id:application_id>/<signature>"
MODE_LABELS = {"instant": "every new thread", "digest": "a daily digest", "none": "nothing"}


class NotificationForm(CSRFForm):
    """The card's one field, under the service's name."""

    mode = RadioField(
        "E-mail me",
        id="notification-mode",
        choices=[SelectChoice(value, label) for value, label in MODE_LABELS.items()],
        validate_choice=False,  # the service says which values exist, with its own message
    )


def _settings() -> Settings:
    config: Settings = current_app.config["EARFUL"]
    return config


async def notifications_card(
    agent: UserRow,
    application: ApplicationRow,
    form: NotificationForm | None = None,
    error: str | None = None,
    saved: bool = False,
) -> dict[str, object]:
    """What the card shows: the agent's own choice for the application (or its default)."""
    if form is None:
        form = NotificationForm(data={"mode": await notifications.mode_of(agent, application)})
    return {"form": form, "error": error, "saved": saved, "sends_mail": bool(_settings().smtp_url)}


@blueprint.post("/applications/<id:application_id>/notifications")
@agent_required
async def update_notifications(application_id: int) -> ResponseReturnValue:
    """Save the agent's choice (any agent who works the application); htmx gets the card back,
    a plain post is redirected to it; a refused value shows it again with 422."""
    agent = current_agent()
    application = await applications.get_application(agent, application_id)
    form = NotificationForm(await request.form)
    error = None
    if form.validate():
        try:
            await notifications.set_mode(agent, application, form.mode.data)
        except ValidationError as failure:
            error = str(failure)
        else:
            if is_htmx():
                card = await notifications_card(agent, application, saved=True)
                return await render_template(
                    "partials/applications/notifications.html", application=application, notifications=card
                )
            await flash("Notifications saved.", "success")
            return redirect(
                url_for("views.applications.show_application", application_id=application.id)
                + "#notifications",
                303,
            )
    card = await notifications_card(agent, application, form=form, error=error or "Choose one.")
    if is_htmx():
        page = await render_template(
            "partials/applications/notifications.html", application=application, notifications=card
        )
        return page, 422
    context = await applications_views._settings_context(agent, application, notifications=card)
    return await render_template("applications/show.html", **context), 422


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
