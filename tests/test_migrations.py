"""The migrations build the models' schema, from nothing, on SQLite and PostgreSQL, and only once.

Tortoise keeps one global ORM per process and the test session's ORM is open on its own
databases, so every migration run here happens in a child process of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from tortoise.models import Model

from app import models
from app.config import sqlite_url
from tests.conftest import throwaway_postgres_database

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS_DIR = PROJECT_ROOT / "migrations"
RECORDER_TABLE = "tortoise_migrations"

UPGRADE_SCRIPT = """
import asyncio, sys
from app.db import upgrade_database
asyncio.run(upgrade_database(sys.argv[1]))
"""

# What `tortoise makemigrations` does (tortoise/cli/cli.py), printing the operations it would write.
PENDING_CHANGES_SCRIPT = """
import asyncio, json, sys
from tortoise.cli.cli import tortoise_cli_context
from tortoise.config import TortoiseConfig
from tortoise.migrations.autodetector import MigrationAutodetector
from app.db import tortoise_config

async def pending(url):
    config = TortoiseConfig.from_dict(tortoise_config(url))
    apps = {label: app.to_dict() for label, app in config.apps.items()}
    config_dict = config.to_dict()
    config_dict["apps"] = apps
    async with tortoise_cli_context(config_dict) as ctx:
        writers = await MigrationAutodetector(ctx.apps, apps).changes()
    return [f"{w.app_label}: {operation.describe()}" for w in writers for operation in w.operations]

print(json.dumps(asyncio.run(pending(sys.argv[1]))))
"""


async def run_python(script: str, *args: str) -> str:
    """Run ``script`` in a fresh interpreter at the project root; returns its stdout."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("EARFUL_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        *args,
        cwd=PROJECT_ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    return stdout.decode()


async def upgrade(database_url: str) -> None:
    await run_python(UPGRADE_SCRIPT, database_url)


def migration_names() -> list[str]:
    return sorted(path.stem for path in MIGRATIONS_DIR.glob("*.py") if re.match(r"\d{4}_", path.name))


def model_tables() -> set[str]:
    """The table of every model of the app."""
    found = (getattr(models, name) for name in models.__all__)
    return {model._meta.db_table for model in found if isinstance(model, type) and issubclass(model, Model)}


def asyncpg_dsn(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


async def sqlite_schema(database_url: str) -> dict[str, object]:
    path = database_url.removeprefix("sqlite://").split("?", 1)[0]
    connection = sqlite3.connect(path)
    try:
        objects = connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        applied = connection.execute(f"SELECT app, name FROM {RECORDER_TABLE} ORDER BY id").fetchall()
    finally:
        connection.close()
    return {
        "tables": sorted(name for kind, name, _, _ in objects if kind == "table"),
        "objects": objects,
        "applied": [tuple(row) for row in applied],
    }


async def postgres_schema(database_url: str) -> dict[str, object]:
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = 'public' ORDER BY table_name"
        )
        columns = await connection.fetch(
            "SELECT table_name, column_name, data_type, is_nullable, column_default"
            " FROM information_schema.columns WHERE table_schema = 'public'"
            " ORDER BY table_name, column_name"
        )
        indexes = await connection.fetch(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname"
        )
        applied = await connection.fetch(f"SELECT app, name FROM {RECORDER_TABLE} ORDER BY id")
    finally:
        await connection.close()
    return {
        "tables": [row["table_name"] for row in tables],
        "objects": [tuple(row) for row in columns] + [tuple(row) for row in indexes],
        "applied": [tuple(row) for row in applied],
    }


