"""What every request leaves behind: its metrics (app/metrics.py) and one log line.

The line holds the request's id, method, route (the URL rule, never the path: no query, no
id a client typed), status, duration, the client's address (as app/proxies.py reads it,
through the trusted proxies) and the signed-in user's id; never a header or a body. Answers of
``/healthz``, ``/readyz`` and ``/metrics`` below 400 are counted but not logged: load balancers
and Prometheus ask every few seconds.
"""

from __future__ import annotations

import logging
import time

from quart import Quart, Response, g, request

from app.config import Settings
from app.metrics import UNMATCHED, observe_request
from app.proxies import client_address

access_logger = logging.getLogger("earful.access")

QUIET_ROUTES = frozenset({"/healthz", "/readyz", "/metrics"})


def register_observation(app: Quart, settings: Settings) -> None:
    """Time every request from its first hook and observe it in its last (register it first)."""
    log_requests = settings.access_log

    @app.before_request
    async def start_clock() -> None:
        g.started = time.perf_counter()

    @app.after_request
    async def observe(response: Response) -> Response:
        started: float | None = g.get("started")
        if started is None:  # not through start_clock (a hook before it answered): not timed
            return response
        seconds = time.perf_counter() - started
        rule = request.url_rule
        route = rule.rule if rule is not None else UNMATCHED
        status = response.status_code
        observe_request(route, request.method, status, seconds)
        if log_requests and (status >= 400 or route not in QUIET_ROUTES):
            _log_request(route, status, seconds)
        return response


def _log_request(route: str, status: int, seconds: float) -> None:
    fields: dict[str, object] = {
        "method": request.method,
        "route": route,
        "status": status,
        "duration_ms": round(seconds * 1000, 2),
        "client": client_address(),
    }
    user = g.get("user") or g.get("agent")  # the API's token user, else the web app's agent
    if user is not None:
        fields["user_id"] = user.id
    access_logger.info("%s %s %d", request.method, route, status, extra=fields)
