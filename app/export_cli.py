"""``earful export``: an application's threads as CSV or JSON Lines, on stdout or into a file.

    earful export --application ID --email USER_EMAIL [--format csv|jsonl] [--bom]
                  [--archived] [--sentiment S] [--tag T] [--q TEXT] [--since TS] [--until TS]
                  [--replied true|false] [--nps-min N] [--nps-max N] [--output FILE]

The application is looked up as the user with that e-mail address, as the API looks it up for
a token's user: someone else's application is ``Invalid application``. The filters are read by
the same function as the API's (:func:`app.services.thread_filters.parse_filters`), with the
same messages, and the file is the API's (:mod:`app.services.export`), written batch by batch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from app.config import Settings
from app.db import close_database, open_database

# The options that carry a filter, by the name parse_filters reads.
FILTER_OPTIONS = {
    "sentiment": "--sentiment",
    "tag": "--tag",
    "q": "--q",
    "since": "--since",
    "until": "--until",
    "replied": "--replied",
    "nps_min": "--nps-min",
    "nps_max": "--nps-max",
}


def add_export_command(subparsers: Any) -> None:
    """Add ``export`` to the ``earful`` command's subparsers."""
    command = subparsers.add_parser("export", help="write an application's threads as CSV or JSON Lines")
    command.add_argument("--application", type=int, required=True, metavar="ID")
    command.add_argument("--email", required=True, help="the user the application is looked up as")
    command.add_argument("--format", default="csv", help="csv (default) or jsonl")
    command.add_argument("--bom", action="store_true", help="start a CSV with a byte order mark (Excel)")
    command.add_argument("--archived", action="store_true", help="the archived threads (default: open)")
    for name, option in FILTER_OPTIONS.items():
        command.add_argument(option, dest=f"filter_{name}", metavar=name.upper())
    command.add_argument("--output", metavar="FILE", help="write here instead of stdout")


def filter_arguments(args: argparse.Namespace) -> dict[str, str]:
    """The filters given on the command line, as the API's query string would carry them."""
    given = {name: getattr(args, f"filter_{name}") for name in FILTER_OPTIONS}
    found = {name: value for name, value in given.items() if value is not None}
    if args.archived:
        found["archived"] = "true"
    return found


async def export_threads(settings: Settings, args: argparse.Namespace) -> None:
    """Run ``earful export``: bad filters and formats fail before the database is opened."""
    from app.services.applications import get_application
    from app.services.export import check_format, export_file
    from app.services.thread_filters import parse_filters
    from app.services.users import get_user_by_email

    filters = parse_filters(filter_arguments(args))
    export_format = check_format(args.format)
    await open_database(settings.database_url)
    try:
        user = await get_user_by_email(args.email)
        application = await get_application(user, args.application)
        chunks = export_file(application, filters, export_format, args.bom)
        if not args.output:
            await _write(chunks, sys.stdout.buffer)
            return
        # A command's own loop runs nothing else, so blocking writes cost no one.
        with open(args.output, "wb") as output:  # noqa: ASYNC230
            await _write(chunks, output)
    finally:
        await close_database()


async def _write(chunks: AsyncIterator[bytes], output: BinaryIO) -> None:
    async for chunk in chunks:
        output.write(chunk)
    output.flush()
