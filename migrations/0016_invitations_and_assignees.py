"""Invitations to join an organization, and threads assigned to an agent.

``invitations`` keeps each invitation's address, role, the digest of its link's token and what
became of it. ``feedback.assignee_id`` names the agent a thread is assigned to, and one index
serves the inbox's Mine and Unassigned newest first (app.repositories.inbox.ThreadQuery.assigned):

- SQLite: (application_id, archived, assignee_id, id); ``assignee_id IS NULL`` is an equality
  there, so the id order follows.
- PostgreSQL: the lists order by ``-id`` (as migration 0007 explains), and its planner does not
  take ``IS NULL`` as an equality that fixes the order of the columns after it, so the index is on
  ``COALESCE(assignee_id, 0)`` (no user has the id 0) and the condition is written the same way.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

INDEXES = {
    "sqlite": ("feedback_by_assignee", "feedback (application_id, archived, assignee_id, id)"),
    "postgres": (
        "feedback_newest_by_assignee",
        "feedback (application_id, archived, (COALESCE(assignee_id, 0)), (-id))",
    ),
}


async def create_assignee_index(apps, schema_editor) -> None:
    client = schema_editor.client
    name, columns = INDEXES[client.capabilities.dialect]
    await client.execute_script(f"CREATE INDEX IF NOT EXISTS {name} ON {columns}")


async def drop_assignee_index(apps, schema_editor) -> None:
    client = schema_editor.client
    name, _ = INDEXES[client.capabilities.dialect]
    await client.execute_script(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [('models', '0015_webhooks_notifications_receipts')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Invitation',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('organization', fields.ForeignKeyField('models.Organization', source_field='organization_id', db_constraint=True, to_field='id', related_name='invitations', on_delete=OnDelete.CASCADE)),
                ('email', fields.CharField(max_length=254)),
                ('role', fields.CharField(default='agent', max_length=16)),
                ('token_hash', fields.CharField(unique=True, max_length=64)),
                ('invited_by', fields.ForeignKeyField('models.User', source_field='invited_by_id', null=True, db_constraint=True, to_field='id', related_name='invitations_sent', on_delete=OnDelete.SET_NULL)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('accepted_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('accepted_by', fields.ForeignKeyField('models.User', source_field='accepted_by_id', null=True, db_constraint=True, to_field='id', related_name='invitations_accepted', on_delete=OnDelete.SET_NULL)),
                ('revoked_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'invitations', 'app': 'models', 'indexes': [Index(fields=['organization_id', 'email'])], 'pk_attr': 'id', 'table_description': 'An invitation to join an organization with a role, accepted through a link sent to one address.'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Feedback',
            name='assignee',
            field=fields.ForeignKeyField('models.User', source_field='assignee_id', null=True, db_constraint=True, to_field='id', related_name='assigned_threads', on_delete=OnDelete.SET_NULL),
        ),
        ops.RunPython(create_assignee_index, drop_assignee_index),
    ]
