"""Organizations: the ones the agent belongs to, their members, roles and applications.

Who may do what is decided by ``app.services.organizations``; the pages only hide the controls
an agent cannot use, and show the service's refusal when a form is posted anyway.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, current_app, flash, get_flashed_messages, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import EmailField, StringField
from wtforms.validators import DataRequired, Length

from app.errors import DomainError
from app.models import OWNER
from app.repositories.organizations import OrganizationRow
from app.services import organizations as organizations_service
from app.services.avatars import avatar_url
from app.views import webhooks as webhooks_views
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent

blueprint = Blueprint("organizations", __name__)


class OrganizationForm(CSRFForm):
    name = StringField("Name", validators=[DataRequired("Give the organization a name."), Length(max=200)])


class MemberForm(CSRFForm):
    email = EmailField(
        "E-mail address",
        validators=[DataRequired("Enter the e-mail address of an Earful user."), Length(max=254)],
    )


async def list_context(form: OrganizationForm | None = None, **extra: Any) -> dict[str, Any]:
    """Everything the organizations list shows."""
    return {
        "summaries": await organizations_service.summarize_organizations(current_agent()),
        "form": form or OrganizationForm(),
        "error": None,
        **extra,
    }


async def organization_context(
    organization: OrganizationRow, form: MemberForm | None = None, **extra: Any
) -> dict[str, Any]:
    """Everything one organization's page shows; its members fragment renders a subset.

    The agent's role is read again here, since the action just taken may have changed it. The
    Webhooks card is for owners (None for agents); a refused webhook form passes its own.
    """
    secret = current_app.config["EARFUL"].secret_key
    memberships = await organizations_service.list_members(organization)
    applications = await organizations_service.organization_applications(organization)
    role = next((m.role for m in memberships if m.user_id == current_agent().id), None)
    if "webhooks" not in extra:
        extra["webhooks"] = (
            await webhooks_views.organization_card(current_agent(), organization) if role == OWNER else None
        )
    return {
        "organization": organization,
        "is_owner": role == OWNER,
        "members": [
            {
                "user": membership.user,
                "role": membership.role,
                "avatar": avatar_url("", secret, membership.user.email, membership.user.name),
            }
            for membership in memberships
        ],
        "applications": [
            {
                "application": application,
                "inbox_url": url_for("views.inbox.list_threads", application_id=application.id),
            }
            for application in applications
        ],
        "form": form or MemberForm(),
        "error": None,
        "notice": None,
        **extra,
    }


async def _render_organization(status: int, **context: Any) -> tuple[str, int]:
    """The organization page, or only its members fragment for htmx."""
    template = "partials/organizations/members.html" if is_htmx() else "organizations/show.html"
    return await render_template(template, **context), status


async def _done(organization: OrganizationRow, notice: str) -> ResponseReturnValue:
    """After a change to the members: the fragment for htmx, else back to the page with a notice."""
    if is_htmx():
        return await _render_organization(200, **await organization_context(organization, notice=notice))
    await flash(notice)
    return redirect(
        url_for("views.organizations.show_organization", organization_id=organization.id) + "#members",
        303,
    )


@blueprint.get("/organizations")
@agent_required
async def list_organizations() -> str:
    """The organizations the agent belongs to, and a form to create one."""
    return await render_template("organizations/list.html", **await list_context())


@blueprint.post("/organizations")
@agent_required
async def create_organization() -> ResponseReturnValue:
    """Create an organization with the agent as its owner."""
    form = OrganizationForm(await request.form)
    if form.validate():
        try:
            organization = await organizations_service.create_organization(
                form.name.data or "", owners=[current_agent()]
            )
        except DomainError as failure:
            context = await list_context(form, error=str(failure))
            return await render_template("organizations/list.html", **context), failure.status
        return redirect(
            url_for("views.organizations.show_organization", organization_id=organization.id), 303
        )
    return await render_template("organizations/list.html", **await list_context(form)), 422


@blueprint.get("/organizations/<id:organization_id>")
@agent_required
async def show_organization(organization_id: int) -> str | tuple[str, int]:
    """One organization: its members and its applications."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    notices = get_flashed_messages(category_filter=["message"])
    notice = notices[-1] if notices else None
    webhook_notices = get_flashed_messages(category_filter=["webhooks"])
    webhooks = await webhooks_views.organization_card(
        agent, organization, status=webhook_notices[-1] if webhook_notices else None
    )
    context = await organization_context(organization, notice=notice, webhooks=webhooks)
    return await render_template("organizations/show.html", **context)


@blueprint.post("/organizations/<id:organization_id>/members")
@agent_required
async def add_member(organization_id: int) -> ResponseReturnValue:
    """Add an existing Earful user to the organization by e-mail address (owners only)."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    form = MemberForm(await request.form)
    if not form.validate():
        return await _render_organization(422, **await organization_context(organization, form))
    try:
        user = await organizations_service.add_member_by_email(agent, organization, form.email.data or "")
    except DomainError as failure:
        context = await organization_context(organization, form, error=str(failure))
        return await _render_organization(failure.status, **context)
    return await _done(organization, f"{user.name} ({user.email}) is a member now.")


@blueprint.post("/organizations/<id:organization_id>/members/<id:user_id>/remove")
@agent_required
async def remove_member(organization_id: int, user_id: int) -> ResponseReturnValue:
    """Remove a member (owners only), or leave (any member but the last owner)."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    try:
        await organizations_service.remove_member(agent, organization, user_id)
    except DomainError as failure:
        context = await organization_context(organization, error=str(failure))
        return await _render_organization(failure.status, **context)
    if user_id == agent.id:
        target = url_for("views.organizations.list_organizations")
        if is_htmx():
            return Response(status=204, headers={"HX-Redirect": target})
        return redirect(target, 303)
    return await _done(organization, "Member removed.")


@blueprint.post("/organizations/<id:organization_id>/members/<id:user_id>/role")
@agent_required
async def change_role(organization_id: int, user_id: int) -> ResponseReturnValue:
    """Make a member an owner or an agent (owners only; never the last owner an agent)."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    role = (await request.form).get("role", "")
    try:
        user = await organizations_service.change_role(agent, organization, user_id, role)
    except DomainError as failure:
        context = await organization_context(organization, error=str(failure))
        return await _render_organization(failure.status, **context)
    article = "an owner" if role == OWNER else "an agent"
    return await _done(organization, f"{user.name} ({user.email}) is {article} now.")