@pytest.fixture(params=["sqlite", "postgres"])
async def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """The URL of a database that exists and holds nothing, on each backend."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "data" / "earful.sqlite3")
        return
    async with throwaway_postgres_database("earful_migrations") as url:
        yield url


async def schema_of(database_url: str) -> dict[str, object]:
    if database_url.startswith("sqlite://"):
        return await sqlite_schema(database_url)
    return await postgres_schema(database_url)


async def test_models_and_migrations_agree(tmp_path):
    pending = json.loads(await run_python(PENDING_CHANGES_SCRIPT, sqlite_url(tmp_path / "earful.sqlite3")))

    assert pending == [], "models changed without a migration (run `make migration`):\n" + "\n".join(pending)


def search_tables(database_url: str) -> set[str]:
    """On SQLite, the removals the search file has yet to apply (its own tables are in the file
    of its own, app.search_db)."""
    if not database_url.startswith("sqlite://"):
        return set()
    return {"search_removals"}


async def test_upgrade_builds_every_table_on_an_empty_database(empty_database):
    await upgrade(empty_database)

    schema = await schema_of(empty_database)
    assert set(schema["tables"]) == model_tables() | {RECORDER_TABLE} | search_tables(empty_database)


def declared_indexes() -> set[tuple[str, tuple[str, ...]]]:
    """Every index a model declares (its ``indexes`` and ``unique_together``), as its table
    and columns."""
    declared = set()
    for name in models.__all__:
        model = getattr(models, name)
        if isinstance(model, type) and issubclass(model, Model):
            for columns in (*model._meta.indexes, *model._meta.unique_together):
                declared.add((model._meta.db_table, tuple(columns)))
    return declared


async def indexed_columns(database_url: str) -> set[tuple[str, tuple[str, ...]]]:
    """The columns of every index of a migrated database, by table (expression indexes left out)."""
    if database_url.startswith("sqlite://"):
        connection = sqlite3.connect(database_url.removeprefix("sqlite://").split("?", 1)[0])
        try:
            found = set()
            for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                for index in connection.execute(f"PRAGMA index_list('{table}')").fetchall():
                    names = [row[2] for row in connection.execute(f"PRAGMA index_info('{index[1]}')")]
                    found.add((table, tuple(names)))
            return found
        finally:
            connection.close()
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await connection.fetch(
            "SELECT t.relname AS table_name, array_agg(a.attname ORDER BY k.position) AS names "
            "FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
            "JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public' "
            "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) "
            "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
            "GROUP BY i.indexrelid, t.relname"
        )
    finally:
        await connection.close()
    return {(row["table_name"], tuple(row["names"])) for row in rows}


async def test_upgrade_builds_every_index_the_models_declare(empty_database):
    """SQLite rebuilds a table to change a column, and migration 0015 rebuilt the outbox's
    without its indexes (0022 puts them back)."""
    await upgrade(empty_database)

    missing = declared_indexes() - await indexed_columns(empty_database)

    assert missing == set(), missing


async def test_upgrade_records_every_migration(empty_database):
    await upgrade(empty_database)

    schema = await schema_of(empty_database)
    assert schema["applied"] == [("models", name) for name in migration_names()]


async def test_upgrade_run_again_changes_nothing(empty_database):
    await upgrade(empty_database)
    before = await schema_of(empty_database)

    await upgrade(empty_database)

    assert await schema_of(empty_database) == before


OLD_APPLICATION = """
async def old_application():
    # An application as the schema before 0013 holds it: the factories write today's columns.
    import dataclasses
    from datetime import UTC, datetime
    from tortoise import connections
    from app.repositories.applications import ApplicationRow
    user = await make_user()
    now = datetime.now(UTC)
    values = dict(owner_id=user.id, organization_id=None, name="Old", url=None, logo_name=None,
        key_javascript="kj", key_ios="ki", key_android="ka", key_api="kp", intake_token="it",
        uploads_enabled=True, target_average_first_reply_time=86400, first_reply_total=0,
        first_reply_count=0, open_threads=0, archived_threads=0, reply_count=0)
    names = [*values, "created_at", "updated_at"]
    postgres = connections.get("default").capabilities.dialect == "postgres"
    marks = ", ".join("$%d" % (n + 1) if postgres else "?" for n in range(len(names)))
    [row] = await atomic(lambda: connections.get("default").execute_query_dict(
        f"INSERT INTO applications ({', '.join(names)}) VALUES ({marks}) RETURNING id",
        [*values.values(), now, now]))
    return ApplicationRow(id=row["id"], **values, capture_enabled=True, submits_per_minute=None,
        opens_per_minute=None, uploads_per_minute=None, submits_per_minute_total=None,
        allowed_origins=(), created_at=now, updated_at=now)
