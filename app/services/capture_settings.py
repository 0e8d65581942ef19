"""An application's capture controls: the on/off switch, the rate limits and the allowed origins.

Validated here for every surface (the management API, the web app's settings page), in the seed's
style of messages, so a bad value is a 400 that writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from app.errors import ValidationError
from app.services.validation import parse_bool, parse_int

# Limits are requests per minute; more than this is no limit at all, and less than one is off,
# which the switch says better.
MAX_PER_MINUTE = 1_000_000
LIMIT_FIELDS = {
    "submits_per_minute": "submits per minute",
    "opens_per_minute": "opens per minute",
    "uploads_per_minute": "uploads per minute",
    "submits_per_minute_total": "submits per minute total",
}
MAX_ORIGINS = 50
MAX_ORIGIN_LENGTH = 300


def clean_capture_fields(data: Mapping[str, object]) -> dict[str, object]:
    """The capture controls among ``data``, validated, under their column names; only those sent.

    A limit that is null or empty goes back to the deployment's default.
    """
    fields: dict[str, object] = {}
    if "capture_enabled" in data:
        enabled = parse_bool(data["capture_enabled"])
        if enabled is None:
            raise ValidationError("The capture enabled field must be true or false.")
        fields["capture_enabled"] = enabled
    for name, label in LIMIT_FIELDS.items():
        if name in data:
            fields[name] = _limit(data[name], label)
    if "allowed_origins" in data:
        fields["allowed_origins"] = "\n".join(parse_origins(data["allowed_origins"]))
    return fields


def _limit(value: object, label: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    number = parse_int(value)
    if number is None:
        raise ValidationError(f"The {label} field must be an integer.")
    if not 1 <= number <= MAX_PER_MINUTE:
        raise ValidationError(f"The {label} field must be between 1 and %(max)d.", max=MAX_PER_MINUTE)
    return number


def parse_origins(value: object) -> list[str]:
    """A list of origins (``https://shop.example.com``), from a JSON list or from text with one per
    line (or separated by commas or spaces); normalized to lower case, without duplicates."""
    if value is None:
        return []
    if isinstance(value, str):
        entries: list[object] = [entry for entry in re.split(r"[\s,]+", value) if entry]
    elif isinstance(value, list):
        entries = list(value)
    else:
        raise ValidationError("The allowed origins field must be a list of origins.")
    if len(entries) > MAX_ORIGINS:
        raise ValidationError(
            "The allowed origins field must not have more than %(max)d items.", max=MAX_ORIGINS
        )
    origins: list[str] = []
    for entry in entries:
        origin = normalize_origin(entry)
        if origin is None:
            raise ValidationError(
                "The allowed origins field must hold origins such as https://shop.example.com."
            )
        if origin not in origins:
            origins.append(origin)
    return origins


def normalize_origin(value: object) -> str | None:
    """``scheme://host[:port]`` in lower case, or None when ``value`` is not an http(s) origin
    (a path, a query, credentials or white space make it something else)."""
    if not isinstance(value, str) or len(value) > MAX_ORIGIN_LENGTH:
        return None
    text = value.strip().rstrip("/")
    if not text or any(character.isspace() for character in text):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


def origin_allowed(allowed: tuple[str, ...], origin: str | None) -> bool:
    """Whether a browser request from ``origin`` may use the javascript key. An empty list allows
    any origin; otherwise the Origin header must be one of the list (a request without one is
    not a browser's, so a copied key is refused)."""
    if not allowed:
        return True
    normalized = normalize_origin(origin) if origin else None
    return normalized is not None and normalized in allowed
