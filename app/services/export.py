"""An application's threads as a file, CSV or JSON Lines, streamed in constant memory.

The threads are those of the feedback list's filters (:mod:`app.services.thread_filters`,
applied by :func:`app.services.inbox.selection`), read newest first in keyset batches of
BATCH threads (``id < cursor``, never an offset), each batch with its tags and reply counts
in two more statements, and written out batch by batch: memory holds one batch whatever the
number of threads. A text filter is the inbox's condition (message, sender's e-mail or name)
checked on every thread read: an export reads them all anyway, so the trigram look-up that
bounds a page's work has nothing to save here.

One row per thread, these columns (``COLUMNS``): id, email, name (the sender), message,
sentiment, sentiment_set_by_agent (an agent corrected the label: recomputation keeps it), nps,
tags, url, properties, language, reply_count (replies and internal notes in the thread),
first_reply_time (seconds to the first public reply from an agent, empty before it), archived,
created_at.

- **CSV** (RFC 4180, UTF-8, header row, CRLF): for spreadsheets. ``created_at`` is ISO 8601
  UTC (``2026-11-25T09:30:00Z``), which spreadsheets read as a date; booleans are ``true`` and
  ``false``; tags are joined by ``, ``; properties are JSON text. Any text cell that starts with
  ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (OWASP's advice
  against formula injection): feedback is written by strangers and opened in spreadsheets.
  An optional byte order mark (``bom``) makes older Excel read UTF-8.
- **JSON Lines** (``application/x-ndjson``): one JSON object per line, with the API's types:
  ``created_at`` an integer Unix timestamp, booleans, ``tags`` a list, ``properties`` the JSON
  value submitted, ``nps`` and ``first_reply_time`` integers or null.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from app.errors import ValidationError
from app.repositories.applications import ApplicationRow
from app.repositories.inbox import newest
from app.repositories.replies import reply_counts
from app.repositories.search import contains_pattern
from app.repositories.threads import ThreadRow
from app.services.inbox import selection
from app.services.tags import tags_of_threads
from app.services.thread_filters import ThreadFilters

BATCH = 1000
FORMATS = {"csv": "text/csv", "jsonl": "application/x-ndjson"}
COLUMNS = (
    "id", "email", "name", "message", "sentiment", "sentiment_set_by_agent", "nps", "tags", "url",
    "properties", "language", "reply_count", "first_reply_time", "archived", "created_at",
)  # fmt: skip
BOM = "\ufeff"
# A spreadsheet reads a cell starting with one of these as a formula (OWASP "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One thread as the export writes it."""

    thread: ThreadRow
    tags: list[str]
    reply_count: int


def check_format(value: str | None) -> str:
    """The export's format: ``csv`` (also when none is given) or ``jsonl``."""
    chosen = value or "csv"
    if chosen not in FORMATS:
        raise ValidationError("The format field must be csv or jsonl.")
    return chosen


def file_name(application_id: int, export_format: str, today: date) -> str:
    """The file's name: the application's id and the date, never text a user wrote."""
    return f"earful-application-{application_id}-{today.isoformat()}.{export_format}"


async def export_rows(application: ApplicationRow, filters: ThreadFilters) -> AsyncIterator[list[ExportRow]]:
    """The matching threads, newest first, in batches of at most BATCH (from ``filters.before``)."""
    chosen = (await selection(application, filters)).query
    if chosen is None:
        return
    if filters.text:
        chosen = chosen.containing(contains_pattern(filters.text))
    cursor = filters.before
    while True:
        batch = await newest(chosen if cursor is None else chosen.ids("<", cursor), BATCH)
        if not batch:
            return
        ids = [thread.id for thread in batch]
        tags = await tags_of_threads(ids)
        counts = await reply_counts(ids)
        yield [ExportRow(t, [tag.name for tag in tags[t.id]], counts.get(t.id, 0)) for t in batch]
        if len(batch) < BATCH:
            return
        cursor = batch[-1].id


def neutralized(cell: str) -> str:
    """A text cell that no spreadsheet takes for a formula."""
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def csv_cells(row: ExportRow) -> list[str]:
    """A row's CSV cells, text neutralized."""
    thread, sender = row.thread, row.thread.sender
    texts = [sender.email, sender.name, thread.message, ", ".join(row.tags), thread.url or ""]
    email, name, message, tags, url = (neutralized(text) for text in texts)
    return [
        str(thread.id), email, name, message, thread.sentiment, _flag(thread.sentiment_corrected),
        "" if thread.nps is None else str(thread.nps), tags, url,
        neutralized(json.dumps(thread.properties, ensure_ascii=False)), neutralized(thread.language),
        str(row.reply_count), "" if thread.first_reply_time is None else str(thread.first_reply_time),
        _flag(thread.archived), _iso(thread.created_at),
    ]  # fmt: skip


def _flag(value: bool) -> str:
    return "true" if value else "false"


def json_object(row: ExportRow) -> dict[str, Any]:
    """A row as a JSON object, with the API's types."""
    thread, sender = row.thread, row.thread.sender
    values = (
        thread.id, sender.email, sender.name, thread.message, thread.sentiment, thread.sentiment_corrected,
        thread.nps, row.tags, thread.url, thread.properties, thread.language, row.reply_count,
        thread.first_reply_time, thread.archived, int(thread.created_at.timestamp()),
    )  # fmt: skip
    return dict(zip(COLUMNS, values, strict=True))


def _csv_text(rows: Iterable[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


async def export_file(
    application: ApplicationRow, filters: ThreadFilters, export_format: str, bom: bool = False
) -> AsyncIterator[bytes]:
    """The export, chunk by chunk (the header, then one chunk per batch of threads)."""
    if export_format == "csv":
        yield ((BOM if bom else "") + _csv_text([list(COLUMNS)])).encode()
        async for batch in export_rows(application, filters):
            yield _csv_text(csv_cells(row) for row in batch).encode()
        return
    async for batch in export_rows(application, filters):
        lines = (json.dumps(json_object(row), ensure_ascii=False, separators=(",", ":")) for row in batch)
        yield ("\n".join(lines) + "\n").encode()
