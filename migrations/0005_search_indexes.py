"""Indexes for the inbox's text search: substring matches on messages and on senders.

SQLite: FTS5 tables with the trigram tokenizer over feedback.message and members.email/name,
so ``LIKE '%text%'`` is answered from the index. New rows are added in batches by
``app.services.search.index_new_rows`` up to ``search_progress.last_id`` (an FTS5 insert in
every capture transaction cut SQLite's submit throughput by about a third); triggers keep the
rows already indexed in step when they change or go. PostgreSQL: GIN
trigram indexes (pg_trgm) on the upper-cased columns, the expressions Tortoise's ``icontains``
filters on. pg_trgm ships with PostgreSQL and is a trusted extension; where the database user
may not create it, the indexes are skipped and search still works, by scanning.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE feedback_search USING fts5("
    "message, content='feedback', content_rowid='id', tokenize='trigram')",
    "CREATE VIRTUAL TABLE members_search USING fts5("
    "email, name, content='members', content_rowid='id', tokenize='trigram')",
    "CREATE TABLE search_progress (name VARCHAR(16) NOT NULL PRIMARY KEY, last_id INT NOT NULL)",
    "INSERT INTO feedback_search(feedback_search) VALUES ('rebuild')",
    "INSERT INTO members_search(members_search) VALUES ('rebuild')",
    "INSERT INTO search_progress (name, last_id) VALUES "
    "('feedback', (SELECT coalesce(max(id), 0) FROM feedback)), "
    "('members', (SELECT coalesce(max(id), 0) FROM members))",
    "CREATE TRIGGER feedback_search_delete AFTER DELETE ON feedback "
    "WHEN old.id <= (SELECT last_id FROM search_progress WHERE name = 'feedback') BEGIN "
    "INSERT INTO feedback_search(feedback_search, rowid, message) VALUES ('delete', old.id, old.message); END",
    "CREATE TRIGGER feedback_search_update AFTER UPDATE OF message ON feedback "
    "WHEN old.id <= (SELECT last_id FROM search_progress WHERE name = 'feedback') "
    "AND old.message IS NOT new.message BEGIN "
    "INSERT INTO feedback_search(feedback_search, rowid, message) VALUES ('delete', old.id, old.message); "
    "INSERT INTO feedback_search(rowid, message) VALUES (new.id, new.message); END",
    "CREATE TRIGGER members_search_delete AFTER DELETE ON members "
    "WHEN old.id <= (SELECT last_id FROM search_progress WHERE name = 'members') BEGIN "
    "INSERT INTO members_search(members_search, rowid, email, name) "
    "VALUES ('delete', old.id, old.email, old.name); END",
    "CREATE TRIGGER members_search_update AFTER UPDATE OF email, name ON members "
    "WHEN old.id <= (SELECT last_id FROM search_progress WHERE name = 'members') "
    "AND (old.email IS NOT new.email OR old.name IS NOT new.name) BEGIN "
    "INSERT INTO members_search(members_search, rowid, email, name) "
    "VALUES ('delete', old.id, old.email, old.name); "
    "INSERT INTO members_search(rowid, email, name) VALUES (new.id, new.email, new.name); END",
]

SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS members_search_update",
    "DROP TRIGGER IF EXISTS members_search_delete",
    "DROP TRIGGER IF EXISTS feedback_search_update",
    "DROP TRIGGER IF EXISTS feedback_search_delete",
    "DROP TABLE IF EXISTS search_progress",
    "DROP TABLE IF EXISTS members_search",
    "DROP TABLE IF EXISTS feedback_search",
]

POSTGRES_CAN_INDEX = """
SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')
    OR (EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')
        AND ((SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
             OR has_database_privilege(current_database(), 'CREATE'))) AS can_index
"""

POSTGRES_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX feedback_message_search ON feedback USING gin (upper(message) gin_trgm_ops)",
    "CREATE INDEX members_email_search ON members USING gin (upper(email::text) gin_trgm_ops)",
    "CREATE INDEX members_name_search ON members USING gin (upper(name::text) gin_trgm_ops)",
]

POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS members_name_search",
    "DROP INDEX IF EXISTS members_email_search",
    "DROP INDEX IF EXISTS feedback_message_search",
]


async def create_search_indexes(apps, schema_editor) -> None:
    client = schema_editor.client
    if client.capabilities.dialect == "sqlite":
        statements = SQLITE_FORWARD
    elif client.capabilities.dialect == "postgres":
        _, rows = await client.execute_query(POSTGRES_CAN_INDEX)
        statements = POSTGRES_FORWARD if rows[0]["can_index"] else []
    else:
        statements = []
    for statement in statements:
        await client.execute_script(statement)


async def drop_search_indexes(apps, schema_editor) -> None:
    client = schema_editor.client
    dialect = client.capabilities.dialect
    statements = {"sqlite": SQLITE_BACKWARD, "postgres": POSTGRES_BACKWARD}.get(dialect, [])
    for statement in statements:
        await client.execute_script(statement)


class Migration(migrations.Migration):
    dependencies = [("models", "0004_replies_by_date_index")]

    initial = False

    operations = [ops.RunPython(create_search_indexes, drop_search_indexes)]
