"""The README's table of errors, written from the document so that the two never disagree.

``python -m app.openapi.tables`` prints it; ``tests/test_readme.py`` checks that the README holds
exactly this table.
"""

from __future__ import annotations

from typing import Any

from app.openapi import build_document
from app.openapi.responses import BODY_TOO_LARGE, INSUFFICIENT_SCOPE, LENGTH_REQUIRED, UNAUTHENTICATED

# Answers of many operations, listed once at the top of the table.
COMMON = (
    ("Every management API operation", 401, UNAUTHENTICATED),
    ("Every management API operation", 403, INSUFFICIENT_SCOPE),
    ("Every operation that takes a body", 411, LENGTH_REQUIRED),
    ("Every operation that takes a body", 413, BODY_TOO_LARGE),
)


def _bodies(response: dict[str, Any]) -> str:
    """The bodies in English (the capture API's come in the submitted language)."""
    schema = response.get("content", {}).get("text/plain", {}).get("schema", {})
    listed = schema.get("x-english") or schema.get("enum") or schema.get("examples") or []
    shown = ", ".join(f"`{body}`" for body in listed[:4])
    return shown if "enum" in schema else f"e.g. {shown}" if shown else ""


def errors_table(document: dict[str, Any] | None = None) -> str:
    """Markdown: the errors any operation can answer, then each operation's own, with body and cause."""
    document = document or build_document("http://127.0.0.1:8000")
    lines = ["| Operation | Status | Body | When |", "|---|---|---|---|"]
    for who, status, response in COMMON:
        lines.append(f"| {who} | {status} | {_bodies(response)} | {response['description']} |")
    shared = [response for _, _, response in COMMON]
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status, response in sorted(operation["responses"].items(), key=lambda pair: int(pair[0])):
                if int(status) < 400 or response in shared:
                    continue
                when = response["description"].replace("|", "\\|")
                lines.append(f"| {method.upper()} `{path}` | {status} | {_bodies(response)} | {when} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(errors_table(), end="")
