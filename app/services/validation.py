"""Small validators shared by every surface."""

from __future__ import annotations

import json
import math
import re
from typing import TypeVar, cast
from urllib.parse import urlsplit

T = TypeVar("T")

MAX_ID = 2**31 - 1
# Deeper JSON is refused before anything walks it: the walks that follow (cleaning strings,
# encoding for the database and for answers) recurse once per level, and Python stops at a
# thousand frames, so a body nested ~500 deep used to end in a RecursionError (a 500).
MAX_JSON_DEPTH = 200

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


def valid_id(number: int, maximum: int = MAX_ID) -> bool:
    """The one rule for ids, in paths and bodies alike: from 1 to the database column's range.

    A larger id names nothing, and must not reach PostgreSQL (integer out of range) or SQLite
    (beyond 2^63) as a parameter.
    """
    return 1 <= number <= maximum


def parse_int(value: object) -> int | None:
    """Read an integer given as JSON or as a form value; None when it is not one.

    Any number of digits is an integer (``offset=2147483648`` is one, only too large); callers
    say what range they take.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        try:
            return int(value)
        except ValueError:  # beyond Python's 4,300 digits
            return None
    return None


class JsonRefused(ValueError):
    """JSON that Earful does not take; the text says which rule it broke, in the seed's style."""


def _refuse_constant(name: str) -> object:
    raise JsonRefused("The request body must not hold NaN or Infinity: they are not JSON numbers.")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise JsonRefused("The request body must not hold numbers too large to store.")
    return number


def json_depth(value: object) -> int:
    """How deeply lists and objects nest in a decoded JSON value (walked without recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return deepest


def decode_json(text: str | bytes) -> object:
    """Decode JSON as every surface takes it: standard JSON only (no NaN or Infinity, no number
    that becomes infinite) and at most MAX_JSON_DEPTH levels deep.

    ``JsonRefused`` says which rule failed; any other ``ValueError`` means it is not JSON.
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        value = None
        deep = True
    else:
        deep = json_depth(value) > MAX_JSON_DEPTH
    if deep:
        raise JsonRefused(f"The request body must not be nested more than {MAX_JSON_DEPTH} levels deep.")
    return value


# What can decode into text neither database stores: a ``\u0000`` escape, an escaped surrogate
# (``\ud800``-``\udfff``), or a surrogate written as UTF-8 bytes, which json.loads lets through
# (it decodes bytes with "surrogatepass"). A raw NUL never gets that far: the decoder refuses
# control characters in strings, and anywhere else it is not JSON.
_UNSTORABLE_JSON = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])|\xed[\xa0-\xbf]")


def decode_storable_json(raw: bytes) -> object:
    """:func:`decode_json`, made :func:`storable`.

    The walk over every string is skipped when nothing in ``raw`` can decode into an unstorable
    character (almost every body: the search is one pass of C over the bytes, the walk a call
    per string, key and container). UTF-16 and UTF-32 bodies, whose escapes the pattern does not
    spell, are always walked: JSON starts with an ASCII character, so theirs have a NUL byte
    among the first four."""
    value = decode_json(raw)
    if 0 in raw[:4] or _UNSTORABLE_JSON.search(raw):
        return storable(value)
    return value


def storable(value: T) -> T:
    """Make every string of decoded input storable by both databases (the same shape back).

    PostgreSQL refuses NUL characters in text and JSONB, and no database accepts the lone
    surrogates that JSON escapes can produce; both would otherwise turn bad input into a 500.
    """
    cleaned: object = value
    if isinstance(value, str):
        cleaned = value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    elif isinstance(value, dict):
        cleaned = {storable(key): storable(item) for key, item in value.items()}
    elif isinstance(value, list):
        cleaned = [storable(item) for item in value]
    return cast(T, cleaned)
