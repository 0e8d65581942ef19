"""Web app pages: organizations (being built)."""

from quart import Blueprint

blueprint = Blueprint("organizations", __name__)
