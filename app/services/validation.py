"""Small validators shared by every surface."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MAX_ID = 2**31 - 1

_EMAIL = re.compile(
    r"^[^@\s\x00-\x1f<>(),;:\"\[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$"
)


def normalize_email(value: object) -> str | None:
    """Return the address trimmed and lower-cased, or None when it is not a valid address."""
    if not isinstance(value, str):
        return None
    address = value.strip().lower()
    if len(address) > 254 or not _EMAIL.match(address):
        return None
    local = address.split("@", 1)[0]
    if len(local) > 64 or local.startswith(".") or local.endswith(".") or ".." in local:
        return None
    return address


def is_http_url(value: str) -> bool:
    """Tell whether a string is an absolute http(s) URL with a host."""
    if len(value) > 2048 or any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def parse_bool(value: object) -> bool | None:
    """Read a boolean given as JSON or as a form value; None when it is neither."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    if isinstance(value, str):
        return {"true": True, "1": True, "false": False, "0": False}.get(value.strip().lower())
    return None


def parse_int(value: object) -> int | None:
    """Read an integer given as JSON or as a form value; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,18}\s*", value):
        return int(value)
    return None


def storable(value: object) -> object:
    """Make every string of decoded input storable by both databases.

    PostgreSQL refuses NUL characters in text and JSONB, and no database accepts the lone
    surrogates that JSON escapes can produce; both would otherwise turn bad input into a 500.
    """
    if isinstance(value, str):
        return value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [storable(item) for item in value]
    return value
