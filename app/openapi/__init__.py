"""The OpenAPI 3.1 description of both APIs, served at ``GET /openapi.json`` and shown at ``/docs``.

It is kept beside the code rather than generated from decorators: the handlers parse their own
input to answer with the seed's exact texts, so a schema library would only have documented
them, at the cost of wrapping every response (quart-schema replaces the app's JSON provider and
``make_response``). Three checks keep it true instead:

- ``tests/api/test_openapi.py``: the document is valid OpenAPI 3.1, and its operations are
  exactly the routes of the API blueprints (a route added without a description fails);
- ``tests/api/test_openapi_conformance.py``: the API tests' own answers match it (status,
  content type, JSON schema, the exact text of fixed error bodies);
- schemathesis in CI (``make fuzz``), against a live server on both databases.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from app.openapi.bulk import bulk_paths
from app.openapi.capture import capture_paths, other_paths
from app.openapi.deletion import deletion_paths
from app.openapi.invitations import invitation_paths
from app.openapi.management import management_paths
from app.openapi.notifications import notification_paths
from app.openapi.operations import operations_paths
from app.openapi.privacy import privacy_paths
from app.openapi.responses import BODY_TOO_LARGE, LENGTH_REQUIRED
from app.openapi.saved_replies import saved_reply_paths
from app.openapi.schemas import COMPONENTS
from app.openapi.spam import spam_paths
from app.openapi.webhooks import webhook_paths

VERSION = "1.0.0"
DESCRIPTION = """\
Earful collects feedback from the users of an application and lets a team answer it.

- **Management API**: bearer token (`Authorization: Bearer <token>`, created on the account page
  or with `earful token create`) with the scopes `read` and `write`. Successes are JSON,
  `{"data": ...}`; lists that page add `pagination`.
- **Capture API**: for feedback widgets; the application key goes in the `key` query parameter.

Errors are `text/plain` bodies. Every answer carries `X-Request-Id` (quote it when reporting a
failure). Any address also answers `404 Not Found` for an unknown path, `405 Method Not Allowed`
(with `Allow`) for a wrong method, `411 Length required` for a chunked body and `500 Internal
Server Error` for a failure on the server. Timestamps are integer seconds since the Unix epoch.
"""


def build_document(base_url: str) -> dict[str, Any]:
    """The document for a deployment reachable at ``base_url``."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Earful API",
            "version": VERSION,
            "description": DESCRIPTION,
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": base_url}],
        "tags": [
            {"name": "Management API", "description": "Applications, threads, replies and tags, as a user."},
            {
                "name": "Webhooks",
                "description": "Endpoints that receive an application's or an organization's events, "
                "signed by the Standard Webhooks scheme, and their delivery log (bearer token).",
            },
            {
                "name": "Saved replies",
                "description": "Answers agents insert into the reply box, kept per application or per "
                "organization, with placeholders filled for a thread (bearer token).",
            },
            {"name": "Capture API", "description": "What a feedback widget posts."},
            {"name": "Widget", "description": "The embeddable widget."},
            {"name": "E-mail intake", "description": "Mail from the deployment's mail server."},
            {"name": "Files", "description": "Avatars, attachments and logos."},
            {"name": "Document", "description": "This description."},
            {"name": "Operations", "description": "Health, readiness and metrics."},
        ],
        "paths": _with_body_limits(
            _merged(
                management_paths(),
                capture_paths(),
                other_paths(),
                _document_paths(),
                deletion_paths(),
                spam_paths(),
                privacy_paths(),
                webhook_paths(),
                notification_paths(),
                operations_paths(),
                invitation_paths(),
                bulk_paths(),
                saved_reply_paths(),
            )
        ),
        "components": {
            "schemas": COMPONENTS,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A personal access token with the scopes `read` and/or `write`.",
                },
                "captureKey": {
                    "type": "apiKey",
                    "in": "query",
                    "name": "key",
                    "description": "One of the application's platform keys.",
                },
                "inboundSecret": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The deployment's `EARFUL_INBOUND_SECRET`.",
                },
                "metricsToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The deployment's `EARFUL_METRICS_TOKEN`.",
                },
            },
        },
    }


def _merged(*groups: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Path items of several modules, one per path: a module may add a method to a path another
    describes (``DELETE /applications/{application_id}`` beside its ``GET``)."""
    paths: dict[str, dict[str, Any]] = {}
    for group in groups:
        for path, item in group.items():
            clash = set(paths.get(path, {})) & set(item)
            assert not clash, f"{path} described twice: {sorted(clash)}"
            paths.setdefault(path, {}).update(item)
    return paths


def _with_body_limits(paths: dict[str, Any]) -> dict[str, Any]:
    """Every operation that takes a body may answer 411 (a chunked body, whose size is unknown
    until read) and 413 (over the size limit), before its own rules run."""
    for item in paths.values():
        for operation in item.values():
            if "requestBody" in operation:
                operation["responses"].setdefault(411, LENGTH_REQUIRED)
                operation["responses"].setdefault(413, BODY_TOO_LARGE)
    return paths


def _document_paths() -> dict[str, Any]:
    return {
        "/openapi.json": {
            "get": {
                "operationId": "getOpenApiDocument",
                "summary": "This document",
                "tags": ["Document"],
                "security": [],
                "responses": {
                    200: {
                        "description": "OpenAPI 3.1.",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        }
    }


@cache
def document_json(base_url: str) -> bytes:
    """The document as served: built once per process and base URL."""
    return json.dumps(build_document(base_url), ensure_ascii=False, indent=1).encode()
