"""Static files under content-hashed names with long cache lifetimes.

At start-up every file under ``app/static`` gets a name with a digest of its bytes
(``css/app.3f2a9c1b.css``); templates call ``asset("css/app.css")``. A changed file gets a new
name, so browsers may keep any name for a year.
"""

from __future__ import annotations

import hashlib
import mimetypes
from pathlib import Path

from quart import Blueprint, Response, abort

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
ONE_YEAR = 365 * 24 * 3600


class Assets:
    """The map from logical names to hashed names, and back."""

    def __init__(self, root: Path = STATIC_DIR) -> None:
        self.root = root
        self.hashed: dict[str, str] = {}
        self.files: dict[str, Path] = {}
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.name.startswith("."):
                continue
            logical = path.relative_to(root).as_posix()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:10]
            stem, dot, suffix = logical.rpartition(".")
            hashed = f"{stem}.{digest}.{suffix}" if dot else f"{logical}.{digest}"
            self.hashed[logical] = hashed
            self.files[hashed] = path

    def url(self, logical: str) -> str:
        """The address of a static file, by its name under ``app/static``."""
        return "/static/" + self.hashed[logical]


def build_blueprint(assets: Assets) -> Blueprint:
    blueprint = Blueprint("assets", __name__)

    @blueprint.get("/static/<path:name>")
    async def static_file(name: str) -> Response:
        path = assets.files.get(name)
        if path is None:
            abort(404)
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        response = Response(path.read_bytes(), mimetype=mime)
        response.headers["Cache-Control"] = f"public, max-age={ONE_YEAR}, immutable"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    return blueprint
