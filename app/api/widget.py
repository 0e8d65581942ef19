"""The embeddable feedback widget's script, served at /widget.js.

Its address is pasted into customers' pages, so it cannot carry a content hash: it is cached for a
few minutes and revalidated with an ETag. Any site may load it (``Access-Control-Allow-Origin: *``,
``Cross-Origin-Resource-Policy: cross-origin``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from quart import Blueprint, Response, request

blueprint = Blueprint("widget", __name__)

SCRIPT = Path(__file__).resolve().parent.parent / "static" / "widget" / "widget.js"
MAX_AGE = 300

_cache: dict[int, tuple[bytes, str]] = {}


def _script() -> tuple[bytes, str]:
    """The script's bytes and ETag, read again only when the file changed (by its mtime)."""
    mtime = SCRIPT.stat().st_mtime_ns
    if mtime not in _cache:
        content = SCRIPT.read_bytes()
        _cache.clear()
        _cache[mtime] = (content, hashlib.sha256(content).hexdigest()[:20])
    return _cache[mtime]


@blueprint.get("/widget.js")
async def widget_js() -> Response:
    content, etag = _script()
    headers = {
        "Access-Control-Allow-Origin": "*",
        "Cross-Origin-Resource-Policy": "cross-origin",
        "Cache-Control": f"public, max-age={MAX_AGE}",
        "X-Content-Type-Options": "nosniff",
        "ETag": f'"{etag}"',
    }
    if request.if_none_match.contains(etag):
        return Response(b"", status=304, headers=headers)
    return Response(content, mimetype="application/javascript", headers=headers)