"""

OLD_THREAD = """
async def old_thread(application):
    # A thread as the schema before 0016 holds it (no assignee): today's writers write that column.
    from datetime import UTC, datetime
    from tortoise import connections
    now = datetime.now(UTC)
    postgres = connections.get("default").capabilities.dialect == "postgres"
    def marks(count):
        return ", ".join("$%d" % (n + 1) if postgres else "?" for n in range(count))
    [member] = await atomic(lambda: connections.get("default").execute_query_dict(
        f"INSERT INTO members (application_id, email, name, created_at, updated_at) VALUES ({marks(5)}) "
        "RETURNING id", [application.id, "customer@example.org", "", now, now]))
    values = dict(application_id=application.id, member_id=member["id"], message="Old feedback",
        sentiment="neutral", sentiment_corrected=False, archived=False, nps=None, url=None, language="en",
        ip_address="", user_agent="", properties="[]", first_reply_time=None, last_reply_at=now,
        created_at=now, updated_at=now)
    [row] = await atomic(lambda: connections.get("default").execute_query_dict(
        f"INSERT INTO feedback ({', '.join(values)}) VALUES ({marks(len(values))}) RETURNING id",
        list(values.values())))
    return row["id"]
"""

BACKFILL_SCRIPT = (
    """
import asyncio, json, sys
from datetime import UTC, datetime
from tortoise import Tortoise
from tortoise.migrations.api.migrate import migrate
from app.db import atomic, close_database, ensure_sqlite_directory, open_database, tortoise_config
from app.db import upgrade_database
from app.models import Reply, ReplyDay
from tests.factories import make_user
"""
    + OLD_APPLICATION
    + OLD_THREAD
    + """
async def main(url):
    ensure_sqlite_directory(url)
    await migrate(config=tortoise_config(url), target="models.0005_search_indexes")
    await Tortoise.close_connections()
    await open_database(url)
    application = await old_application()
    thread_id = await old_thread(application)
    for day in (21, 21, 22):
        reply = await atomic(lambda: Reply.create(
            application_id=application.id, feedback_id=thread_id, type="reply", message="Hi",
            from_agent=False, email="customer@example.org",
        ))
        moved = datetime(2026, 11, day, 23, 30, tzinfo=UTC)
        await atomic(lambda: Reply.filter(id=reply.id).update(created_at=moved))
    await close_database()
    await upgrade_database(url)
    await open_database(url)
    days = await ReplyDay.filter(application_id=application.id).order_by("day").values_list("day", "count")
    print(json.dumps([[str(day), count] for day, count in days]))
    await close_database()

asyncio.run(main(sys.argv[1]))
"""
)


async def test_upgrade_counts_the_replies_already_written_per_utc_day(empty_database):
    output = await run_python(BACKFILL_SCRIPT, empty_database)

    assert json.loads(output.strip().splitlines()[-1]) == [["2026-11-21", 2], ["2026-11-22", 1]]


ATTACHMENT_IDS_SCRIPT = (
    """
import asyncio, json, sys
from tortoise import Tortoise, connections
from tortoise.migrations.api.migrate import migrate
from app.db import atomic, close_database, ensure_sqlite_directory, open_database, tortoise_config
from app.db import upgrade_database
from app.models import Attachment
from tests.factories import make_user
"""
    + OLD_APPLICATION
    + """
