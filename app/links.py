"""Paths of the routes that the APIs, the pages and the webhook events link to: a thread's
permalink, an attachment's capability path, an application's logo. The APIs and the events put
``EARFUL_BASE_URL`` before them; the pages use them as they are.

They are built from the app's own routes (werkzeug's URL map, bound by :func:`use_routes` when
the app is created), so they need no request: an event written by a background worker, the
SMTP receiver or a command carries the same links as an API answer.
"""

from __future__ import annotations

import functools

from werkzeug.routing import Map, MapAdapter

from app.repositories.applications import ApplicationRow
from app.repositories.attachments import AttachmentRow

_routes: dict[str, MapAdapter] = {}


def use_routes(url_map: Map) -> None:
    """Build links from these routes (``create_app`` calls it; every app has the same routes)."""
    _routes["adapter"] = url_map.bind("localhost")  # a path never carries the host
    _threads_path.cache_clear()


def _path(endpoint: str, **values: object) -> str:
    adapter = _routes.get("adapter")
    if adapter is None:
        raise RuntimeError("app.links builds paths from the app's routes: call create_app() first")
    return adapter.build(endpoint, values)


def attachment_path(attachment: AttachmentRow) -> str:
    """The capability path of an attachment (the token in it is the permission to read it)."""
    return _path(
        "files.attachment", attachment_id=attachment.id, token=attachment.token, name=attachment.name
    )


def logo_path(application: ApplicationRow) -> str | None:
    """The path of the application's logo, if it has one."""
    if not application.logo_name:
        return None
    return _path("files.logo", application_id=application.id, name=application.logo_name)


def unsubscribe_path(user_id: int, application_id: int, signature: str) -> str:
    """The page where an agent turns an application's e-mails off (the signature is the permission)."""
    return _path(
        "views.notifications.unsubscribe", user_id=user_id, application_id=application_id, signature=signature
    )


def thread_path(application_id: int, feedback_id: int) -> str:
    """The thread's page in the agent web app (its permalink)."""
    return f"{_threads_path(application_id)}/{feedback_id}"


@functools.lru_cache(maxsize=4096)
def _threads_path(application_id: int) -> str:
    """The path of an application's thread pages without the thread's id, their last segment:
    built from the routes once per application, not once for each of a list's fifty permalinks
    (building a path from werkzeug's map took 3 % of the feedback list's CPU)."""
    return _path("views.threads.show_thread", application_id=application_id, feedback_id=0).rpartition("/")[0]


def invitation_path(token: str) -> str:
    """The page where an invitation to an organization is accepted (the token is the permission)."""
    return _path("views.invitations.show_invitation", token=token)
