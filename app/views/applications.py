"""Applications admin: the list, creating and editing, keys, rotation and the widget snippet."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue
from werkzeug.datastructures import MultiDict
from wtforms import (  # type: ignore[attr-defined]  # SelectChoice: WTForms 3.3's, not in types-WTForms yet
    BooleanField,
    FileField,
    IntegerField,
    SelectChoice,
    SelectField,
    StringField,
    TextAreaField,
    URLField,
)
from wtforms.validators import InputRequired, Length, NumberRange, Optional

from app.config import Settings
from app.errors import DomainError
from app.links import logo_path
from app.models import OWNER, PLATFORMS
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.services import applications as service
from app.services import blocklist, deletion
from app.services.capture_settings import LIMIT_FIELDS, MAX_PER_MINUTE
from app.services.files import IncomingFile
from app.services.organizations import list_memberships
from app.services.storage import storage_for
from app.views import notifications as notifications_views
from app.views import retention as retention_views
from app.views import webhooks as webhooks_views
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent
from app.views.thread_display import duration

blueprint = Blueprint("applications", __name__)

PLATFORM_LABELS = {"javascript": "JavaScript", "ios": "iOS", "android": "Android", "api": "API"}
TARGET_UNITS = {"hours": 3600, "minutes": 60}
MAX_TARGET_HOURS = service.MAX_TARGET_SECONDS // 3600


_RATE = [NumberRange(min=1, max=MAX_PER_MINUTE, message=f"Enter a number from 1 to {MAX_PER_MINUTE}.")]


class ApplicationForm(CSRFForm):
    """The fields of an application, for both creating and editing it."""

    name = StringField("Name", validators=[InputRequired(message="Enter a name."), Length(max=200)])
    url = URLField("Website", validators=[Optional(), Length(max=2048)])
    logo = FileField("Logo")
    organization = SelectField("Organization", choices=[SelectChoice("", "None (only you)")])
    uploads_enabled = BooleanField("Let people attach files to their feedback", default=True)
    receipts_enabled = BooleanField("Send the customer a receipt for each new thread")
    target_value = IntegerField(
        "Target first-reply time",
        default=24,
        validators=[
            InputRequired(message="Enter a number."),
            NumberRange(min=0, max=service.MAX_TARGET_SECONDS // 60, message="Enter a smaller number."),
        ],
    )
    target_unit = SelectField(
        "Unit", choices=[SelectChoice("hours"), SelectChoice("minutes")], default="hours"
    )
    capture_enabled = BooleanField("Accept feedback through the capture API and the widget", default=True)
    submits_per_minute = IntegerField("Submits per minute from one address", validators=[Optional(), *_RATE])
    opens_per_minute = IntegerField("Form opens per minute from one address", validators=[Optional(), *_RATE])
    uploads_per_minute = IntegerField("Uploads per minute from one address", validators=[Optional(), *_RATE])
    submits_per_minute_total = IntegerField(
        "Submits per minute from all addresses together", validators=[Optional(), *_RATE]
    )
    allowed_origins = TextAreaField("Allowed origins", validators=[Length(max=20_000)])
    # True when the agent may not move the application out of its organization (see _form).
    organization_locked = False

    def target_seconds(self) -> int:
        return int(self.target_value.data or 0) * TARGET_UNITS[self.target_unit.data or "hours"]

    def service_fields(self) -> dict[str, object]:
        """The form's values under the names of the application service."""
        return {
            "name": self.name.data or "",
            "url": (self.url.data or "").strip(),
            "organization_id": self.organization.data or None,
            "uploads_enabled": "true" if self.uploads_enabled.data else "false",
            "receipts_enabled": "true" if self.receipts_enabled.data else "false",
            "target_average_first_reply_time": self.target_seconds(),
            "capture_enabled": "true" if self.capture_enabled.data else "false",
            **{
                name: "" if getattr(self, name).data is None else getattr(self, name).data
                for name in LIMIT_FIELDS
            },
            "allowed_origins": self.allowed_origins.data or "",
        }


def _settings() -> Settings:
    config: Settings = current_app.config["EARFUL"]
    return config


