"""Organizations: the ones the agent belongs to, their members, roles, invitations and
applications.

Who may do what is decided by ``app.services.organizations`` and ``app.services.invitations``;
the pages only hide the controls an agent cannot use, and show the service's refusal when a form
is posted anyway. An invitation's link is shown once, in the answer to the form that made it
(when it was not e-mailed): only its digest is stored, so no later page can show it, and the
session cookie (signed, not encrypted) never carries it.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, current_app, flash, get_flashed_messages, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import (  # type: ignore[attr-defined]  # SelectChoice: WTForms 3.3's, not in types-WTForms yet
    EmailField,
    SelectChoice,
    SelectField,
    StringField,
)
from wtforms.validators import DataRequired, Length

from app.errors import DomainError, NotFound
from app.models import AGENT, OWNER
from app.repositories.organizations import OrganizationRow
from app.services import invitations as invitations_service
from app.services import organizations as organizations_service
from app.services.avatars import avatar_url
from app.services.invitations import NewInvitation
from app.views import webhooks as webhooks_views
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent

blueprint = Blueprint("organizations", __name__)


class OrganizationForm(CSRFForm):
    name = StringField("Name", validators=[DataRequired("Give the organization a name."), Length(max=200)])


class InviteForm(CSRFForm):
    email = EmailField(
        "E-mail address",
        validators=[DataRequired("Enter the e-mail address to invite."), Length(max=254)],
    )
    role = SelectField(
        "Role", choices=[SelectChoice(AGENT, "Agent"), SelectChoice(OWNER, "Owner")], default=AGENT
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
    organization: OrganizationRow, form: InviteForm | None = None, **extra: Any
) -> dict[str, Any]:
    """Everything one organization's page shows; its members fragment renders a subset.

    The agent's role is read again here, since the action just taken may have changed it. The
    Webhooks card and the pending invitations are for owners (None for agents); a refused
    webhook form passes its own. ``new_invitation`` is the invitation just made, whose link the
    page shows this once.
    """
    secret = current_app.config["EARFUL"].secret_key
    memberships = await organizations_service.list_members(organization)
    applications = await organizations_service.organization_applications(organization)
    role = next((m.role for m in memberships if m.user_id == current_agent().id), None)
    if "webhooks" not in extra:
        extra["webhooks"] = (
            await webhooks_views.organization_card(current_agent(), organization) if role == OWNER else None
        )
    pending = await invitations_service.list_pending(current_agent(), organization) if role == OWNER else []
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
        "invitations": pending,
        "form": form or InviteForm(),
        "new_invitation": None,
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


@blueprint.post("/organizations/<id:organization_id>/invitations")
@agent_required
async def invite(organization_id: int) -> ResponseReturnValue:
    """Invite an address with a role (owners only). The link is e-mailed when e-mail goes out;
    otherwise this answer shows it, once, for the owner to copy."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    form = InviteForm(await request.form)
    if not form.validate():
        return await _render_organization(422, **await organization_context(organization, form))
    try:
        made = await invitations_service.invite(agent, organization, form.email.data or "", form.role.data)
    except DomainError as failure:
        context = await organization_context(organization, form, error=str(failure))
        return await _render_organization(failure.status, **context)
    return await _invited(organization, made)


async def _invited(organization: OrganizationRow, made: NewInvitation) -> ResponseReturnValue:
    """After an invitation: an e-mailed one is a notice like any change; a link to copy is shown
    in this answer, since no later page can show it again."""
    email = made.invitation.email
    if made.emailed:
        return await _done(organization, f"Invitation sent to {email}.")
    notice = f"Invitation for {email} made. Copy its link now: it is shown only once."
    context = await organization_context(organization, notice=notice, new_invitation=made)
    return await _render_organization(200, **context)


@blueprint.get("/organizations/<id:organization_id>/invitations/<id:invitation_id>/revoke")
@agent_required
async def confirm_revoke_invitation(organization_id: int, invitation_id: int) -> str:
    """Without JavaScript, an invitation's Revoke button asks here first (with it, the browser's
    confirm box does)."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    pending = await invitations_service.list_pending(agent, organization)
    invitation = next((item for item in pending if item.id == invitation_id), None)
    if invitation is None:
        raise NotFound(invitations_service.INVALID_INVITATION)
    return await render_template(
        "organizations/revoke.html", organization=organization, invitation=invitation
    )


@blueprint.post("/organizations/<id:organization_id>/invitations/<id:invitation_id>/revoke")
@agent_required
async def revoke_invitation(organization_id: int, invitation_id: int) -> ResponseReturnValue:
    """Revoke a pending invitation (owners only): its link stops working."""
    agent = current_agent()
    organization = await organizations_service.get_organization(agent, organization_id)
    try:
        await invitations_service.revoke(agent, organization, invitation_id)
    except DomainError as failure:
        context = await organization_context(organization, error=str(failure))
        return await _render_organization(failure.status, **context)
    return await _done(organization, "Invitation revoked: its link no longer works.")


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
