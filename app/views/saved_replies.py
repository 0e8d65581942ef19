"""Saved replies in the web app: the page that lists, adds, changes and deletes the saved replies
of an application or of an organization, and their use in a thread's reply box.

One set of handlers serves both places (as the webhooks' do): every route is registered under
``/applications/<id>/saved-replies`` and ``/organizations/<id>/saved-replies`` with the same
endpoint name, and :meth:`Place.url` picks the rule by the id it is given. The service decides
who may change them (any agent of an application; an organization's owners) and the pages show
the buttons only to them.

The reply box of a thread offers them (app/views/threads.py: ``filled_saved_reply`` and
``insert_saved_reply``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quart import Blueprint, Response, flash, redirect, request
from quart.typing import ResponseReturnValue
from wtforms import StringField, TextAreaField

from app.errors import DomainError
from app.links import logo_path
from app.repositories.saved_replies import SavedReplyRow
from app.services import applications, organizations
from app.services import saved_replies as service
from app.views import places
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent

blueprint = Blueprint("saved_replies", __name__)

THREAD = "/applications/<id:application_id>/feedback/<id:feedback_id>/saved-replies"


class SavedReplyForm(CSRFForm):
    """A saved reply's fields, under the service's names."""

    title = StringField("Title", id="saved-reply-title")
    text = TextAreaField("Text", id="saved-reply-text")

    def service_fields(self) -> dict[str, object]:
        return {"title": self.title.data or "", "text": self.text.data or ""}


@dataclass(frozen=True)
class Place(places.Place["service.Scope"]):
    """Where saved replies live, as the pages show it: an application, or an organization."""

    views = "views.saved_replies"


async def _place(application_id: int | None, organization_id: int | None) -> Place:
    """The place a route names, as the signed-in agent sees it (the not-found page otherwise)."""
    agent = current_agent()
    if application_id is not None:
        application = await applications.get_application(agent, application_id)
        return Place(service.application_scope(application), application=application)
    assert organization_id is not None
    organization = await organizations.get_organization(agent, organization_id)
    return Place(await service.organization_scope(agent, organization_id), organization=organization)


route = places.routes_in_both_places(blueprint, "/saved-replies")


async def _page_context(place: Place, **extra: Any) -> dict[str, object]:
    """Everything the list page shows: the place's saved replies and, on an application's page,
    those its organization offers besides (managed on the organization's page)."""
    shared: list[SavedReplyRow] = []
    if place.application is not None:
        shared = await service.organization_replies_for(place.application)
    return {
        "place": place,
        "application": place.application,
        "logo_url": logo_path(place.application) if place.application is not None else None,
        "section": "saved-replies",
        "saved_replies": await service.list_saved_replies(place.scope),
        "shared": shared,
        "form": SavedReplyForm(),
        "error": None,
        "placeholders": service.PLACEHOLDERS,
        **extra,
    }


@route("")
@agent_required
async def list_saved_replies(application_id: int | None = None, organization_id: int | None = None) -> str:
    """The saved replies of the place, and the form that adds one (for those who may)."""
    place = await _place(application_id, organization_id)
    return await render_template("saved_replies/list.html", **await _page_context(place))


@route("", methods=("POST",))
@agent_required
async def create_saved_reply(
    application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Add a saved reply, then back to the list; a refused one shows the form again (400)."""
    place = await _place(application_id, organization_id)
    form = SavedReplyForm(await request.form)
    try:
        await service.create_saved_reply(current_agent(), place.scope, form.service_fields())
    except DomainError as error:
        context = await _page_context(place, form=form, error=str(error))
        return await render_template("saved_replies/list.html", **context), error.status
    await flash("Saved reply added.", "success")
    return redirect(place.url("list_saved_replies"), 303)


async def _saved(place: Place, saved_reply_id: int) -> SavedReplyRow:
    return await service.get_saved_reply(place.scope, saved_reply_id)


@route("/<id:saved_reply_id>")
@agent_required
async def edit_saved_reply(
    saved_reply_id: int, application_id: int | None = None, organization_id: int | None = None
) -> str:
    """A saved reply's page: its fields to change (or to read, for those who may not)."""
    place = await _place(application_id, organization_id)
    saved = await _saved(place, saved_reply_id)
    form = SavedReplyForm(data={"title": saved.title, "text": saved.text})
    return await render_template(
        "saved_replies/edit.html", **await _page_context(place, saved=saved, form=form)
    )


@route("/<id:saved_reply_id>", methods=("POST",))
@agent_required
async def update_saved_reply(
    saved_reply_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Save a saved reply's title and text, then back to the list; refused, the form again."""
    place = await _place(application_id, organization_id)
    saved = await _saved(place, saved_reply_id)
    form = SavedReplyForm(await request.form)
    try:
        await service.update_saved_reply(place.scope, saved, form.service_fields())
    except DomainError as error:
        context = await _page_context(place, saved=saved, form=form, error=str(error))
        return await render_template("saved_replies/edit.html", **context), error.status
    await flash("Saved reply changed.", "success")
    return redirect(place.url("list_saved_replies"), 303)


@route("/<id:saved_reply_id>/delete", methods=("POST",))
@agent_required
async def delete_saved_reply(
    saved_reply_id: int, application_id: int | None = None, organization_id: int | None = None
) -> ResponseReturnValue:
    """Delete a saved reply: htmx posts ``confirmed`` once the browser's confirm box said yes; a
    plain post gets a confirmation page first, whose button posts ``confirmed``."""
    place = await _place(application_id, organization_id)
    saved = await _saved(place, saved_reply_id)
    if (await request.form).get("confirmed") != "1":
        context = await _page_context(place, saved=saved)
        return await render_template("saved_replies/delete.html", **context)
    await service.delete_saved_reply(place.scope, saved)
    await flash("Saved reply deleted.", "success")
    target = place.url("list_saved_replies")
    if is_htmx():
        return Response("", 200, headers={"HX-Redirect": target})
    return redirect(target, 303)
