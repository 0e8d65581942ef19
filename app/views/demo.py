"""Web app pages: the widget demo page of an application (being built)."""

from quart import Blueprint

blueprint = Blueprint("demo", __name__)
