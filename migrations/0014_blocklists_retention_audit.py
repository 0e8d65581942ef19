"""Blocklists of senders, retention settings per application, the audit trail of erasures and
deletions, and the indexes that let a thread's deletion find its e-mails."""

from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0013_capture_controls')]

    initial = False

    operations = [
        ops.CreateModel(
            name='AuditEntry',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('actor_id', fields.IntField(null=True)),
                ('application_id', fields.IntField(null=True)),
                ('action', fields.CharField(max_length=32)),
                ('counts', fields.JSONField(default=dict, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'audit_entries', 'app': 'models', 'indexes': [Index(fields=['actor_id', 'created_at']), Index(fields=['application_id', 'created_at'])], 'pk_attr': 'id', 'table_description': "A record of an erasure, an export of a person's data, a deletion of an application or a"},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='BlockedSender',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('application', fields.ForeignKeyField('models.Application', source_field='application_id', db_constraint=True, to_field='id', related_name='blocked_senders', on_delete=OnDelete.CASCADE)),
                ('kind', fields.CharField(max_length=8)),
                ('value', fields.CharField(max_length=254)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'blocked_senders', 'app': 'models', 'unique_together': (('application_id', 'kind', 'value'),), 'pk_attr': 'id', 'table_description': "An entry of an application's blocklist: an e-mail address, a domain (its subdomains too)"},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Application',
            name='retention_archived_only',
            field=fields.BooleanField(default=False, db_default=False),
        ),
        ops.AddField(
            model_name='Application',
            name='retention_days',
            field=fields.IntField(null=True),
        ),
        ops.AddIndex(
            model_name='InboundEmail',
            index=Index(fields=['feedback_id']),
        ),
        ops.AddIndex(
            model_name='OutboundEmail',
            index=Index(fields=['reply_id']),
        ),
    ]
