"""Web app pages: account (being built)."""

from quart import Blueprint

blueprint = Blueprint("account", __name__)