async def main(url):
    ensure_sqlite_directory(url)
    await migrate(config=tortoise_config(url), target="models.0009_sign_in_throttles")
    await Tortoise.close_connections()
    await open_database(url)
    application = await old_application()
    await atomic(lambda: connections.get("default").execute_script(
        "INSERT INTO attachments (application_id, name, mime_type, size, storage_name, token, created_at) "
        f"VALUES ({application.id}, 'old.txt', 'text/plain', 3, 'x', 't', '2026-11-01 10:00:00+00:00')"
    ))
    await close_database()
    await upgrade_database(url)
    await open_database(url)
    rows = await Attachment.all().values_list("id", "name")
    print(json.dumps(rows))
    await close_database()

asyncio.run(main(sys.argv[1]))
"""
)


async def test_upgrade_keeps_the_ids_of_existing_attachments(empty_database):
    output = await run_python(ATTACHMENT_IDS_SCRIPT, empty_database)

    assert json.loads(output.strip().splitlines()[-1]) == [[1, "old.txt"]]


UPLOAD_DAYS_SCRIPT = (
    """
import asyncio, json, sys
from datetime import UTC, datetime, timedelta
from tortoise import Tortoise, connections
from tortoise.migrations.api.migrate import migrate
from app.db import atomic, close_database, ensure_sqlite_directory, open_database, tortoise_config
from app.db import upgrade_database
from app.models import UploadDay
from tests.factories import make_user
"""
    + OLD_APPLICATION
    + OLD_THREAD
    + """
async def main(url):
    ensure_sqlite_directory(url)
    await migrate(config=tortoise_config(url), target="models.0018_search_database")
    await Tortoise.close_connections()
    await open_database(url)
    application = await old_application()
    thread_id = await old_thread(application)
    postgres = connections.get("default").capabilities.dialect == "postgres"
    reply = await atomic(lambda: connections.get("default").execute_query_dict(
        "INSERT INTO replies (application_id, feedback_id, type, message, from_agent, email, created_at) "
        + ("VALUES ($1, $2, 'reply', 'Hi', false, 'a@example.org', now()) RETURNING id" if postgres
           else "VALUES (?, ?, 'reply', 'Hi', 0, 'a@example.org', CURRENT_TIMESTAMP) RETURNING id"),
        [application.id, thread_id]))
    now = datetime.now(UTC)
    # Today: a free upload, one claimed by a thread, a file of a reply (e-mail); yesterday: one.
    for size, feedback_id, reply_id, at in (
        (3, None, None, now), (5, thread_id, None, now), (11, None, reply[0]["id"], now),
        (7, None, None, now - timedelta(days=1)),
    ):
        values = [size, application.id, feedback_id, reply_id, size, at if postgres else at.isoformat(" ")]
        marks = ", ".join(f"${n}" if postgres else "?" for n in range(1, len(values) + 1))
        await atomic(lambda values=values, marks=marks: connections.get("default").execute_query(
            "INSERT INTO attachments (id, application_id, feedback_id, reply_id, size, created_at, name, "
            f"mime_type, storage_name, token) VALUES ({marks}, 'f', 'text/plain', 'x', 't')", values))
    await close_database()
    await upgrade_database(url)
    await open_database(url)
    rows = await UploadDay.all().values_list("application_id", "day", "bytes")
    print(json.dumps([[a == application.id, str(day) == str(now.date()), total] for a, day, total in rows]))
    await close_database()

asyncio.run(main(sys.argv[1]))
"""
)


async def test_upgrade_counts_todays_uploads_toward_the_days_quota(empty_database):
    output = await run_python(UPLOAD_DAYS_SCRIPT, empty_database)

    assert json.loads(output.strip().splitlines()[-1]) == [[True, True, 8]]


ROLES_SCRIPT = """
import asyncio, json, sys
from tortoise import Tortoise, connections
from tortoise.migrations.api.migrate import migrate
from app.db import atomic, close_database, ensure_sqlite_directory, open_database, tortoise_config
from app.db import upgrade_database
from app.models import Membership, Organization
from tests.factories import make_user

