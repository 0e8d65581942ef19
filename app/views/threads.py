"""Web app pages: threads (being built)."""

from quart import Blueprint

blueprint = Blueprint("threads", __name__)
