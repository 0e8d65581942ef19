"""Presentation helpers of the web app's pages: ages, durations, avatars, files, properties."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from quart import current_app

from app.links import attachment_path
from app.repositories.attachments import AttachmentRow
from app.services.avatars import avatar_url
from app.services.validation import is_http_url

INBOX_FILTERS = ("status", "sentiment", "tag", "q", "assignee", "before")


def avatar_src(email: str, name: str = "") -> str:
    """A sender's avatar as a path on this host (the base URL may name another one)."""
    return avatar_paths()(email, name)


def avatar_paths() -> Callable[[str, str], str]:
    """:func:`avatar_src` with the app's secret looked up once, for the fifty rows of a page."""
    return functools.partial(avatar_url, "", current_app.config["EARFUL"].secret_key)


def attachment_src(attachment: AttachmentRow) -> str:
    """The path that serves an attachment."""
    return attachment_path(attachment)


def is_image(attachment: AttachmentRow) -> bool:
    """Images are previewed inline; everything else is a download link."""
    return attachment.mime_type.startswith("image/")


def file_size(size: int) -> str:
    """A human size: 512 B, 3.4 KB, 1.2 MB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def time_ago(moment: datetime, now: datetime | None = None) -> str:
    """A short age such as "3 h ago"; older than a month shows the date."""
    seconds = int(((now or datetime.now(UTC)) - moment).total_seconds())
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    if seconds < 30 * 86400:
        return f"{seconds // 86400} d ago"
    return f"{moment:%d %b %Y}"


def full_time(moment: datetime) -> str:
    """The full timestamp shown on hover."""
    if moment.tzinfo is not UTC:  # the rows' moments are read in UTC (repositories.sql.read_moment)
        moment = moment.astimezone(UTC)
    # Not strftime: fifty rows a page, and its format parsing cost 3 % of the inbox page's CPU.
    return f"{moment.year:04}-{moment.month:02}-{moment.day:02} {moment.hour:02}:{moment.minute:02} UTC"


def duration(seconds: int) -> str:
    """A duration for people: '45 s', '5 min', '2 h 5 min', '1 d 3 h'."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def page_link(url: str | None) -> str | None:
    """A page URL that may become a link: only absolute http(s) ones."""
    return url if url and is_http_url(url) else None


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class Properties:
    """Custom properties prepared for display: pairs for an object, items for a list."""

    pairs: list[tuple[str, str]]
    items: list[str]

    def __bool__(self) -> bool:
        return bool(self.pairs or self.items)


def display_properties(value: object) -> Properties:
    """Nested values are shown as JSON text; strings as they are (escaped by the template)."""
    if isinstance(value, dict):
        return Properties([(str(key), _text(item)) for key, item in value.items()], [])
    if isinstance(value, list):
        return Properties([], [_text(item) for item in value])
    if value in (None, ""):
        return Properties([], [])
    return Properties([], [_text(value)])


def inbox_filters(args: Mapping[str, str]) -> dict[str, Any]:
    """The inbox filters carried in a query string, so that a thread can link back to them."""
    return {key: args[key] for key in INBOX_FILTERS if args.get(key)}


HELPERS = {
    "avatar_src": avatar_src,
    "attachment_src": attachment_src,
    "is_image": is_image,
    "file_size": file_size,
    "time_ago": time_ago,
    "full_time": full_time,
    "duration": duration,
    "page_link": page_link,
}
