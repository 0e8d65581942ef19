"""What operators and load balancers call: ``/healthz`` (the process answers), ``/readyz`` (it can
serve: its dependencies answer) and ``/metrics`` (Prometheus).

``/metrics`` needs ``Authorization: Bearer <EARFUL_METRICS_TOKEN>`` (404 while no token is set,
so a deployment that does not use it shows nothing), except on the listener of
``EARFUL_METRICS_BIND``: ``earful serve`` binds that address beside the main one, and a request
that arrives there may read ``/metrics``, ``/healthz`` and ``/readyz`` without a token, and
nothing else (404).
"""

from __future__ import annotations

import hmac
import logging
from datetime import UTC, datetime

from quart import Blueprint, Quart, Response, current_app, request

from app.api.common import settings, text_response
from app.config import Settings
from app.metrics import CONTENT_TYPE, exposition
from app.services.monitoring import failed_checks, queue_states, readiness_checks

logger = logging.getLogger(__name__)

blueprint = Blueprint("operations", __name__)

# What the metrics listener serves; any other address there is 404.
ON_METRICS_LISTENER = frozenset({"operations.metrics", "operations.alive", "operations.ready"})


@blueprint.get("/healthz")
async def alive() -> Response:
    """The process answers (no dependency is asked)."""
    return text_response("ok")


@blueprint.get("/readyz")
async def ready() -> Response:
    """The database answers and has every migration, and Redis answers when configured."""
    checks = readiness_checks(settings(), current_app.extensions["earful_capture_limiter"])
    failures = await failed_checks(checks)
    if failures:
        return text_response("\n".join(failures), 503)
    return text_response("ok")


@blueprint.get("/metrics")
async def metrics() -> Response:
    """Prometheus's text format: requests, latencies, submits, delivery failures and queues."""
    if not on_metrics_listener(settings()):
        token = settings().metrics_token
        if not token:
            return text_response("Not Found", 404)
        kind, _, given = request.headers.get("Authorization", "").partition(" ")
        if kind.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            return text_response("Unauthenticated", 401, {"WWW-Authenticate": "Bearer"})
    try:
        queues = [
            (state.name, state.pending, state.sending, state.oldest_seconds)
            for state in await queue_states(datetime.now(UTC))
        ]
    except Exception:  # the database is away: the counters are still worth reading
        logger.warning("metrics: the queues could not be read", exc_info=True)
        queues = []
    return Response(exposition(queues), content_type=CONTENT_TYPE)


def on_metrics_listener(config: Settings) -> bool:
    """Whether the request came in on the EARFUL_METRICS_BIND listener (by its local port)."""
    server = request.scope.get("server")
    return (
        config.metrics_bind is not None
        and server is not None
        and len(server) > 1
        and server[1] == config.metrics_bind[1]
    )


def guard_metrics_listener(app: Quart, config: Settings) -> None:
    """Let the metrics listener answer its three addresses only."""
    if config.metrics_bind is None:
        return

    @app.before_request
    async def only_metrics_there() -> Response | None:
        if on_metrics_listener(config) and request.endpoint not in ON_METRICS_LISTENER:
            return text_response("Not Found", 404)
        return None
