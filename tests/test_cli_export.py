"""``earful export``: an application's threads, filtered as the API filters them, on stdout or into a file."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from tests.test_cli import (  # noqa: F401 (fixtures)
    ANN_EMAIL,
    Earful,
    ann,
    assert_failed,
    database_with_ann,
    earful,
    migrated_database,
    succeeded,
)

THREADS = 30
CREATE_APPLICATION = """
import asyncio, sys
from app.services.storage import storage_for
from app.config import load_settings
from app.db import open_database, close_database
from app.services.applications import create_application
from app.services.users import get_user_by_email
async def main():
    settings = load_settings()
    await open_database(settings.database_url)
    user = await get_user_by_email(sys.argv[1])
    application = await create_application(user, {"name": "Shop"}, None, storage_for(settings))
    print(application.id)
    await close_database()
asyncio.run(main())
"""


@pytest.fixture
def seeded(earful: Earful, ann: str) -> str:  # noqa: F811 (fixtures)
    """The id of Ann's application, seeded with THREADS threads."""
    created = subprocess.run(
        [sys.executable, "-c", CREATE_APPLICATION, ann],
        env=earful.env,
        capture_output=True,
        text=True,
        check=True,
    )
    application_id = created.stdout.strip().splitlines()[-1]
    succeeded(earful("seed", "--application", application_id, "--threads", str(THREADS)))
    return application_id


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_export_writes_the_open_threads_as_csv_on_stdout(earful, seeded):  # noqa: F811
    result = succeeded(earful("export", "--application", seeded, "--email", ANN_EMAIL))

    open_threads = earful.query("SELECT id FROM feedback WHERE archived = 0 ORDER BY id DESC")
    assert [int(row["id"]) for row in rows(result.stdout)] == [thread_id for (thread_id,) in open_threads]


def test_export_takes_the_filters_of_the_api(earful, seeded):  # noqa: F811
    result = succeeded(
        earful(
            "export", "--application", seeded, "--email", ANN_EMAIL, "--format", "jsonl",
            "--archived", "--sentiment", "negative", "--nps-min", "0",
        )
    )  # fmt: skip

    expected = earful.query(
        "SELECT id FROM feedback WHERE archived = 1 AND sentiment = 'negative' AND nps >= 0 ORDER BY id DESC"
    )
    items = [json.loads(line) for line in result.stdout.splitlines()]
    assert [item["id"] for item in items] == [thread_id for (thread_id,) in expected]
    assert all(item["archived"] and item["sentiment"] == "negative" for item in items)


def test_export_writes_into_a_file_with_output(earful, seeded, tmp_path):  # noqa: F811
    target = tmp_path / "threads.csv"

    result = succeeded(
        earful("export", "--application", seeded, "--email", ANN_EMAIL, "--bom", "--output", str(target))
    )

    assert result.stdout == ""
    assert target.read_bytes().startswith(b"\xef\xbb\xbfid,email,")
    assert target.stat().st_mode & 0o077 == 0  # only its user may read it, as every file earful writes


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--since", "yesterday"), "The since field must be an integer."),
        (("--format", "xlsx"), "The format field must be csv or jsonl."),
        (("--nps-max", "11"), "The nps_max field must be between 0 and 10."),
    ],
)
def test_export_with_a_bad_filter_fails_with_the_apis_message(earful, seeded, extra, message):  # noqa: F811
    result = earful("export", "--application", seeded, "--email", ANN_EMAIL, *extra)

    assert_failed(result)
    assert result.stderr.strip() == f"earful: {message}"


def test_export_of_another_users_application_is_refused(earful, seeded):  # noqa: F811
    succeeded(
        earful("user", "create", "--email", "eve@example.com", "--name", "Eve", "--password", "eve-pass-123")
    )

    result = earful("export", "--application", seeded, "--email", "eve@example.com")

    assert_failed(result)
    assert result.stderr.strip() == "earful: Invalid application"
