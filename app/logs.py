"""Log lines of ``earful serve``, ``earful worker`` and ``earful smtp``: JSON or text, each with
the id of the request or background job run it belongs to.

- ``EARFUL_LOG_FORMAT=json``: one JSON object a line (``time``, ``level``, ``logger``,
  ``process``, ``message``, ``request_id`` and the line's own fields; a traceback in
  ``traceback``). ``text``: the format of Hypercorn's log, ``[time] [pid] [LEVEL] message``,
  the fields as ``key=value`` and the id in brackets. Unset (``auto``): text at a terminal, JSON
  otherwise (a service manager, a container or a file: read by machines).
- The id comes from a context variable: a request's is its ``X-Request-Id`` (app/failures.py), a
  job run's a new one (:func:`job_run`); whatever is logged while it runs, a traceback included,
  carries it.
- No line says whom: e-mail addresses are replaced by ``<email>`` in every line (a relay's
  refusal, a database error quoting a key), and the request lines hold the route's rule, never
  the path, its query or a header. Feedback text and headers are never passed to a logger.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import logging
import re
import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pythonjsonlogger.json import JsonEncoder
from pythonjsonlogger.orjson import OrjsonFormatter

FORMATS = ("auto", "json", "text")
TEXT_FORMAT = "%(asctime)s [%(process)d] [%(levelname)s] %(message)s"
TEXT_DATE_FORMAT = "[%Y-%m-%d %H:%M:%S %z]"
# Fields of a line that the text format shows after the message, in this order.
TEXT_FIELDS = ("duration_ms", "client", "user_id", "worker", "outcome", "items")

# The id of the request, or of the background job run, that the running task works for.
current_id: ContextVar[str] = ContextVar("earful_log_id", default="")

_EMAIL = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")

jobs_logger = logging.getLogger("earful.jobs")


def new_id() -> str:
    """A new request or job id: 32 hex digits (128 random bits, without building a UUID)."""
    return secrets.token_hex(16)


def scrub(line: str) -> str:
    """The line with every e-mail address replaced by ``<email>``."""
    return _EMAIL.sub("<email>", line) if "@" in line else line


class WithId(logging.Filter):
    """Adds ``request_id`` (the context's request or job id) to every record that has none."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            found = current_id.get()
            if found:
                record.request_id = found
        return True


class JsonLines(OrjsonFormatter):
    """One JSON object a line, addresses scrubbed. Encoded by orjson (python-json-logger's own
    formatter for it): the standard library's encoder made a request's line take 17 us instead
    of 8, and every request writes one."""

    def __init__(self) -> None:
        super().__init__(
            "{levelname}{name}{process}{message}",
            style="{",
            rename_fields={"levelname": "level", "name": "logger", "exc_info": "traceback"},
            timestamp="time",
        )

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message: dict[str, Any]
    ) -> None:
        log_data["time"] = None  # first in the line: JSON objects keep their keys' order
        super().add_fields(log_data, record, message)

    def jsonify_log_record(self, log_data: dict[str, Any]) -> str:
        try:
            return super().jsonify_log_record(log_data)
        except TypeError:  # orjson refuses an integer past 64 bits, which a line may still hold
            return jsonlib.dumps(log_data, cls=JsonEncoder, ensure_ascii=False)

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class TextLines(logging.Formatter):
    """Hypercorn's format, a line's fields as ``key=value`` and its id; addresses scrubbed."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT, TEXT_DATE_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        text = super().formatMessage(record)
        fields = [f"{name}={getattr(record, name)}" for name in TEXT_FIELDS if hasattr(record, name)]
        if fields:
            text += " " + " ".join(fields)
        request_id = getattr(record, "request_id", None)
        return f"{text} [{request_id}]" if request_id else text

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


def resolved_format(log_format: str) -> str:
    """``json`` or ``text``: ``auto`` is text at a terminal, JSON otherwise."""
    if log_format == "auto":
        return "text" if sys.stderr.isatty() else "json"
    return log_format


def configure_logging(log_format: str = "auto", level: int = logging.INFO) -> None:
    """Send every logger's lines (Hypercorn's too) to stderr in ``log_format``, from ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if resolved_format(log_format) == "json" else TextLines())
    handler.addFilter(WithId())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # aiosmtpd logs every SMTP command, addresses included; Tortoise each start and stop.
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    logging.getLogger("tortoise").setLevel(logging.WARNING)
    for name in ("hypercorn.error", "earful", "earful.serve"):
        named = logging.getLogger(name)
        named.handlers.clear()
        named.propagate = True


@dataclass
class JobRun:
    """What one run of a background job did: ``items`` handled (None: not counted)."""

    items: int | None = None
    outcome: str = "ok"


@contextmanager
def job_run(worker: str, failure: str, logger: logging.Logger) -> Iterator[JobRun]:
    """Run one round of a background job under a new id, then log one line: the worker, the
    duration, the outcome and what it handled. An error is logged (with its traceback and the id)
    as ``failure`` on ``logger`` and ends the round: the worker tries again next round, so the
    database may be away for a while. Rounds that found nothing to do are logged at DEBUG."""
    token = current_id.set(new_id())
    run = JobRun()
    started = time.perf_counter()
    try:
        yield run
    except Exception:
        run.outcome = "failed"
        logger.exception(failure)
    except asyncio.CancelledError:  # the worker was stopped mid-run
        run.outcome = "stopped"
        raise
    finally:
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        fields: dict[str, object] = {"worker": worker, "duration_ms": duration_ms, "outcome": run.outcome}
        if run.items is not None:
            fields["items"] = run.items
        idle = run.outcome == "ok" and run.items == 0
        level = logging.DEBUG if idle else logging.INFO
        jobs_logger.log(level, "%s run %s", worker, run.outcome, extra=fields)
        current_id.reset(token)
