"""Organizations: the ones the agent belongs to, their members and their applications."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, current_app, flash, get_flashed_messages, redirect, request, url_for
from werkzeug.routing import BuildError
from wtforms import EmailField, StringField
from wtforms.validators import DataRequired, Length

from app.errors import DomainError
from app.models import Organization
from app.services import organizations as organizations_service
from app.services.avatars import avatar_url
from app.views.rendering import render_template
from app.views.security import CSRFForm, agent_required, current_agent

blueprint = Blueprint("organizations", __name__)


class OrganizationForm(CSRFForm):
    name = StringField("Name", validators=[DataRequired("Give the organization a name."), Length(max=200)])


class MemberForm(CSRFForm):
    email = EmailField(
        "E-mail address",
        validators=[DataRequired("Enter the e-mail address of an Earful user."), Length(max=254)],
    )


def _is_htmx() -> bool:
    return bool(request.headers.get("HX-Request"))


def _inbox_url(application_id: int) -> str:
    """Link to an application's inbox (the fixed path, until the inbox blueprint is there)."""
    try:
        return url_for("views.inbox.list_threads", application_id=application_id)
    except BuildError:
        return f"/app/applications/{application_id}/feedback"


async def list_context(form: OrganizationForm | None = None, **extra: Any) -> dict[str, Any]:
    """Everything the organizations list shows."""
    return {
        "summaries": await organizations_service.summarize_organizations(current_agent()),
        "form": form or OrganizationForm(),
        "error": None,
        **extra,
    }


async def organization_context(
    organization: Organization, form: MemberForm | None = None, **extra: Any
) -> dict[str, Any]:
    """Everything one organization's page shows; its members fragment renders a subset."""
    secret = current_app.config["EARFUL"].secret_key
    members = await organizations_service.list_members(organization)
    applications = await organizations_service.organization_applications(organization)
    return {
        "organization": organization,
        "members": [
            {"user": user, "avatar": avatar_url("", secret, user.email, user.name)} for user in members
        ],
        "applications": [
            {"application": application, "inbox_url": _inbox_url(application.id)}
            for application in applications
        ],
        "form": form or MemberForm(),
        "error": None,
        "notice": None,
        **extra,
    }


async def _render_organization(status: int, **context: Any) -> tuple[str, int]:
    """The organization page, or only its members fragment for htmx."""
    template = "partials/organizations/members.html" if _is_htmx() else "organizations/show.html"
    return await render_template(template, **context), status


@blueprint.get("/organizations")
@agent_required
async def list_organizations() -> str:
    """The organizations the agent belongs to, and a form to create one."""
    return await render_template("organizations/list.html", **await list_context())


@blueprint.post("/organizations")
@agent_required
async def create_organization() -> Response | tuple[str, int]:
    """Create an organization with the agent as its first member."""
    form = OrganizationForm(await request.form)
    if form.validate():
        try:
            organization = await organizations_service.create_organization(
                form.name.data or "", [current_agent()]
            )
        except DomainError as failure:
            context = await list_context(form, error=str(failure))
            return await render_template("organizations/list.html", **context), failure.status
        return redirect(
            url_for("views.organizations.show_organization", organization_id=organization.id), 303
        )
    return await render_template("organizations/list.html", **await list_context(form)), 422


@blueprint.get("/organizations/<int:organization_id>")
@agent_required
async def show_organization(organization_id: int) -> str | tuple[str, int]:
    """One organization: its members and its applications."""
    organization = await organizations_service.get_organization(current_agent(), organization_id)
    notices = get_flashed_messages()
    notice = notices[-1] if notices else None
    return await render_template(
        "organizations/show.html", **await organization_context(organization, notice=notice)
    )


@blueprint.post("/organizations/<int:organization_id>/members")
@agent_required
async def add_member(organization_id: int) -> Response | tuple[str, int]:
    """Add an existing Earful user to the organization by e-mail address."""
    organization = await organizations_service.get_organization(current_agent(), organization_id)
    form = MemberForm(await request.form)
    if not form.validate():
        return await _render_organization(422, **await organization_context(organization, form))
    try:
        user = await organizations_service.add_member_by_email(organization, form.email.data or "")
    except DomainError as failure:
        context = await organization_context(organization, form, error=str(failure))
        return await _render_organization(failure.status, **context)
    notice = f"{user.name} ({user.email}) is a member now."
    if _is_htmx():
        return await _render_organization(200, **await organization_context(organization, notice=notice))
    await flash(notice)
    return redirect(
        url_for("views.organizations.show_organization", organization_id=organization.id) + "#members",
        303,
    )


@blueprint.post("/organizations/<int:organization_id>/members/<int:user_id>/remove")
@agent_required
async def remove_member(organization_id: int, user_id: int) -> Response | tuple[str, int]:
    """Remove a member (the agent may remove themself, but not the last member)."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    try:
        await organizations_service.remove_member_keeping_one(organization, user_id)
    except DomainError as failure:
        context = await organization_context(organization, error=str(failure))
        return await _render_organization(failure.status, **context)
    if user_id == agent.id:
        target = url_for("views.organizations.list_organizations")
        if _is_htmx():
            return Response(status=204, headers={"HX-Redirect": target})
        return redirect(target, 303)
    if _is_htmx():
        context = await organization_context(organization, notice="Member removed.")
        return await _render_organization(200, **context)
    await flash("Member removed.")
    return redirect(
        url_for("views.organizations.show_organization", organization_id=organization.id) + "#members",
        303,
    )
