"""An invitation's link: the page where the invited person joins the organization.

Anyone with the link reaches the page (the token is the permission); what it offers depends on
who opens it (:mod:`app.services.invitations` holds the rules):

- signed in with the invited address: a button that accepts;
- signed in with another address: nothing to accept (403), and a way to sign out;
- not signed in, and the address has an account: a link to sign in, which comes back here;
- not signed in, and no account: a form to choose a name and a password, which creates the
  account, accepts and signs in.

A link that was accepted, revoked or has expired says which (410); an unknown one is 404.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, flash, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import PasswordField, StringField
from wtforms.validators import DataRequired, EqualTo, Length

from app.errors import DomainError
from app.repositories.invitations import InvitationRow
from app.services import invitations as invitations_service
from app.services.users import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH
from app.views.rendering import render_template
from app.views.security import CSRFForm, load_agent, sign_in_session

blueprint = Blueprint("invitations", __name__)


class NewAccountForm(CSRFForm):
    name = StringField("Your name", validators=[DataRequired("Enter your name."), Length(max=200)])
    password = PasswordField(
        "Password",
        validators=[DataRequired("Choose a password."), Length(max=MAX_PASSWORD_LENGTH)],
        description=f"At least {MIN_PASSWORD_LENGTH} characters.",
    )
    confirm_password = PasswordField(
        "Repeat the password", validators=[EqualTo("password", "The two passwords differ.")]
    )


async def _page(invitation: InvitationRow | None, status: int = 200, **extra: Any) -> tuple[str, int]:
    context: dict[str, Any] = {
        "invitation": invitation,
        "organization": invitation.organization if invitation else None,
        "error": None,
        "mode": None,
        "form": None,
        "min_password_length": MIN_PASSWORD_LENGTH,
        **extra,
    }
    return await render_template("invitations/show.html", **context), status


async def _open_invitation(token: str) -> InvitationRow | tuple[str, int]:
    """The pending invitation of the link, or the page that says why it does not work."""
    try:
        invitation = await invitations_service.find(token)
    except DomainError as failure:
        return await _page(None, failure.status, error=str(failure))
    try:
        invitations_service.check_open(invitation)
    except DomainError as failure:
        return await _page(invitation, failure.status, error=str(failure))
    return invitation


async def _offer(
    invitation: InvitationRow, token: str, form: NewAccountForm | None = None
) -> tuple[str, int]:
    """What the link's page offers to whoever opened it (see the module's docstring)."""
    agent = await load_agent()
    if agent is not None:
        try:
            invitations_service.check_addressee(agent, invitation)
        except DomainError as failure:
            return await _page(invitation, failure.status, error=str(failure), mode="other-account")
        return await _page(invitation, mode="accept")
    if await invitations_service.account_exists(invitation):
        sign_in_url = url_for("views.auth.sign_in", next=request.path)
        return await _page(invitation, mode="sign-in", sign_in_url=sign_in_url)
    return await _page(invitation, mode="new-account", form=form or NewAccountForm())


@blueprint.get("/invitations/<token>")
async def show_invitation(token: str) -> ResponseReturnValue:
    """The invitation's page: what it is for, and the way to accept it."""
    invitation = await _open_invitation(token)
    if not isinstance(invitation, InvitationRow):
        return invitation
    return await _offer(invitation, token)


@blueprint.post("/invitations/<token>")
async def accept_invitation(token: str) -> ResponseReturnValue:
    """Accept: as the signed-in agent with the invited address, or with a new account (a name
    and a password), which is signed in; then to the organization's page."""
    invitation = await _open_invitation(token)
    if not isinstance(invitation, InvitationRow):
        return invitation
    agent = await load_agent()
    form = NewAccountForm(await request.form)
    try:
        if agent is not None:
            organization = await invitations_service.accept(agent, token)
        elif await invitations_service.account_exists(invitation):
            return redirect(url_for("views.auth.sign_in", next=request.path), 303)
        else:
            if not form.validate():
                page, _ = await _offer(invitation, token, form)
                return page, 422
            user, organization = await invitations_service.accept_with_new_account(
                token, form.name.data, form.password.data or ""
            )
            sign_in_session(user, remember=False)
    except invitations_service.InvitationClosed as failure:  # spent at the same moment
        return await _page(invitation, failure.status, error=str(failure))
    except DomainError as failure:
        return await _error_page(invitation, form, str(failure), failure.status)
    await flash(f"You joined {organization.name}.")
    return redirect(url_for("views.organizations.show_organization", organization_id=organization.id), 303)


async def _error_page(
    invitation: InvitationRow, form: NewAccountForm, error: str, status: int
) -> tuple[str, int]:
    """The link's page again with the refusal, and the form as it was filled in."""
    agent = await load_agent()
    if agent is not None:
        mode = "accept" if agent.email == invitation.email else "other-account"
        return await _page(invitation, status, error=error, mode=mode)
    return await _page(invitation, status, error=error, mode="new-account", form=form)
