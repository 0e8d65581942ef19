"""Raw RFC 5322 e-mail posted by an MTA, turned into threads and replies (being built)."""

from quart import Blueprint

blueprint = Blueprint("inbound", __name__)
