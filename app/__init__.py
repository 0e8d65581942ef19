"""Earful: collect feedback from the users of an application, and answer it."""

from __future__ import annotations

import gc

from quart import Quart, Response, request
from quart.json.provider import DefaultJSONProvider

from app import links
from app.config import Settings, load_settings
from app.db import close_database, open_database
from app.failures import register_failure_handling
from app.metrics import process_stopped
from app.observation import register_observation
from app.routing import IdConverter
from app.services import deployment, live, sentiment, users
from app.services.capture_limits import CaptureLimiter


def tune_garbage_collection() -> None:
    """Keep what start-up created (modules, lexicons, templates) out of every collection.

    These objects live as long as the worker; frozen, the full collections that requests trigger
    no longer walk them, which shortens the pauses that make the slowest requests (measured in
    benchmarks/notes.md).
    """
    gc.freeze()


def create_app(settings: Settings | None = None, manage_db: bool = True) -> Quart:
    """Build the web app: both APIs, the file routes and their error handling.

    ``manage_db=False`` leaves the ORM to the caller (the tests open it per database).
    """
    from app.api import (
        bulk,
        capture,
        document,
        export,
        files,
        inbound,
        invitations,
        management,
        notification_settings,
        privacy,
        saved_replies,
        spam,
        threads,
        webhooks,
        widget,
    )
    from app.api.operations import blueprint as operations_blueprint
    from app.api.operations import guard_metrics_listener
    from app.views import register_views
    from app.views.rendering import keep_context_processors_on_the_loop
    from app.workers import start_background_workers

    config = settings or load_settings()
    app = Quart(__name__, static_folder=None)
    # Bodies keep the field order the serializers write (the specification's), and sorting every
    # object's keys was a large share of encoding a list.
    assert isinstance(app.json, DefaultJSONProvider)
    app.json.sort_keys = False
    app.config["EARFUL"] = config
    app.extensions["earful_capture_limiter"] = CaptureLimiter.from_settings(config)
    app.config["MAX_CONTENT_LENGTH"] = config.max_request_bytes
    app.secret_key = config.secret_key
    app.url_map.converters["id"] = IdConverter
    for module in (
        management,
        threads,
        export,
        capture,
        files,
        widget,
        inbound,
        document,
        spam,
        privacy,
        webhooks,
        notification_settings,
        invitations,
        bulk,
        saved_replies,
    ):
        app.register_blueprint(module.blueprint)
    app.register_blueprint(operations_blueprint)
    register_observation(app, config)  # first: its clock starts before any other hook
    register_failure_handling(app)
    guard_metrics_listener(app, config)
    register_views(app, config)
    keep_context_processors_on_the_loop(app)  # every blueprint is registered by now
    links.use_routes(app.url_map)
    deployment.use_settings(config)
    start_background_workers(app, config)

    @app.before_request
    async def refuse_unsized_bodies() -> Response | None:
        """Size limits only hold for bodies with a Content-Length (stack notes §8)."""
        if request.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return Response("Length required", status=411, mimetype="text/plain")
        return None

    @app.after_request
    async def private_by_default(response: Response) -> Response:
        """Answers carry tenants' data: no cache keeps them unless the route says otherwise
        (static files, avatars, attachments and the widget say so themselves), and no browser
        guesses another type than the one declared."""
        response.headers.setdefault("Cache-Control", "no-store")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    @app.before_serving
    async def start() -> None:
        if manage_db:
            await open_database(config.database_url)
        await live.start()
        sentiment.warm_up()
        users.warm_up()
        tune_garbage_collection()

    @app.after_serving
    async def stop() -> None:
        await live.stop()  # ends the pages' event streams: they reconnect to another worker
        await app.extensions["earful_capture_limiter"].close()
        if manage_db:
            await close_database()
        process_stopped()

    return app
