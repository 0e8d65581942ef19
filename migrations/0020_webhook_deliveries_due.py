"""An index of the webhook deliveries still to send (pending, or sending on a lease), in the order
the delivery workers take them: ``(next_attempt_at, id)``, for those rows only.

The workers' claim (app.repositories.webhook_batches.claim_due_deliveries) asked the
``(status, next_attempt_at)`` index for two statuses, which it can only answer as a bitmap
scan followed by a sort. Every delivery changes its status twice, so under a steady load that
index fills with entries of rows no longer due, which a bitmap scan never marks as dead: on
PostgreSQL, after a million deliveries the claim read 250,000 such entries (55 ms) to find
none. Ordered like the claim and holding the due rows only, this index is read in order up to
the batch, and PostgreSQL marks the dead entries it meets so that the next scan skips them.
SQLite changes its indexes in place, leaving no entries behind: its claim keeps the index by
status, and this migration changes nothing there.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

FORWARD = (
    "CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) "
    "WHERE status IN ('pending', 'sending')"
)
BACKWARD = "DROP INDEX IF EXISTS webhook_deliveries_due"


async def create_due_index(apps, schema_editor) -> None:
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(FORWARD)


async def drop_due_index(apps, schema_editor) -> None:
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("models", "0019_upload_days")]

    initial = False

    operations = [ops.RunPython(create_due_index, drop_due_index)]
