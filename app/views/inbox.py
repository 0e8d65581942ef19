"""Web app pages: inbox (being built)."""

from quart import Blueprint

blueprint = Blueprint("inbox", __name__)
