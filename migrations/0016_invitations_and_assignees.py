"""Invitations to join an organization, and threads assigned to an agent.

``invitations`` keeps each invitation's address, role, the digest of its link's token and what
became of it. ``feedback.assignee_id`` names the agent a thread is assigned to; the index by
(application, archived, assignee, id) serves the inbox's Mine and Unassigned filters newest
first, and on PostgreSQL its twin ordered by ``-id`` (as migration 0007 does for the others),
since the lists order by ``-id`` there.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

ASSIGNEE_INDEX = "feedback_newest_by_assignee"


async def create_assignee_index(apps, schema_editor) -> None:
    client = schema_editor.client
    if client.capabilities.dialect != "postgres":
        return
    await client.execute_script(
        f"CREATE INDEX IF NOT EXISTS {ASSIGNEE_INDEX} ON feedback (application_id, archived, assignee_id, (-id))"
    )


async def drop_assignee_index(apps, schema_editor) -> None:
    client = schema_editor.client
    if client.capabilities.dialect != "postgres":
        return
    await client.execute_script(f"DROP INDEX IF EXISTS {ASSIGNEE_INDEX}")


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
        ops.AddIndex(
            model_name='Feedback',
            index=Index(fields=['application_id', 'archived', 'assignee_id', 'id']),
        ),
        ops.RunPython(create_assignee_index, drop_assignee_index),
    ]
