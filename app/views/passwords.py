"""Resetting a forgotten password with a link sent by e-mail.

Only while e-mail goes out (``EARFUL_SMTP_URL`` is set); otherwise the sign-in page offers no
reset and these pages answer 404. Whatever address is asked for, the answer is the same
redirect to the same page, at once: the e-mail (if the address has an account) is sent by a
background task of the app, so the answer does not wait for the relay and its timing does not
tell whether the account exists. The link and its rules are :mod:`app.services.passwords`.
"""

from __future__ import annotations

from quart import Blueprint, current_app, flash, get_flashed_messages, redirect, request, url_for
from quart.typing import ResponseReturnValue
from wtforms import EmailField
from wtforms.validators import DataRequired, Length

from app.config import Settings
from app.errors import DomainError, NotFound
from app.services import passwords
from app.services.users import MIN_PASSWORD_LENGTH
from app.views.account import NewPasswordForm
from app.views.rendering import render_template
from app.views.security import CSRFForm, sign_in_session

blueprint = Blueprint("passwords", __name__)

LINK_SENT = (
    "If an account exists for that address, we sent it a link to choose a new password. "
    "The link works once, within an hour."
)


class ForgotPasswordForm(CSRFForm):
    email = EmailField("E-mail", validators=[DataRequired("Enter your e-mail address."), Length(max=254)])


def _mail_settings() -> Settings:
    """The settings, when e-mail goes out; else the pages do not exist."""
    settings: Settings = current_app.config["EARFUL"]
    if not settings.smtp_url:
        raise NotFound("Not Found")
    return settings


@blueprint.route("/password/forgot", methods=["GET", "POST"])
async def forgot_password() -> ResponseReturnValue:
    """Ask for a reset link by e-mail address; the same answer whether the address has an account."""
    settings = _mail_settings()
    if request.method == "GET":
        notices = get_flashed_messages(category_filter=["password-reset"])
        form = ForgotPasswordForm()
        return await render_template(
            "auth/forgot.html", form=form, sent=notices[-1] if notices else None
        ), 200
    form = ForgotPasswordForm(await request.form)
    if not form.validate():
        return await render_template("auth/forgot.html", form=form, sent=None), 422
    link_prefix = settings.base_url + url_for("views.passwords.reset_password", token="")
    current_app.add_background_task(passwords.send_reset_link, form.email.data or "", settings, link_prefix)
    await flash(LINK_SENT, "password-reset")
    return redirect(url_for("views.passwords.forgot_password"), 303)


@blueprint.route("/password/reset/<token>", methods=["GET", "POST"])
async def reset_password(token: str) -> ResponseReturnValue:
    """Choose a new password through a reset link; then every session ends and this one starts."""
    settings = _mail_settings()
    try:
        user = await passwords.user_of_reset_token(token, settings.secret_key)
    except DomainError as failure:
        return await render_template("auth/reset.html", form=None, error=str(failure)), failure.status
    form = NewPasswordForm(await request.form if request.method == "POST" else None)
    page = {"form": form, "email": user.email, "min_password_length": MIN_PASSWORD_LENGTH, "error": None}
    if request.method == "GET":
        return await render_template("auth/reset.html", **page), 200
    if not form.validate():
        return await render_template("auth/reset.html", **page), 422
    try:
        user = await passwords.reset_password(token, form.new_password.data or "", settings.secret_key)
    except DomainError as failure:
        page["error"] = str(failure)
        if isinstance(failure, passwords.InvalidResetLink):
            page["form"] = None
        return await render_template("auth/reset.html", **page), failure.status
    sign_in_session(user, remember=False)
    return redirect(url_for("views.home"), 303)