async def _form(
    agent: UserRow, formdata: Any = None, data: dict[str, object] | None = None, current: int | None = None
) -> ApplicationForm:
    """The application form with the organizations the agent may put the application into.

    Only owners decide which applications belong to an organization, so the choices are the
    organizations the agent owns. ``current`` is the application's organization: when the agent
    does not own it (an agent there, or no longer a member), the application cannot be moved by
    them and the field shows that organization alone, locked; the service refuses a move anyway.
    """
    form = ApplicationForm(formdata, data=data)
    memberships = await list_memberships(agent)
    owned = [m.organization for m in memberships if m.role == OWNER]
    if current and current not in {organization.id for organization in owned}:
        name = next(
            (m.organization.name for m in memberships if m.organization_id == current),
            "Current organization",
        )
        form.organization.choices = [SelectChoice(str(current), name)]
        form.organization_locked = True
        if not form.organization.raw_data:  # a disabled select is not posted
            form.organization.data = str(current)
        return form
    choices = [SelectChoice("", "None (only you)")]
    choices += [SelectChoice(str(organization.id), organization.name) for organization in owned]
    form.organization.choices = choices
    return form


def _form_data_of(application: ApplicationRow) -> dict[str, object]:
    """Pre-fill values of the form for an existing application."""
    target = application.target_average_first_reply_time
    hours = not target % 3600
    return {
        "name": application.name,
        "url": application.url or "",
        "organization": str(application.organization_id or ""),
        "uploads_enabled": application.uploads_enabled,
        "receipts_enabled": application.receipts_enabled,
        "target_value": target // 3600 if hours else round(target / 60),
        "target_unit": "hours" if hours else "minutes",
        "capture_enabled": application.capture_enabled,
        **{name: getattr(application, name) for name in LIMIT_FIELDS},
        "allowed_origins": "\n".join(application.allowed_origins),
    }


async def _posted() -> tuple[MultiDict[str, Any], IncomingFile | None]:
    """The posted form fields, and the uploaded logo if one was chosen."""
    form, files = await request.form, await request.files
    logo = None
    upload = files.get("logo")
    if upload is not None:
        try:
            content = upload.read()
        finally:
            upload.close()
        if content:
            logo = IncomingFile(upload.filename or "logo", content)
    return form, logo


def widget_snippet(application: ApplicationRow) -> str:
    """The HTML that embeds the feedback widget on the application's website."""
    uploads = ' data-uploads="true"' if application.uploads_enabled else ""
    return (
        f'<script src="{_settings().base_url}/widget.js" data-app="{application.id}" '
        f'data-key="{application.key_javascript}"{uploads} async></script>'
    )


def _keys(application: ApplicationRow) -> list[dict[str, str]]:
    return [
        {"platform": p, "label": PLATFORM_LABELS[p], "value": getattr(application, f"key_{p}")}
        for p in PLATFORMS
    ]


# --- list and create ---------------------------------------------------------------------------


@blueprint.get("/applications")
@agent_required
async def list_applications() -> str:
    """The agent's applications, with their open threads and where to go next."""
    applications = await service.list_applications_with_organizations(current_agent())
    return await render_template("applications/list.html", applications=applications, logo_url=logo_path)


@blueprint.route("/applications/new", methods=["GET", "POST"])
@agent_required
async def new_application() -> ResponseReturnValue:
    """Create an application; on success go to its settings page with its keys."""
    agent = current_agent()
    if request.method == "GET":
        form = await _form(agent)
        return await render_template("applications/new.html", form=form, error=None), 200
    formdata, logo = await _posted()
    form = await _form(agent, formdata)
    error = None
    if form.validate():
        try:
            application = await service.create_application(
                agent, form.service_fields(), logo, storage_for(_settings())
            )
        except DomainError as failure:
            error = str(failure)
        else:
            await flash(f"{application.name} is ready. Add the widget to your website below.", "success")
            return redirect(
                url_for("views.applications.show_application", application_id=application.id), 303
            )
    return await render_template("applications/new.html", form=form, error=error), 422


# --- settings, edit, keys ----------------------------------------------------------------------


