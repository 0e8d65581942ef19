"""Web app pages: stats (being built)."""

from quart import Blueprint

blueprint = Blueprint("stats", __name__)
