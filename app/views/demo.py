"""Web app pages: the widget demo page of an application.

The page embeds the real widget (same origin, so the strict CSP allows it) against the capture API
with the application's JavaScript key; a plain GET form tries the widget's options, and the
snippet shown is the one that gives exactly what the page shows.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape
from quart import Blueprint, current_app, request, url_for

from app.links import logo_path
from app.repositories.applications import ApplicationRow
from app.services.applications import get_application
from app.views.rendering import render_template
from app.views.security import agent_required, current_agent

blueprint = Blueprint("demo", __name__)

LANGUAGES = {"en": "English", "es": "Español", "pt": "Português"}
THEMES = {"auto": "Automatic", "light": "Light", "dark": "Dark"}
POSITIONS = {"bottom-right": "Bottom right", "bottom-left": "Bottom left"}
DEFAULT_COLOR = "#3e63dd"
COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")


def _choice(name: str, choices: dict[str, str], default: str) -> str:
    value = request.args.get(name, default)
    return value if value in choices else default


def _options(application: ApplicationRow) -> dict[str, object]:
    """The widget options picked in the page's form (query string), each checked."""
    color = request.args.get("color", DEFAULT_COLOR)
    flags_sent = "apply" in request.args
    return {
        "language": _choice("language", LANGUAGES, "en"),
        "theme": _choice("theme", THEMES, "auto"),
        "position": _choice("position", POSITIONS, "bottom-right"),
        "color": color if COLOR.match(color) else DEFAULT_COLOR,
        "nps": request.args.get("nps") == "true" if flags_sent else True,
        "uploads": application.uploads_enabled
        and (request.args.get("uploads") == "true" if flags_sent else True),
    }


def _attributes(application: ApplicationRow, options: dict[str, object]) -> list[tuple[str, str]]:
    """The data attributes of the snippet; defaults are left out to keep it short."""
    attributes = [("data-app", str(application.id)), ("data-key", application.key_javascript)]
    for name, default in (
        ("language", "en"),
        ("theme", "auto"),
        ("position", "bottom-right"),
        ("color", DEFAULT_COLOR),
    ):
        if options[name] != default:
            attributes.append((f"data-{name}", str(options[name])))
    for flag in ("nps", "uploads"):
        if options[flag]:
            attributes.append((f"data-{flag}", "true"))
    return attributes


def _tag(src: str, attributes: list[tuple[str, str]]) -> Markup:
    rendered = "".join(f' {name}="{escape(value)}"' for name, value in attributes)
    return Markup(f'<script src="{escape(src)}"{rendered} async></script>')


@blueprint.get("/applications/<id:application_id>/demo")
@agent_required
async def show_demo(application_id: int) -> str:
    """The live widget of one application, its options and the snippet that embeds it."""
    agent = current_agent()
    application = await get_application(agent, application_id)
    options = _options(application)
    attributes = _attributes(application, options)
    base_url = current_app.config["EARFUL"].base_url
    return await render_template(
        "demo/show.html",
        application=application,
        logo_url=logo_path(application),
        options=options,
        languages=LANGUAGES,
        themes=THEMES,
        positions=POSITIONS,
        snippet=str(_tag(f"{base_url}/widget.js", attributes)),
        live_widget=_tag(url_for("widget.widget_js"), attributes),
    )
