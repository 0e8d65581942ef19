"""Signing in and out of the web app."""

from __future__ import annotations

from urllib.parse import urlsplit

from quart import Blueprint, Response, redirect, request, url_for
from quart_auth import logout_user
from wtforms import BooleanField, EmailField, PasswordField
from wtforms.validators import DataRequired, Length

from app.errors import DomainError
from app.services.signin import end_sessions
from app.services.signin import sign_in as sign_in_service
from app.views.rendering import render_template
from app.views.security import CSRFForm, agent_required, current_agent, load_agent, sign_in_session

blueprint = Blueprint("auth", __name__)


class SignInForm(CSRFForm):
    email = EmailField("E-mail", validators=[DataRequired(), Length(max=254)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=1000)])
    remember = BooleanField("Keep me signed in for 14 days")


def _safe_next(target: str | None) -> str:
    """Only local paths of the web app are followed after sign-in."""
    if target and target.startswith("/app") and not urlsplit(target).netloc and "\\" not in target:
        return target
    return url_for("views.home")


@blueprint.route("/login", methods=["GET", "POST"])
async def sign_in() -> Response | str:
    if request.method == "GET" and await load_agent() is not None:
        return redirect(_safe_next(request.args.get("next")))
    form = SignInForm(await request.form if request.method == "POST" else None)
    error, status = None, 200
    if request.method == "POST" and form.validate():
        try:
            user = await sign_in_service(
                form.email.data or "", form.password.data or "", request.remote_addr or ""
            )
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
async def sign_out() -> Response:
    await end_sessions(current_agent())
    logout_user()
    return redirect(url_for("views.auth.sign_in"))
