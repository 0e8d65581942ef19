"""The agent's account: profile and personal access tokens of the management API."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, current_app, redirect, request, url_for
from wtforms import SelectChoice, SelectMultipleField, StringField, widgets
from wtforms.validators import DataRequired, Length

from app.errors import DomainError, NotFound
from app.services import tokens as tokens_service
from app.services.avatars import avatar_url
from app.views.rendering import render_template
from app.views.security import CSRFForm, agent_required, current_agent

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


def _is_htmx() -> bool:
    return bool(request.headers.get("HX-Request"))


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
        **extra,
    }


async def _render(fragment: str, status: int, **context: Any) -> tuple[str, int]:
    """The whole page, or only one of its fragments for htmx."""
    template = f"partials/account/{fragment}.html" if _is_htmx() else "account/show.html"
    return await render_template(template, **context), status


@blueprint.get("/account")
@agent_required
async def show_account() -> str:
    """The profile and the personal access tokens of the signed-in agent."""
    return await render_template("account/show.html", **await account_context())


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


@blueprint.post("/account/tokens/<int:token_id>/revoke")
@agent_required
async def revoke_token(token_id: int) -> Response | tuple[str, int]:
    """Revoke one of the agent's tokens; the API refuses it from now on."""
    try:
        await tokens_service.revoke_token(current_agent(), token_id)
    except NotFound as failure:
        context = await account_context(list_error=f"{failure}: it may already be revoked.")
        return await _render("token-list", 404, **context)
    if _is_htmx():
        return await _render("token-list", 200, **await account_context())
    return redirect(url_for("views.account.show_account") + "#tokens", 303)
