"""How the app answers what goes wrong, and the request id that ties an answer to its log line.

- A :class:`~app.errors.DomainError` is a rule that refused the request: its status and text.
- An HTTP error of the routing (unknown path, wrong method, body too large): its status and name.
- Anything else is a bug or an outage: the traceback is logged with the request's id, and the
  client gets the documented 500 body (the seed's ``Could not update feedback`` for a thread's
  PATCH, else ``Internal Server Error``; the web app's page for its own addresses) with the id
  in ``X-Request-Id``, to quote when reporting it.

Every answer carries ``X-Request-Id``: the one a reverse proxy sent (when it is a plain token of
at most 64 characters), else a new one. The id is also the log's (``app.logs.current_id``): every
line logged while the request runs carries it, tracebacks included.
"""

from __future__ import annotations

import logging
import re

from quart import Quart, Response, g, request
from werkzeug.exceptions import HTTPException

from app.errors import DomainError
from app.logs import current_id, new_id

logger = logging.getLogger("earful.requests")

REQUEST_ID_HEADER = "X-Request-Id"
_SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
# The specification's own bodies for a failure of these routes.
SERVER_ERROR_BODIES = {"threads.update_feedback": "Could not update feedback"}
SERVER_ERROR_BODY = "Internal Server Error"


def request_id() -> str:
    """The id of the current request."""
    return str(g.get("request_id", ""))


def register_failure_handling(app: Quart) -> None:
    """Give every request an id and every failure its answer (see the module)."""

    @app.before_request
    async def name_the_request() -> None:
        given = request.headers.get(REQUEST_ID_HEADER, "")
        g.request_id = given if _SAFE_REQUEST_ID.fullmatch(given) else new_id()
        current_id.set(g.request_id)

    @app.after_request
    async def tell_the_request_id(response: Response) -> Response:
        if "request_id" in g:
            response.headers[REQUEST_ID_HEADER] = g.request_id
        return response

    @app.errorhandler(DomainError)
    async def domain_error(error: DomainError) -> Response:
        return Response(str(error), status=error.status, mimetype="text/plain")

    @app.errorhandler(HTTPException)
    async def http_error(error: HTTPException) -> Response:
        response = Response(error.name, status=error.code or 500, mimetype="text/plain")
        allowed = getattr(error, "valid_methods", None)  # MethodNotAllowed's
        if error.code == 405 and allowed:
            response.headers["Allow"] = ", ".join(allowed)
        return response

    @app.errorhandler(Exception)
    async def unexpected_error(error: Exception) -> Response | tuple[str, int]:
        # The route's rule, not the path: a path may hold what a client typed.
        route = request.url_rule.rule if request.url_rule is not None else "unmatched"
        logger.error("request %s failed: %s %s", request_id(), request.method, route, exc_info=error)
        if request.blueprint and request.blueprint.startswith("views"):
            from app.views.rendering import render_template

            page = await render_template("errors/server-error.html", request_id=request_id())
            return page, 500
        body = SERVER_ERROR_BODIES.get(request.endpoint or "", SERVER_ERROR_BODY)
        return Response(body, status=500, mimetype="text/plain")
