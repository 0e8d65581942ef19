"""The filters of an application's threads, read once for every surface that lists them.

The inbox page, the management API's feedback list, its export and ``earful export`` take the
same filters; :func:`parse_filters` reads them from text (a query string, command-line options)
with the management API's messages, and :mod:`app.services.inbox` applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime

from app.errors import ValidationError
from app.models import SENTIMENTS
from app.services.validation import MAX_ID, parse_bool, parse_int, storable, valid_id

MAX_QUERY_LENGTH = 200
MAX_NPS = 10
# The last second a datetime holds (9999-12-31 23:59:59 UTC): a later timestamp names no moment.
MAX_TIMESTAMP = 253_402_300_799
# What parse_filters reads beside ``archived``: the names of the query string and of the options.
NARROWING = ("sentiment", "tag", "q", "since", "until", "replied", "nps_min", "nps_max", "assignee", "before")
# ``assignee`` of the threads assigned to nobody (user ids start at 1).
UNASSIGNED = 0


@dataclass(frozen=True)
class ThreadFilters:
    """Which threads of an application: one state (open or archived) narrowed by every filter set.

    ``since`` and ``until`` bound ``created_at`` (``since`` inclusive, ``until`` exclusive, UTC);
    ``replied`` says whether an agent has replied publicly (the thread has a first reply time);
    ``nps_min`` and ``nps_max`` bound the rating, inclusive (threads without one never match);
    ``assignee`` is the id of the agent the threads are assigned to, or :data:`UNASSIGNED`;
    ``before`` is the keyset cursor: only threads whose id is below it; ``after`` the live
    inbox's: only threads whose id is above it (the newest the page shows).
    """

    archived: bool = False
    sentiment: str | None = None
    tag: str | None = None
    query: str = ""
    since: datetime | None = None
    until: datetime | None = None
    replied: bool | None = None
    nps_min: int | None = None
    nps_max: int | None = None
    assignee: int | None = None
    before: int | None = None
    after: int | None = None

    @property
    def text(self) -> str:
        """The text searched for, as the search takes it."""
        return self.query.strip()[:MAX_QUERY_LENGTH]

    def narrowed(self) -> bool:
        """Whether any filter beyond the state and the cursors is set."""
        return any(
            getattr(self, field.name) not in (None, "")
            for field in fields(self)
            if field.name not in ("archived", "before", "after")
        )

    def plain(self) -> bool:
        """Whether only the state is given: the list as it was before filters."""
        return self.before is None and self.after is None and not self.narrowed()

    def only_tag(self) -> bool:
        """Whether the tag is the only filter beyond the state and the cursor."""
        return self.tag is not None and not replace(self, tag=None).narrowed()


def _given(args: Mapping[str, str], name: str) -> str | None:
    """A parameter's text; an empty one is no parameter, as for ``archived`` and the paging."""
    raw = args.get(name)
    return None if raw is None or raw == "" else raw


def _integer(args: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    raw = _given(args, name)
    if raw is None:
        return None
    value = parse_int(raw)
    if value is None:
        raise ValidationError("The %(name)s field must be an integer.", name=name)
    if not low <= value <= high:
        raise ValidationError(
            "The %(name)s field must be between %(low)d and %(high)d.", name=name, low=low, high=high
        )
    return value


def _boolean(args: Mapping[str, str], name: str) -> bool | None:
    raw = _given(args, name)
    if raw is None:
        return None
    value = parse_bool(raw)
    if value is None:
        raise ValidationError("The %(name)s field must be true or false.", name=name)
    return value


def _moment(args: Mapping[str, str], name: str) -> datetime | None:
    """A Unix timestamp in seconds, as every timestamp of the API is."""
    seconds = _integer(args, name, 0, MAX_TIMESTAMP)
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def _assignee(args: Mapping[str, str], user_id: int | None) -> int | None:
    """``me`` (the user asking), ``none`` (nobody) or a user id."""
    raw = _given(args, "assignee")
    if raw is None:
        return None
    if raw == "none":
        return UNASSIGNED
    if raw == "me" and user_id is not None:
        return user_id
    number = parse_int(raw)
    if number is None or not valid_id(number):
        raise ValidationError("The assignee field must be me, none or a user id.")
    return number


def parse_filters(args: Mapping[str, str], user_id: int | None = None) -> ThreadFilters:
    """The filters given as text (``archived``, ``sentiment``, ``tag``, ``q``, ``since``,
    ``until``, ``replied``, ``nps_min``, ``nps_max``, ``assignee``, ``before``); a missing or
    empty one is not set, a malformed one is a :class:`ValidationError` in the management API's
    words. ``assignee=me`` names ``user_id``, the user who asks (without one, ``me`` is refused)."""
    sentiment = _given(args, "sentiment")
    if sentiment is not None and sentiment not in SENTIMENTS:
        raise ValidationError("The sentiment field must be one of %(values)s.", values=", ".join(SENTIMENTS))
    # Text from a query string may hold NUL, which PostgreSQL refuses in a text parameter.
    query = storable(args.get("q") or "")
    if len(query) > MAX_QUERY_LENGTH:
        raise ValidationError(
            "The q field must not be greater than %(max)d characters.", max=MAX_QUERY_LENGTH
        )
    before = _given(args, "before")
    before_id = None if before is None else parse_int(before)
    if before is not None and (before_id is None or not valid_id(before_id)):
        raise ValidationError("The before field must be a thread id (1 to %(max)d).", max=MAX_ID)
    return ThreadFilters(
        archived=bool(_boolean(args, "archived")),
        sentiment=sentiment,
        tag=storable(_given(args, "tag") or "").strip() or None,
        query=query,
        since=_moment(args, "since"),
        until=_moment(args, "until"),
        replied=_boolean(args, "replied"),
        nps_min=_integer(args, "nps_min", 0, MAX_NPS),
        nps_max=_integer(args, "nps_max", 0, MAX_NPS),
        assignee=_assignee(args, user_id),
        before=before_id,
    )
