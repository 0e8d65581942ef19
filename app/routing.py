"""The id converter of every page route: ``<id:application_id>``.

An id outside the database's range names nothing; the route simply does not match, so such a
URL is a 404 like any unknown one instead of a query that PostgreSQL (integer out of range) or
SQLite (beyond 2^63) refuses with a 500. The API reads its ids with ``app.api.common.parse_id``,
which applies the same rule (:func:`app.services.validation.valid_id`) to answer with the
specification's messages.
"""

from __future__ import annotations

from werkzeug.routing import BaseConverter, ValidationError

from app.services.validation import parse_int, valid_id


class IdConverter(BaseConverter):
    """Digits naming a row: 1 to the column's maximum."""

    regex = r"\d+"
    weight = 50

    def to_python(self, value: str) -> int:
        number = parse_int(value)
        if number is None or not valid_id(number):
            raise ValidationError()
        return number

    def to_url(self, value: int) -> str:
        return str(int(value))
