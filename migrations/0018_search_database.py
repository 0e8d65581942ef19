"""SQLite: the search index moves to a database file of its own (app.search_db).

The FTS5 tables, their progress marks and the triggers that wrote into them leave the main
file. In their place, triggers record each thread or sender deleted, or whose indexed text
changed, in ``search_removals``; the indexer applies those to the search file
(app.repositories.search_index), which it fills from scratch in the background after this
upgrade: until it has caught up, searches scan. The pages the old index took in the main file
are reused by new rows; ``VACUUM`` gives them back to the disk. PostgreSQL: nothing changes.
"""

import importlib

from tortoise import migrations
from tortoise.migrations import operations as ops

_INDEXES_IN_MAIN_FILE = importlib.import_module("migrations.0005_search_indexes")

SQLITE_FORWARD = [
    *_INDEXES_IN_MAIN_FILE.SQLITE_BACKWARD,
    "CREATE TABLE search_removals (id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "
    "name VARCHAR(16) NOT NULL, row_id INT NOT NULL)",
    "CREATE TRIGGER feedback_search_delete AFTER DELETE ON feedback BEGIN "
    "INSERT INTO search_removals (name, row_id) VALUES ('feedback', old.id); END",
    "CREATE TRIGGER feedback_search_update AFTER UPDATE OF message ON feedback "
    "WHEN old.message IS NOT new.message BEGIN "
    "INSERT INTO search_removals (name, row_id) VALUES ('feedback', old.id); END",
    "CREATE TRIGGER members_search_delete AFTER DELETE ON members BEGIN "
    "INSERT INTO search_removals (name, row_id) VALUES ('members', old.id); END",
    "CREATE TRIGGER members_search_update AFTER UPDATE OF email, name ON members "
    "WHEN old.email IS NOT new.email OR old.name IS NOT new.name BEGIN "
    "INSERT INTO search_removals (name, row_id) VALUES ('members', old.id); END",
]

SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS members_search_update",
    "DROP TRIGGER IF EXISTS members_search_delete",
    "DROP TRIGGER IF EXISTS feedback_search_update",
    "DROP TRIGGER IF EXISTS feedback_search_delete",
    "DROP TABLE IF EXISTS search_removals",
    *_INDEXES_IN_MAIN_FILE.SQLITE_FORWARD,
]


async def _run(schema_editor, statements: list[str]) -> None:
    client = schema_editor.client
    if client.capabilities.dialect != "sqlite":
        return
    for statement in statements:
        await client.execute_script(statement)


async def move_search_index_out(apps, schema_editor) -> None:
    await _run(schema_editor, SQLITE_FORWARD)


async def move_search_index_back(apps, schema_editor) -> None:
    await _run(schema_editor, SQLITE_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("models", "0017_saved_replies")]

    initial = False

    operations = [ops.RunPython(move_search_index_out, move_search_index_back)]
