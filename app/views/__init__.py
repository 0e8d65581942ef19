"""The agent web app: server-rendered pages under ``/app``, with htmx for partial updates.

Views parse input, call the services and render templates; they hold no rules of their own.
"""

from __future__ import annotations

from types import ModuleType

from quart import Blueprint, Quart, Response, redirect, request, url_for
from quart.typing import ResponseReturnValue
from werkzeug.exceptions import NotFound as RouteNotFound

from app.config import Settings
from app.errors import NotFound
from app.views import docs
from app.views.addresses import address
from app.views.assets import Assets, build_blueprint
from app.views.rendering import mailto_url, render_template
from app.views.security import (
    SESSION_LIFETIME,
    UNSAFE_METHODS,
    SessionAuth,
    SessionCookies,
    check_csrf,
    csrf_token,
    harden,
    load_agent,
)

PREFIX = "/app"
# Routes whose address is their own permission (a signed link), posted by mail clients too.
CSRF_EXEMPT = frozenset({"views.notifications.unsubscribe"})


def register_views(app: Quart, settings: Settings) -> None:
    """Mount the web app, its static files and its security rules on ``app``."""
    from app.views import auth

    app.config.update(
        QUART_AUTH_COOKIE_SECURE=settings.is_secure,
        QUART_AUTH_COOKIE_SAMESITE="Lax",
        QUART_AUTH_DURATION=int(SESSION_LIFETIME.total_seconds()),
        SESSION_COOKIE_SECURE=settings.is_secure,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        PERMANENT_SESSION_LIFETIME=SESSION_LIFETIME,
        # The session cookie changes when its last activity does (at most once a minute); a
        # remembered (permanent) one is not rewritten on every request besides.
        SESSION_REFRESH_EACH_REQUEST=False,
    )
    app.session_interface = SessionCookies()
    SessionAuth(app)
    app.add_template_filter(mailto_url, "mailto")
    assets = Assets()
    app.register_blueprint(build_blueprint(assets))

    views = Blueprint("views", __name__, url_prefix=PREFIX)
    for module in (auth, *_page_modules()):
        views.register_blueprint(module.blueprint)

    @views.get("/")
    async def home() -> ResponseReturnValue:
        return redirect(url_for("views.applications.list_applications"))

    @views.before_request
    async def require_csrf_token() -> Response | None:
        if request.endpoint in CSRF_EXEMPT:
            return None
        if request.method in UNSAFE_METHODS and not await check_csrf():
            return Response(
                "The form has expired. Reload the page and try again.", 400, mimetype="text/plain"
            )
        return None

    @views.errorhandler(NotFound)
    async def not_found_page(error: NotFound) -> tuple[str, int]:
        """Anything the agent may not see looks exactly like something that does not exist."""
        return await render_template("errors/not-found.html", message=str(error)), 404

    @app.errorhandler(RouteNotFound)
    async def unknown_address(error: RouteNotFound) -> ResponseReturnValue:
        """An address under the web app that no page has (an id out of range included) gets the
        web app's page; elsewhere the APIs' plain-text answer."""
        if request.path == PREFIX or request.path.startswith(PREFIX + "/"):
            return await render_template("errors/not-found.html", message="Not found"), 404
        return Response(error.name, status=404, mimetype="text/plain")

    @views.after_request
    async def harden_page(response: Response) -> Response:
        return harden(response, settings.is_secure)

    app.register_blueprint(views)
    app.register_blueprint(docs.build_blueprint(settings))

    @app.context_processor
    async def page_globals() -> dict[str, object]:
        return {
            "asset": assets.url,
            "address": address,
            "csrf_token": csrf_token,
            "agent": await load_agent()
            if request.blueprint and request.blueprint.startswith("views")
            else None,
            "settings": settings,
        }

    @app.get("/")
    async def root() -> ResponseReturnValue:
        return redirect(url_for("views.home"))


def _page_modules() -> tuple[ModuleType, ...]:
    """The page blueprints of the web app, besides sign-in."""
    from app.views import (
        account,
        applications,
        demo,
        inbox,
        invitations,
        live,
        notifications,
        organizations,
        passwords,
        privacy,
        retention,
        saved_replies,
        spam,
        stats,
        tags,
        threads,
        webhooks,
    )

    return (
        *(applications, inbox, threads, account, passwords, organizations, stats, demo, tags, spam),
        retention,
        privacy,
        notifications,
        webhooks,
        invitations,
        saved_replies,
        live,
    )
