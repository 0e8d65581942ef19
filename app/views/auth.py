"""Signing in and out of the web app."""

from __future__ import annotations

from urllib.parse import urlsplit

from quart import Blueprint, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import BooleanField, EmailField, PasswordField
from wtforms.validators import DataRequired, Length

from app.errors import DomainError
from app.proxies import client_address
from app.services.signin import TooManyAttempts, end_sessions
from app.services.signin import sign_in as sign_in_service
from app.services.users import MAX_PASSWORD_LENGTH
from app.views.rendering import render_template
from app.views.security import (
    CSRFForm,
    agent_required,
    current_agent,
    end_session,
    load_agent,
    sign_in_session,
)

blueprint = Blueprint("auth", __name__)


class SignInForm(CSRFForm):
    email = EmailField("E-mail", validators=[DataRequired(), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=MAX_PASSWORD_LENGTH)])
    remember = BooleanField("Keep me signed in for 14 days")


def _safe_next(target: str | None) -> str:
    """Only local paths of the web app are followed after sign-in, and only printable ones: a
    control character would end up in the Location header."""
    if (
        target
        and target.startswith("/app")
        and target.isprintable()
        and " " not in target
        and "\\" not in target
        and not urlsplit(target).netloc
    ):
        return target
    return url_for("views.home")


@blueprint.route("/login", methods=["GET", "POST"])
async def sign_in() -> ResponseReturnValue:
    if request.method == "GET" and await load_agent() is not None:
        return redirect(_safe_next(request.args.get("next")))
    form = SignInForm(await request.form if request.method == "POST" else None)
    error, status = None, 200
    if request.method == "POST" and form.validate():
        try:
            user = await sign_in_service(form.email.data or "", form.password.data or "", client_address())
        except TooManyAttempts as refused:
            page = await render_template("auth/login.html", form=form, error=str(refused))
            return page, 429, {"Retry-After": str(refused.retry_after)}
        except DomainError as failure:
            error, status = str(failure), failure.status
        else:
            sign_in_session(user, remember=bool(form.remember.data))
            return redirect(_safe_next(request.args.get("next")))
    elif request.method == "POST":
        error, status = "Enter your e-mail address and password.", 400
    return await render_template("auth/login.html", form=form, error=error), status


@blueprint.post("/logout")
@agent_required
async def sign_out() -> ResponseReturnValue:
    await end_sessions(current_agent())
    end_session()
    return redirect(url_for("views.auth.sign_in"))