async def main(url):
    ensure_sqlite_directory(url)
    await migrate(config=tortoise_config(url), target="models.0007_newest_threads_index")
    await Tortoise.close_connections()
    await open_database(url)
    ann, bob, cid = [await make_user(email=f"{name}@example.com") for name in ("ann", "bob", "cid")]
    shared, solo, empty = [
        await atomic(lambda name=name: Organization.create(name=name)) for name in ("Shared", "Solo", "Empty")
    ]
    # Memberships as they were before roles: bob joined Shared first, then ann and cid.
    for organization, user in ((shared, bob), (solo, cid), (shared, ann), (shared, cid)):
        await atomic(lambda organization=organization, user=user: connections.get("default").execute_script(
            "INSERT INTO memberships (organization_id, user_id, created_at) "
            f"VALUES ({organization.id}, {user.id}, CURRENT_TIMESTAMP)"
        ))
    await close_database()
    await upgrade_database(url)
    await open_database(url)
    rows = await Membership.all().order_by("id").values_list("organization__name", "user__email", "role")
    print(json.dumps(rows))
    await close_database()

asyncio.run(main(sys.argv[1]))
"""


async def test_upgrade_makes_the_earliest_member_of_each_organization_its_owner(empty_database):
    output = await run_python(ROLES_SCRIPT, empty_database)

    assert json.loads(output.strip().splitlines()[-1]) == [
        ["Shared", "bob@example.com", "owner"],
        ["Solo", "cid@example.com", "owner"],
        ["Shared", "ann@example.com", "agent"],
        ["Shared", "cid@example.com", "agent"],
    ]


SEARCH_FILE_SCRIPT = (
    """
import asyncio, json, sqlite3, sys
from tortoise import Tortoise, connections
from tortoise.migrations.api.migrate import migrate
from app.db import atomic, close_database, ensure_sqlite_directory, open_database, sqlite_file
from app.db import tortoise_config, upgrade_database
from app.services import search
from app.services.inbox import search_threads
from tests.factories import make_user
"""
    + OLD_APPLICATION
    + OLD_THREAD
    + """
async def main(url):
    ensure_sqlite_directory(url)
    await migrate(config=tortoise_config(url), target="models.0017_saved_replies")
    await Tortoise.close_connections()
    await open_database(url)
    application = await old_application()
    await old_thread(application)
    # As the indexer before 0018 left it: the thread in the main file's FTS5 table.
    await atomic(lambda: connections.get("default").execute_script(
        "INSERT INTO feedback_search(feedback_search) VALUES ('rebuild'); "
        "UPDATE search_progress SET last_id = (SELECT max(id) FROM feedback) WHERE name = 'feedback'"))
    await close_database()
    await upgrade_database(url)
    await open_database(url)
    page = await search_threads(application, query="feedback")
    senders = await search.matching_senders(application.id, "feedback")
    looked_up = await search.look_up(application.id, False, "feedback", None, senders)
    await close_database()
    main = sqlite3.connect(sqlite_file(url))
    left = main.execute("SELECT name FROM sqlite_master WHERE name LIKE '%search%' AND type = 'table'")
    found = [row.thread.message for row in page.rows]
    print(json.dumps({"found": found, "indexed": len(looked_up.ids), "main": sorted(r[0] for r in left)}))

asyncio.run(main(sys.argv[1]))
"""
)


async def test_upgrade_moves_the_sqlite_search_index_to_its_own_file(empty_database):
    if not empty_database.startswith("sqlite://"):
        pytest.skip("PostgreSQL keeps its trigram indexes in the database")

    output = json.loads((await run_python(SEARCH_FILE_SCRIPT, empty_database)).strip().splitlines()[-1])

    assert output == {"found": ["Old feedback"], "indexed": 1, "main": ["search_removals"]}
