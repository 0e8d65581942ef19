"""Web app pages: applications (being built)."""

from quart import Blueprint

blueprint = Blueprint("applications", __name__)
