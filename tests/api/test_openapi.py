"""GET /openapi.json: a valid OpenAPI 3.1 document that describes every route of the APIs."""

from __future__ import annotations

import re

from openapi_spec_validator import validate
from quart import Quart
from quart.typing import TestClientProtocol as Client

from app.config import Settings
from app.i18n import LANGUAGES, translate
from app.openapi import build_document

# Endpoints that are pages of the web app (not API operations) or the redirect of "/".
NOT_API = ("views.", "assets.", "docs.")
NOT_API_ENDPOINTS = {"root"}


def _documented_operations(document: dict) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in document["paths"].items() for method in item}


def _routed_operations(app: Quart) -> set[tuple[str, str]]:
    operations = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith(NOT_API) or rule.endpoint in NOT_API_ENDPOINTS:
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        operations |= {(method, path) for method in rule.methods or () if method not in ("HEAD", "OPTIONS")}
    return operations


async def test_document_is_served_without_authentication(client: Client):
    response = await client.get("/openapi.json")

    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert (await response.get_json())["openapi"] == "3.1.0"


async def test_document_validates_as_openapi_3_1(client: Client):
    document = await (await client.get("/openapi.json")).get_json()

    validate(document)


async def test_document_names_the_deployment_as_its_server(client: Client, settings: Settings):
    document = await (await client.get("/openapi.json")).get_json()

    assert document["servers"] == [{"url": settings.base_url}]


def test_every_api_route_is_documented_and_nothing_else(app: Quart):
    document = build_document("http://testserver")

    assert _documented_operations(document) == _routed_operations(app)


def test_operation_ids_are_unique():
    document = build_document("http://testserver")
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]

    assert len(ids) == len(set(ids))


def test_management_operations_require_the_bearer_token_with_their_scope():
    document = build_document("http://testserver")

    scopes = {
        (method, path): operation["security"]
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if "Management API" in operation["tags"]
    }

    assert scopes[("get", "/applications")] == [{"bearer": ["read"]}]
    thread = "/applications/{application_id}/feedback/{feedback_id}"
    assert scopes[("patch", thread)] == [{"bearer": ["write"]}]


def test_capture_errors_list_every_translation():
    document = build_document("http://testserver")
    submit = document["paths"]["/applications/{application_id}/submit"]["post"]

    bodies = submit["responses"][404]["content"]["text/plain"]["schema"]["enum"]

    assert set(bodies) == {translate("Application not found", language) for language in LANGUAGES}
    assert len(bodies) == 3


def test_thread_pages_document_the_seeds_500_body():
    document = build_document("http://testserver")
    patch = document["paths"]["/applications/{application_id}/feedback/{feedback_id}"]["patch"]

    assert patch["responses"][500]["content"]["text/plain"]["schema"]["enum"] == ["Could not update feedback"]
