"""Helpers shared by the API blueprints: settings, plain-text answers, and input parsing."""

from __future__ import annotations

from typing import Any

from quart import Response, current_app, request
from werkzeug.datastructures import MultiDict

from app.config import Settings
from app.errors import NotFound, ValidationError
from app.representations import encode_json
from app.services.validation import MAX_ID, JsonRefused, decode_storable_json, parse_int, storable, valid_id

# The 400 of a write whose body is not a JSON object.
NOT_A_JSON_OBJECT = "The request body must be a JSON object."


def settings() -> Settings:
    """The settings of the running app."""
    config: Settings = current_app.config["EARFUL"]
    return config


def text_response(body: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A plain-text answer, as the specification's errors and capture successes are."""
    return Response(body, status=status, mimetype="text/plain", headers=headers)


def json_response(payload: Any, status: int = 200) -> Response:
    """A JSON answer."""
    return Response(encode_json(payload), status=status, mimetype="application/json")


def parse_id(value: str, missing: str, maximum: int = MAX_ID) -> int:
    """A path id; anything that is not one of ours is simply not found."""
    number = path_id(value, maximum)
    if number is None:
        raise NotFound(missing)
    return number


def path_id(value: str, maximum: int = MAX_ID) -> int | None:
    """A path id, or None when it is not one of ours."""
    number = parse_int(value) if value.isdigit() else None
    return number if number is not None and valid_id(number, maximum) else None


def query_int(name: str, default: int) -> int:
    """An integer query parameter, with the contract's validation message; the service that
    takes it checks its range (and says so)."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return default
    value = parse_int(raw)
    if value is None:
        raise ValidationError("The %(name)s field must be an integer.", name=name)
    return value


def form_to_dict(form: MultiDict[str, Any]) -> dict[str, object]:
    """A form as a plain dict; a repeated field keeps its last value."""
    return {storable(key): storable(form.getlist(key)[-1]) for key in form}


async def read_body(invalid_message: str, explain: bool = True) -> dict[str, object]:
    """The request body as a dict, from JSON or from a form; an empty body is an empty dict.

    A body that starts with ``{`` is read as JSON whatever its declared type: widgets often post
    JSON as text/plain to spare the CORS preflight, and ``curl -d`` labels JSON as a form.
    JSON that breaks one of :func:`decode_json`'s rules is refused with that rule when
    ``explain`` (the management API), else with ``invalid_message`` (the capture API, whose
    answers are translated).
    """
    if request.mimetype == "multipart/form-data":
        return form_to_dict(await request.form)
    raw = await request.get_data(as_text=False)
    assert isinstance(raw, bytes)  # as_text=False
    if not raw.strip():
        return {}
    if request.mimetype == "application/x-www-form-urlencoded" and not raw.lstrip().startswith(b"{"):
        return form_to_dict(await request.form)
    try:
        body = decode_storable_json(raw)
    except JsonRefused as refused:
        raise ValidationError(str(refused) if explain else invalid_message) from None
    except ValueError:
        raise ValidationError(invalid_message) from None
    if not isinstance(body, dict):
        raise ValidationError(invalid_message)
    return body
