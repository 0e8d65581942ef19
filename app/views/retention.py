"""The settings page's Retention card: after how many days threads are deleted, and how many the
next run deletes. Administrators change it with the card's own form; agents see it read-only."""

from __future__ import annotations

from datetime import UTC, datetime

from quart import Blueprint, current_app, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import BooleanField, IntegerField
from wtforms.validators import NumberRange, Optional

from app.errors import DomainError
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.services import applications, deletion, retention
from app.services.storage import storage_for
from app.views import applications as applications_views
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent

blueprint = Blueprint("retention", __name__)


class RetentionForm(CSRFForm):
    """The card's fields, under the service's names."""

    retention_days = IntegerField(
        "Delete threads older than (days)",
        validators=[
            Optional(),
            NumberRange(
                min=1, max=retention.MAX_DAYS, message=f"Enter a number from 1 to {retention.MAX_DAYS}."
            ),
        ],
    )
    retention_archived_only = BooleanField("Only archived threads")

    def service_fields(self) -> dict[str, object]:
        days = self.retention_days.data
        return {
            "retention_days": "" if days is None else days,
            "retention_archived_only": "true" if self.retention_archived_only.data else "false",
        }


async def retention_card(
    agent: UserRow,
    application: ApplicationRow,
    form: RetentionForm | None = None,
    error: str | None = None,
    saved: bool = False,
) -> dict[str, object]:
    """What the card shows: the settings (a form for administrators) and the next run's count."""
    if form is None:
        form = RetentionForm(
            data={
                "retention_days": application.retention_days,
                "retention_archived_only": application.retention_archived_only,
            }
        )
    return {
        "form": form,
        "may_change": await deletion.is_administrator(agent, application),
        "days": application.retention_days,
        "archived_only": application.retention_archived_only,
        "due": await retention.due_count(application, datetime.now(UTC)),
        "error": error,
        "saved": saved,
    }


def _card_url(application_id: int) -> str:
    return url_for("views.applications.show_application", application_id=application_id) + "#retention"


@blueprint.post("/applications/<id:application_id>/retention")
@agent_required
async def update_retention(application_id: int) -> ResponseReturnValue:
    """Save the card (administrators only: 403 for an agent); htmx gets the card back, a plain
    post is redirected to it; a refused value shows it again with 422, nothing saved."""
    agent = current_agent()
    application = await applications.get_application(agent, application_id)
    await deletion.check_administrator(agent, application)
    form = RetentionForm(await request.form)
    error = None
    if form.validate():
        try:
            application = await applications.update_application(
                agent, application, form.service_fields(), None, storage_for(current_app.config["EARFUL"])
            )
        except DomainError as failure:
            error = str(failure)
        else:
            if is_htmx():
                card = await retention_card(agent, application, saved=True)
                return await render_template(
                    "partials/applications/retention.html", application=application, retention=card
                )
            await flash("Retention saved.", "success")
            return redirect(_card_url(application.id), 303)
    else:
        error = "Check the highlighted fields."
    card = await retention_card(agent, application, form=form, error=error)
    if is_htmx():
        page = await render_template(
            "partials/applications/retention.html", application=application, retention=card
        )
        return page, 422
    context = await applications_views._settings_context(agent, application, retention=card)
    return await render_template("applications/show.html", **context), 422
