"""The agent's account: profile, password and personal access tokens of the management API."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, flash, get_flashed_messages, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import PasswordField, SelectChoice, SelectMultipleField, StringField, widgets  # type: ignore[attr-defined]  # WTForms 3.3's, not in types-WTForms yet
from wtforms.validators import DataRequired, EqualTo, Length

from app.errors import DomainError, NotFound
from app.proxies import client_address
from app.services import passwords
from app.services import tokens as tokens_service
from app.services.avatars import avatar_url
from app.services.users import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH
from app.views.rendering import is_htmx, render_template
from app.views.security import CSRFForm, agent_required, current_agent, renew_session

blueprint = Blueprint("account", __name__)

SCOPE_CHOICES = [
    SelectChoice("read", "Read: list applications, threads and tags"),
    SelectChoice("write", "Write: create and change applications, reply, tag and archive"),
]


class TokenForm(CSRFForm):
    name = StringField(
        "Token name",
        validators=[DataRequired("Give the token a name."), Length(max=100)],
        description="What the token is for, e.g. “CI export” or “Zapier”.",
    )
    scopes = SelectMultipleField(
        "Scopes",
        choices=SCOPE_CHOICES,
        default=["read"],
        validators=[DataRequired("Choose at least one scope.")],
        widget=widgets.ListWidget(prefix_label=False),
        option_widget=widgets.CheckboxInput(),
    )


class NewPasswordForm(CSRFForm):
    """A new password, typed twice (its length rule is the service's, shown as a hint)."""

    new_password = PasswordField(
        "New password",
        validators=[DataRequired("Choose a new password."), Length(max=MAX_PASSWORD_LENGTH)],
        description=f"At least {MIN_PASSWORD_LENGTH} characters.",
    )
    confirm_password = PasswordField(
        "New password, again",
        validators=[
            DataRequired("Type the new password again."),
            EqualTo("new_password", "The two new passwords differ."),
        ],
    )


class PasswordForm(NewPasswordForm):
    current_password = PasswordField(
        "Current password",
        validators=[DataRequired("Enter your current password."), Length(max=MAX_PASSWORD_LENGTH)],
    )


PASSWORD_CHANGED = "Your password is changed. Every other session of yours is signed out."


async def account_context(form: TokenForm | None = None, **extra: Any) -> dict[str, Any]:
    """Everything the account page shows; used by the page and by its fragments."""
    agent = current_agent()
    settings = current_app.config["EARFUL"]
    return {
        "profile": agent,
        "avatar": avatar_url("", settings.secret_key, agent.email, agent.name),
        "form": form or TokenForm(),
        "tokens": await tokens_service.list_tokens(agent),
        "created_token": None,
        "raw_token": None,
        "error": None,
        "list_error": None,
        "password_form": PasswordForm(),
        "password_error": None,
        "password_notice": None,
        "min_password_length": MIN_PASSWORD_LENGTH,
        **extra,
    }


async def _render(fragment: str, status: int, **context: Any) -> tuple[str, int]:
    """The whole page, or only one of its fragments for htmx."""
    template = f"partials/account/{fragment}.html" if is_htmx() else "account/show.html"
    return await render_template(template, **context), status


@blueprint.get("/account")
@agent_required
async def show_account() -> str:
    """The profile, the password form and the personal access tokens of the signed-in agent."""
    notices = get_flashed_messages()
    context = await account_context(password_notice=notices[-1] if notices else None)
    return await render_template("account/show.html", **context)


@blueprint.post("/account/password")
@agent_required
async def change_password() -> ResponseReturnValue:
    """Change the password, given the current one; every other session of the agent ends, this
    one stays signed in (with the same CSRF token, so an open page keeps working)."""
    form = PasswordForm(await request.form)
    if not form.validate():
        return await _render("password", 422, **await account_context(password_form=form))
    try:
        agent = await passwords.change_password(
            current_agent(), form.current_password.data or "", form.new_password.data or "", client_address()
        )
    except DomainError as failure:
        context = await account_context(password_form=form, password_error=str(failure))
        return await _render("password", failure.status, **context)
    renew_session(agent)
    if is_htmx():
        return await _render("password", 200, **await account_context(password_notice=PASSWORD_CHANGED))
    await flash(PASSWORD_CHANGED)
    return redirect(url_for("views.account.show_account") + "#password", 303)


@blueprint.post("/account/tokens")
@agent_required
async def create_token() -> tuple[str, int]:
    """Create a token and show its secret in this response only (it is never stored)."""
    form = TokenForm(await request.form)
    if not form.validate():
        return await _render("tokens", 422, **await account_context(form))
    try:
        token, raw = await tokens_service.create_token(
            current_agent(), form.scopes.data or [], form.name.data or ""
        )
    except DomainError as failure:
        return await _render("tokens", failure.status, **await account_context(form, error=str(failure)))
    return await _render("tokens", 200, **await account_context(created_token=token, raw_token=raw))


@blueprint.post("/account/tokens/<id:token_id>/revoke")
@agent_required
async def revoke_token(token_id: int) -> ResponseReturnValue:
    """Revoke one of the agent's tokens; the API refuses it from now on."""
    try:
        await tokens_service.revoke_token(current_agent(), token_id)
    except NotFound as failure:
        context = await account_context(list_error=f"{failure}: it may already be revoked.")
        return await _render("token-list", 404, **context)
    if is_htmx():
        return await _render("token-list", 200, **await account_context())
    return redirect(url_for("views.account.show_account") + "#tokens", 303)