async def _settings_context(
    agent: UserRow, application: ApplicationRow, form: ApplicationForm | None = None, **extra: object
) -> dict[str, object]:
    """Everything the settings page shows; a failed edit passes its own form."""
    application.organization = await service.organization_of(application)
    intake = service.intake_address(application, _settings().intake_domain)
    return {
        "application": application,
        "form": form
        or await _form(agent, data=_form_data_of(application), current=application.organization_id),
        "logo_url": logo_path(application),
        "keys": _keys(application),
        "intake_address": intake,
        "snippet": widget_snippet(application),
        "target_label": duration(application.target_average_first_reply_time),
        "administrator": await deletion.is_administrator(agent, application),
        "blocklist": await blocklist.list_entries(application),
        "retention": await retention_views.retention_card(agent, application),
        "notifications": await notifications_views.notifications_card(agent, application),
        "webhooks": await webhooks_views.application_card(agent, application),
        "error": None,
        "saved": False,
        **extra,
    }


@blueprint.get("/applications/<id:application_id>")
@agent_required
async def show_application(application_id: int) -> str:
    """Settings of one application: its fields, keys, intake address and widget snippet."""
    agent = current_agent()
    application = await service.get_application(agent, application_id)
    return await render_template("applications/show.html", **await _settings_context(agent, application))


@blueprint.post("/applications/<id:application_id>")
@agent_required
async def update_application(application_id: int) -> ResponseReturnValue:
    """Save the edit form; htmx gets the form back, a plain post is redirected."""
    agent = current_agent()
    application = await service.get_application(agent, application_id)
    formdata, logo = await _posted()
    form = await _form(agent, formdata, current=application.organization_id)
    error = None
    if form.validate():
        fields = form.service_fields()
        if (form.organization.data or "") == str(application.organization_id or ""):
            del fields["organization_id"]  # unchanged: kept even if the agent has left it since
        try:
            application = await service.update_application(
                agent, application, fields, logo, storage_for(_settings())
            )
        except DomainError as failure:
            error = str(failure)
        else:
            if is_htmx():
                context = await _settings_context(agent, application, saved=True)
                return await render_template("partials/applications/settings-update.html", **context), 200
            await flash("Changes saved.", "success")
            return redirect(
                url_for("views.applications.show_application", application_id=application.id), 303
            )
    else:
        error = "Check the highlighted fields."
    context = await _settings_context(agent, application, form=form, error=error)
    template = "partials/applications/form.html" if is_htmx() else "applications/show.html"
    return await render_template(template, **context), 422


platforms = "any(" + ", ".join(PLATFORMS) + ")"


@blueprint.post(f"/applications/<id:application_id>/keys/<{platforms}:platform>/rotate")
@agent_required
async def rotate_key(application_id: int, platform: str) -> ResponseReturnValue:
    """Replace one key; the old one stops working at once."""
    agent = current_agent()
    application = await service.get_application(agent, application_id)
    await service.rotate_key(application, platform)
    label = PLATFORM_LABELS[platform]
    if is_htmx():
        key = next(key for key in _keys(application) if key["platform"] == platform)
        return await render_template(
            "partials/applications/key-rotated.html",
            application=application,
            key=key,
            rotated=True,
            snippet=widget_snippet(application) if platform == "javascript" else None,
        )
    await flash(f"New {label} key. The old one no longer works.", "success")
    return redirect(
        url_for("views.applications.show_application", application_id=application.id) + "#keys",
        303,
    )


# --- delete ------------------------------------------------------------------------------------


@blueprint.route("/applications/<id:application_id>/delete", methods=["GET", "POST"])
@agent_required
async def delete_application(application_id: int) -> ResponseReturnValue:
    """Delete the application with everything under it, once its name is typed (its
    administrators only: an agent of its organization gets 403)."""
    agent = current_agent()
    application = await service.get_application(agent, application_id)
    await deletion.check_administrator(agent, application)
    context = {"application": application, "logo_url": logo_path(application), "section": "settings"}
    if request.method == "GET":
        return await render_template("applications/delete.html", **context, error=None, typed=""), 200
    typed = (await request.form).get("name", "")
    try:
        deletion.check_confirmation(application, typed)
    except DomainError as failure:
        page = await render_template("applications/delete.html", **context, error=str(failure), typed=typed)
        return page, failure.status
    threads = await deletion.delete_application(agent, application, storage_for(_settings()))
    await flash(
        f"{application.name} was deleted with its {threads} thread{'' if threads == 1 else 's'}.", "success"
    )
    return redirect(url_for("views.applications.list_applications"), 303)
