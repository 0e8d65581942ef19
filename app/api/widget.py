"""The embeddable feedback widget's script, served at /widget.js (being built)."""

from quart import Blueprint

blueprint = Blueprint("widget", __name__)
