"""Checks an answer of the app against the OpenAPI document: the test suite as a contract test.

Schemathesis (CI) sends generated requests; this checks the answers to the requests the suite
writes by hand, which reach the states a generator rarely does (a thread with replies, a plan
without notes, a full upload). It also checks what schemathesis cannot: the exact text of
plain-text bodies that the document lists.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from quart.testing import QuartClient
from werkzeug.datastructures import Headers

from app.openapi import build_document

BASE_URL = "http://testserver"
# Answers any address may give, described once in the document's introduction.
GENERIC_STATUSES = {405, 411, 413, 500}


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    responses: dict[str, Any]


@cache
def _document() -> dict[str, Any]:
    # Through JSON, as clients read it: status keys become strings.
    document: dict[str, Any] = json.loads(json.dumps(build_document(BASE_URL)))
    return document


@cache
def _routes() -> tuple[tuple[re.Pattern[str], str], ...]:
    routes = []
    for template in _document()["paths"]:
        # A parameter is one path segment, except a file name at the end (it may hold slashes).
        pattern = re.sub(r"\{(\w+)\}", lambda m: ".+" if m.group(1) == "name" else "[^/]+", template)
        routes.append((re.compile(f"^{pattern}$"), template))
    # Literal segments win over parameters, as in the router.
    routes.sort(key=lambda route: route[1].count("{"))
    return tuple(routes)


def find_operation(method: str, path: str) -> Operation | None:
    for pattern, template in _routes():
        if pattern.match(path):
            item = _document()["paths"][template].get(method.lower())
            return None if item is None else Operation(method, template, item["responses"])
    return None


@cache
def _validator(template: str, method: str, status: str, media: str) -> Draft202012Validator:
    document = _document()
    schema = document["paths"][template][method.lower()]["responses"][status]["content"][media]["schema"]
    # The components ride along, so that "#/components/..." resolves inside the schema itself.
    return Draft202012Validator({**schema, "components": document["components"]})


def _media(declared: dict[str, Any], mimetype: str) -> str | None:
    for media in declared:
        kind, _, sub = media.partition("/")
        if media == mimetype or media == "*/*" or (sub == "*" and mimetype.startswith(kind + "/")):
            return media
    return None


@dataclass
class Violations:
    found: list[str] = field(default_factory=list)

    def check(self, method: str, path: str, status: int, headers: Headers, body: bytes) -> None:
        operation = find_operation(method, path.split("?", 1)[0])
        if operation is None:
            return
        where = f"{method} {path} -> {status}"
        response = operation.responses.get(str(status))
        if response is None:
            if status not in GENERIC_STATUSES:
                self.found.append(f"{where}: status not documented for {operation.template}")
            return
        for name, header in response.get("headers", {}).items():
            if header.get("required") and name not in headers:
                self.found.append(f"{where}: header {name} missing")
        declared = response.get("content")
        if not declared:
            return
        mimetype = (headers.get("Content-Type") or "").split(";")[0].strip()
        media = _media(declared, mimetype)
        if media is None:
            self.found.append(f"{where}: content type {mimetype!r} not in {sorted(declared)}")
            return
        if media == "application/json":
            errors = list(
                _validator(operation.template, method, str(status), media).iter_errors(json.loads(body))
            )
            self.found += [f"{where}: {error.json_path}: {error.message[:300]}" for error in errors[:3]]
        elif media == "text/plain":
            allowed = declared[media]["schema"].get("enum")
            text = body.decode()
            if allowed is not None and text not in allowed:
                self.found.append(f"{where}: body {text!r} not in {allowed}")


class CheckedClient(QuartClient):
    """The app's test client, checking every answer of a documented address as it comes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.violations = Violations()

    async def open(self, path: str, *args: Any, **kwargs: Any) -> Any:
        response = await super().open(path, *args, **kwargs)
        if not getattr(response, "is_streamed", False):
            body = await response.get_data(as_text=False)
            self.violations.check(
                kwargs.get("method", "GET"), path, response.status_code, response.headers, body
            )
        return response
