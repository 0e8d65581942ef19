"""Webhooks in the web app: the card that lists and adds the endpoints of an application (on its
settings page) or of an organization (on its page), and each endpoint's page: its settings, its
secret, a test event, deletion, and the delivery log with every attempt.

One set of handlers serves both places. Every route is registered under
``/applications/<id>/webhooks`` and under ``/organizations/<id>/webhooks`` with the same endpoint
name, and ``url_for`` picks the rule by the id it is given (:meth:`Place.url`). The service
decides who may manage them: an application's administrators, an organization's owners (403
for the other agents; 404, the not-found page, for anyone else).

A secret is shown once. htmx gets the rotated secret in its answer; a plain post (creating or
rotating) lands on the endpoint's page, which shows it: the session remembers the endpoint and a
digest of its new secret, never the secret itself (Quart's session is a signed cookie, readable
by whoever holds it), and the next page of that endpoint shows the secret and forgets the mark.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from quart import Blueprint, Response, current_app, flash, redirect, request, session, url_for
from quart.typing import ResponseReturnValue
from wtforms import (  # type: ignore[attr-defined]  # SelectChoice: WTForms 3.3's, not in types-WTForms yet
    BooleanField,
    SelectChoice,
    SelectField,
    SelectMultipleField,
    StringField,
    URLField,
)
from wtforms.validators import InputRequired, Length
from wtforms.widgets import CheckboxInput, ListWidget

from app.config import Settings
from app.errors import Forbidden, ValidationError
from app.links import logo_path
from app.models import EVENT_TYPES
from app.repositories.accounts import UserRow
from app.repositories.applications import ApplicationRow
from app.repositories.organizations import OrganizationRow
from app.repositories.webhooks import EndpointRow
from app.services import applications, organizations
from app.services.validation import parse_int, valid_id
from app.services.webhooks import endpoints as service
from app.services.webhooks.delivery import shown_body
from app.views import applications as applications_views
from app.views import organizations as organizations_views
from app.views import places
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent
from app.views.thread_display import full_time, time_ago

blueprint = Blueprint("webhooks", __name__)

EVENT_LABELS = {
    "feedback.created": "New feedback",
    "feedback.updated": "Feedback changed: archived, reopened, tagged, assigned, sentiment",
    "feedback.deleted": "Feedback deleted",
    "reply.created": "New reply or customer answer",
}
FORMAT_LABELS = {"standard": "Standard Webhooks (JSON)", "slack": "Slack-compatible"}
# The log asks for itself again while a delivery is being sent or due this soon.
REFRESH_WINDOW = timedelta(seconds=30)
REFRESH_SECONDS = 2
SHOWN_SECRET = "webhook_secret"  # the session's mark: [endpoint id, digest of its new secret]


class WebhookForm(CSRFForm):
    """A new endpoint's fields, under the service's names (ids of their own: the settings page
    has the application form's ``url`` too)."""

    url = URLField(
        "URL",
        id="webhook-url",
        validators=[InputRequired(message="Enter the URL that receives the events."), Length(max=2048)],
    )
    description = StringField("Description", id="webhook-description", validators=[Length(max=200)])
    events = SelectMultipleField(
        "Events",
        id="webhook-events",
        choices=[SelectChoice(kind, EVENT_LABELS[kind]) for kind in EVENT_TYPES],
        default=list(EVENT_TYPES),
        widget=ListWidget(prefix_label=False),
        option_widget=CheckboxInput(),
    )
    format = SelectField(
        "Format",
        id="webhook-format",
        choices=[SelectChoice(value, label) for value, label in FORMAT_LABELS.items()],
        default="standard",
    )
    include_notes = BooleanField("Include internal notes", id="webhook-include-notes")

    def service_fields(self) -> dict[str, object]:
        return {
            "url": (self.url.data or "").strip(),
            "description": self.description.data or "",
            "events": list(self.events.data or []),
            "format": self.format.data,
            "include_notes": "true" if self.include_notes.data else "false",
        }


class WebhookSettingsForm(WebhookForm):
    """An endpoint's settings on its page: the same fields, and whether it is enabled."""

    enabled = BooleanField("Enabled", id="webhook-enabled", default=True)

    def service_fields(self) -> dict[str, object]:
        return {**super().service_fields(), "enabled": "true" if self.enabled.data else "false"}


def _settings() -> Settings:
    config: Settings = current_app.config["EARFUL"]
    return config


@dataclass(frozen=True)
class Place(places.Place["service.Scope"]):
    """Where endpoints live, as the pages show it: an application, or an organization."""

    views = "views.webhooks"

    @property
    def home(self) -> str:
        """The page with the place's Webhooks card."""
        if self.application is not None:
            page = url_for("views.applications.show_application", application_id=self.application.id)
        else:
            page = url_for("views.organizations.show_organization", **self.owner)
        return page + "#webhooks"


async def _place(application_id: int | None, organization_id: int | None) -> Place:
    """The place a route names, as the signed-in agent may manage it (404 / 403 otherwise)."""
    agent = current_agent()
    if application_id is not None:
        application = await applications.get_application(agent, application_id)
        return Place(await service.application_scope(agent, application), application=application)
    assert organization_id is not None
    organization = await organizations.get_organization(agent, organization_id)
    return Place(await service.organization_scope(agent, organization_id), organization=organization)


route = places.routes_in_both_places(blueprint, "/webhooks")


# --- the card ----------------------------------------------------------------------------------


async def _card(
    place: Place, form: WebhookForm | None = None, error: str | None = None, status: str | None = None
) -> dict[str, object]:
    found = await service.list_endpoints(place.scope)
    return {
        "place": place,
        "endpoints": found,
        "pending": await service.pending_counts(found),
        "form": form or WebhookForm(),
        "error": error,
        "status": status,
        "event_labels": EVENT_LABELS,
        "format_labels": FORMAT_LABELS,
    }


async def application_card(
    agent: UserRow, application: ApplicationRow, **extra: Any
) -> dict[str, object] | None:
    """The settings page's Webhooks card; None for an agent who may not manage them."""
    try:
        scope = await service.application_scope(agent, application)
    except Forbidden:
        return None
    return await _card(Place(scope, application=application), **extra)


async def organization_card(
    agent: UserRow, organization: OrganizationRow, **extra: Any
) -> dict[str, object] | None:
    """The organization page's Webhooks card; None for an agent who may not manage them."""
    try:
        scope = await service.organization_scope(agent, organization.id)
    except Forbidden:
        return None
    return await _card(Place(scope, organization=organization), **extra)


async def _card_page(place: Place, card: dict[str, object]) -> str:
    """The place's page with the card as given (a refused form, without JavaScript)."""
    agent = current_agent()
    if place.application is not None:
        context = await applications_views._settings_context(agent, place.application, webhooks=card)
        return await render_template("applications/show.html", **context)
    assert place.organization is not None
    context = await organizations_views.organization_context(place.organization, webhooks=card)
    return await render_template("organizations/show.html", **context)


@route("", methods=("POST",))
@agent_required
async def create_webhook(
    application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Add an endpoint, then its page, which shows the secret once; a refused value shows the
    card again with the service's message (422), nothing saved."""
    place = await _place(application_id, organization_id)
    form = WebhookForm(await request.form)
    error = "Check the highlighted fields."
    if form.validate():
        try:
            endpoint, secret = await service.create_endpoint(
                current_agent(), place.scope, form.service_fields(), _settings()
            )
        except ValidationError as failure:
            error = str(failure)
        else:
            _remember_secret(endpoint, secret)
            target = place.url("show_webhook", webhook_id=endpoint.id)
            if is_htmx():
                return Response("", 200, headers={"HX-Redirect": target})
            return redirect(target, 303)
    card = await _card(place, form=form, error=error)
    if is_htmx():
        return await render_template("partials/webhooks/card.html", webhooks=card), 422
    return await _card_page(place, card), 422


# --- an endpoint's page ------------------------------------------------------------------------


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:32]


def _remember_secret(endpoint: EndpointRow, secret: str) -> None:
    """Have the endpoint's next page show its new secret (see the module's docstring)."""
    session[SHOWN_SECRET] = [endpoint.id, _digest(secret)]


def _secret_to_show(endpoint: EndpointRow) -> str | None:
    """The endpoint's secret if it was just made and not shown yet; the mark goes either way."""
    mark = session.pop(SHOWN_SECRET, None)
    return endpoint.secret if mark == [endpoint.id, _digest(endpoint.secret)] else None


async def _before() -> int | None:
    """The log's page: deliveries older than this id (None: the newest), from the query or, for
    a Resend, the form."""
    before = parse_int((await request.values).get("before", ""))
    return before if before is not None and valid_id(before) else None


async def _log(place: Place, endpoint: EndpointRow, before: int | None, **extra: Any) -> dict[str, object]:
    """What the delivery log shows: a page of deliveries, newest first, with their attempts."""
    found = await service.delivery_log(endpoint, service.DELIVERIES_PAGE + 1, before)
    page = found[: service.DELIVERIES_PAGE]  # the one more says whether there is an older page
    now = datetime.now(UTC)
    return {
        "entries": [
            {"delivery": d.delivery, "attempts": d.attempts, "body": shown_body(d.delivery, endpoint)}
            for d in page
        ],
        "before": before,
        "older": page[-1].delivery.id if len(found) > len(page) else None,
        "refresh": any(
            item.delivery.status == "sending"
            or (item.delivery.status == "pending" and item.delivery.next_attempt_at <= now + REFRESH_WINDOW)
            for item in page
        ),
        "refresh_seconds": REFRESH_SECONDS,
        "status": None,
        "error": None,
        **extra,
    }


async def _endpoint_context(
    place: Place,
    endpoint: EndpointRow,
    form: WebhookSettingsForm | None = None,
    log: dict[str, object] | None = None,
    with_log: bool = True,
    **extra: Any,
) -> dict[str, object]:
    """Everything an endpoint's page shows; its fragments render parts of it (those without the
    log pass ``with_log=False``)."""
    if form is None:
        form = WebhookSettingsForm(
            data={
                "url": endpoint.url,
                "description": endpoint.description,
                "events": list(endpoint.events),
                "format": endpoint.format,
                "include_notes": endpoint.include_notes,
                "enabled": endpoint.enabled,
            }
        )
    return {
        "place": place,
        "application": place.application,
        "logo_url": logo_path(place.application) if place.application is not None else None,
        "section": "settings",
        "endpoint": endpoint,
        "form": form,
        "log": log if log is not None or not with_log else await _log(place, endpoint, await _before()),
        "secret": None,
        "rotated": False,
        "error": None,
        "saved": False,
        "now": datetime.now(UTC),
        "event_labels": EVENT_LABELS,
        "format_labels": FORMAT_LABELS,
        "time_ago": time_ago,
        "full_time": full_time,
        **extra,
    }


async def _load(
    webhook_id: int, application_id: int | None, organization_id: int | None
) -> tuple[Place, EndpointRow]:
    place = await _place(application_id, organization_id)
    return place, await service.get_endpoint(place.scope, webhook_id)


@route("/<id:webhook_id>")
@agent_required
async def show_webhook(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> str:
    """An endpoint's page: its settings, its secret (once, after creation or rotation), its log."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    context = await _endpoint_context(place, endpoint, secret=_secret_to_show(endpoint))
    return await render_template("webhooks/show.html", **context)


@route("/<id:webhook_id>", methods=("POST",))
@agent_required
async def update_webhook(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Save the settings; htmx gets the form back, a plain post is redirected; a refused value
    shows the form again with the service's message (422), nothing saved."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    form = WebhookSettingsForm(await request.form)
    error = "Check the highlighted fields."
    if form.validate():
        try:
            fields = form.service_fields()
            endpoint = await service.update_endpoint(place.scope, endpoint, fields, _settings())
        except ValidationError as failure:
            error = str(failure)
        else:
            if is_htmx():
                context = await _endpoint_context(place, endpoint, saved=True)
                return await render_template("partials/webhooks/settings.html", **context)
            await flash("Webhook saved.", "success")
            return redirect(place.url("show_webhook", webhook_id=endpoint.id), 303)
    context = await _endpoint_context(place, endpoint, form=form, error=error)
    template = "partials/webhooks/settings.html" if is_htmx() else "webhooks/show.html"
    return await render_template(template, **context), 422


# --- the delivery log --------------------------------------------------------------------------


def _log_url(place: Place, endpoint: EndpointRow, before: int | None, anchor: str = "deliveries") -> str:
    values = {"before": before} if before is not None else {}
    return place.url("show_webhook", webhook_id=endpoint.id, **values) + "#" + anchor


@route("/<id:webhook_id>/deliveries")
@agent_required
async def webhook_log(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """The log alone, for htmx (it asks again while a delivery is under way); else its page."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    if not is_htmx():
        return redirect(_log_url(place, endpoint, await _before()), 303)
    context = await _endpoint_context(place, endpoint)
    return await render_template("partials/webhooks/log.html", **context)


@route("/<id:webhook_id>/test", methods=("POST",))
@agent_required
async def send_test(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Queue a ``webhook.test`` event (the worker sends it within a second); htmx gets the log."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    await service.send_test_event(place.scope, endpoint)
    notice = "Test event queued: it is sent within a second."
    if is_htmx():
        log = await _log(place, endpoint, None, status=notice)
        context = await _endpoint_context(place, endpoint, log=log)
        return await render_template("partials/webhooks/log.html", **context)
    await flash(notice, "success")
    return redirect(_log_url(place, endpoint, None), 303)


@route("/<id:webhook_id>/deliveries/<id:delivery_id>/resend", methods=("POST",))
@agent_required
async def resend_delivery(
    webhook_id: int, delivery_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Send a delivery again (same ``webhook-id``, same body); htmx gets the log's page back."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    before = await _before()
    try:
        await service.resend(endpoint, delivery_id)
    except ValidationError as failure:  # a worker is sending it right now
        log = await _log(place, endpoint, before, error=str(failure))
        context = await _endpoint_context(place, endpoint, log=log)
        template = "partials/webhooks/log.html" if is_htmx() else "webhooks/show.html"
        return await render_template(template, **context), failure.status
    notice = "Delivery queued again: it is sent within a second."
    if is_htmx():
        log = await _log(place, endpoint, before, status=notice)
        context = await _endpoint_context(place, endpoint, log=log)
        return await render_template("partials/webhooks/log.html", **context)
    await flash(notice, "success")
    return redirect(_log_url(place, endpoint, before, anchor=f"delivery-{delivery_id}"), 303)


# --- rotating the secret, deleting ---------------------------------------------------------------


async def _confirm_page(place: Place, endpoint: EndpointRow, action: str) -> str:
    context = await _endpoint_context(place, endpoint, with_log=False)
    return await render_template("webhooks/confirm.html", **context, action=action)


@route("/<id:webhook_id>/rotate")
@agent_required
async def confirm_rotate(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> str:
    """Without JavaScript, "Rotate secret" asks here first (with it, the browser's confirm box)."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    return await _confirm_page(place, endpoint, "rotate")


@route("/<id:webhook_id>/rotate", methods=("POST",))
@agent_required
async def rotate_secret(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """A new secret, shown once; the old one keeps signing beside it for 24 hours."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    endpoint, secret = await service.rotate_secret(place.scope, endpoint)
    if is_htmx():
        context = await _endpoint_context(place, endpoint, with_log=False, secret=secret, rotated=True)
        return await render_template("partials/webhooks/secret.html", **context)
    _remember_secret(endpoint, secret)
    await flash("New secret. The previous one keeps signing for 24 hours.", "success")
    return redirect(place.url("show_webhook", webhook_id=endpoint.id) + "#webhook-secret", 303)


@route("/<id:webhook_id>/delete")
@agent_required
async def confirm_delete(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> str:
    """Without JavaScript, "Delete webhook" asks here first (with it, the browser's confirm box)."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    return await _confirm_page(place, endpoint, "delete")


@route("/<id:webhook_id>/delete", methods=("POST",))
@agent_required
async def delete_webhook(
    webhook_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Delete the endpoint with its log, then back to the card."""
    place, endpoint = await _load(webhook_id, application_id, organization_id)
    await service.delete_endpoint(endpoint)
    await flash("Webhook deleted.", "webhooks")  # the organization page shows it in the card
    if is_htmx():
        return Response("", 200, headers={"HX-Redirect": place.home})
    return redirect(place.home, 303)
