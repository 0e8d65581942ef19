"""Saved replies: titled answers with placeholders, kept per application or per organization, that
agents insert into the reply box."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0016_invitations_and_assignees')]

    initial = False

    operations = [
        ops.CreateModel(
            name='SavedReply',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('application', fields.ForeignKeyField('models.Application', source_field='application_id', null=True, db_constraint=True, to_field='id', related_name='saved_replies', on_delete=OnDelete.CASCADE)),
                ('organization', fields.ForeignKeyField('models.Organization', source_field='organization_id', null=True, db_constraint=True, to_field='id', related_name='saved_replies', on_delete=OnDelete.CASCADE)),
                ('title', fields.CharField(max_length=100)),
                ('text', fields.TextField(unique=False)),
                ('created_by', fields.ForeignKeyField('models.User', source_field='created_by_id', null=True, db_constraint=True, to_field='id', related_name='saved_replies', on_delete=OnDelete.SET_NULL)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'saved_replies', 'app': 'models', 'indexes': [Index(fields=['application_id', 'title']), Index(fields=['organization_id', 'title'])], 'pk_attr': 'id', 'table_description': 'A titled answer agents insert into the reply box, with placeholders filled per thread.'},
            bases=['Model'],
        ),
    ]
