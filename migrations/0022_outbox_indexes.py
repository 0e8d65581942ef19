"""The outbox's indexes by thread and by reply, on SQLite again; its index by status, gone.

Migration 0015 made the outbox's thread and reply nullable; SQLite changes a column by building
the table anew, and that rebuild left out the indexes that 0003 and 0015 declared. So on SQLite
every deletion of a reply or a thread (whose e-mails go with it, ON DELETE CASCADE) and the
thread page's e-mail statuses read every e-mail ever queued. PostgreSQL kept them, under the
names used here, so there the first step does nothing.

The index by (status, next_attempt_at) served the outbox workers' poll until 0021's index of the
due e-mails replaced it; on PostgreSQL it only cost every change of status an index write, and on
SQLite, once back, the planner took it for the poll over the due index. So it goes, from the
models and both databases (created first where the rebuild lost it, so that one step removes it
everywhere). tests/test_migrations.py checks that every index a model declares exists on both.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

INDEXES = {
    "idx_outbound_em_feedbac_812051": "feedback_id",
    "idx_outbound_em_reply_i_04b03d": "reply_id",
    "idx_outbound_em_status_c17760": "status, next_attempt_at",
}


async def restore_lost_indexes(apps, schema_editor) -> None:
    for name, columns in INDEXES.items():
        await schema_editor.client.execute_script(
            f"CREATE INDEX IF NOT EXISTS {name} ON outbound_emails ({columns})"
        )


async def keep_restored_indexes(apps, schema_editor) -> None:
    """Going back keeps them: the schema before this migration declares them too."""


class Migration(migrations.Migration):
    dependencies = [("models", "0021_outbox_due")]

    initial = False

    operations = [
        ops.RunPython(restore_lost_indexes, keep_restored_indexes),
        ops.RemoveIndex(model_name="OutboundEmail", fields=["status", "next_attempt_at"]),
    ]
