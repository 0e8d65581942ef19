"""An index of the e-mails still to send (pending, or sending on a lease), in the order the
outbox workers take them: what migration 0020 did for the webhook deliveries, on both databases.

On PostgreSQL every e-mail changes status twice, so the ``(status, next_attempt_at)`` index fills
with entries of rows sent since, which the workers' poll for two statuses reads through a bitmap
scan that never marks them dead. SQLite did not use that index for the poll at all: it scanned
every e-mail ever queued and sorted the due ones (23,000 rows in the bench's data). This index
holds the due rows only, in ``(next_attempt_at, id)`` order; both read it in order up to the batch.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

FORWARD = (
    "CREATE INDEX IF NOT EXISTS outbound_emails_due ON outbound_emails (next_attempt_at, id) "
    "WHERE status IN ('pending', 'sending')"
)
BACKWARD = "DROP INDEX IF EXISTS outbound_emails_due"


async def create_due_index(apps, schema_editor) -> None:
    await schema_editor.client.execute_script(FORWARD)


async def drop_due_index(apps, schema_editor) -> None:
    await schema_editor.client.execute_script(BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("models", "0020_webhook_deliveries_due")]

    initial = False

    operations = [ops.RunPython(create_due_index, drop_due_index)]
