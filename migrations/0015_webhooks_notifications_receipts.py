"""Webhooks (endpoints, events, deliveries and their attempts), agents' notification settings, receipts
per application, and an outbox that carries other e-mails than replies."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0014_blocklists_retention_audit')]

    initial = False

    operations = [
        ops.CreateModel(
            name='NotificationSetting',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='notification_settings', on_delete=OnDelete.CASCADE)),
                ('application', fields.ForeignKeyField('models.Application', source_field='application_id', db_constraint=True, to_field='id', related_name='notification_settings', on_delete=OnDelete.CASCADE)),
                ('mode', fields.CharField(max_length=8)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'notification_settings', 'app': 'models', 'unique_together': (('user_id', 'application_id'),), 'indexes': [Index(fields=['application_id', 'mode'])], 'pk_attr': 'id', 'table_description': "How an agent hears of an application's new feedback by e-mail: every new thread"},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookEndpoint',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('application', fields.ForeignKeyField('models.Application', source_field='application_id', null=True, db_constraint=True, to_field='id', related_name='webhook_endpoints', on_delete=OnDelete.CASCADE)),
                ('organization', fields.ForeignKeyField('models.Organization', source_field='organization_id', null=True, db_constraint=True, to_field='id', related_name='webhook_endpoints', on_delete=OnDelete.CASCADE)),
                ('url', fields.CharField(max_length=2048)),
                ('description', fields.CharField(default='', max_length=200)),
                ('events', fields.CharField(default='', max_length=200)),
                ('include_notes', fields.BooleanField(default=False)),
                ('format', fields.CharField(default='standard', max_length=8)),
                ('enabled', fields.BooleanField(default=True)),
                ('secret', fields.CharField(max_length=64)),
                ('previous_secret', fields.CharField(null=True, max_length=64)),
                ('previous_secret_expires_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('failing_since', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('disabled_reason', fields.CharField(default='', max_length=200)),
                ('created_by', fields.ForeignKeyField('models.User', source_field='created_by_id', null=True, db_constraint=True, to_field='id', related_name='webhook_endpoints', on_delete=OnDelete.SET_NULL)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'webhook_endpoints', 'app': 'models', 'indexes': [Index(fields=['application_id']), Index(fields=['organization_id'])], 'pk_attr': 'id', 'table_description': "A URL that receives an application's events, or those of every application of an"},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookEvent',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('application_id', fields.IntField(null=True)),
                ('feedback_id', fields.IntField(null=True)),
                ('type', fields.CharField(max_length=32)),
                ('payload', fields.TextField(unique=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'webhook_events', 'app': 'models', 'indexes': [Index(fields=['feedback_id']), Index(fields=['created_at'])], 'pk_attr': 'id', 'table_description': 'An event as it was when its change committed: the body of a standard delivery.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookDelivery',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('endpoint', fields.ForeignKeyField('models.WebhookEndpoint', source_field='endpoint_id', db_constraint=True, to_field='id', related_name='deliveries', on_delete=OnDelete.CASCADE)),
                ('event', fields.ForeignKeyField('models.WebhookEvent', source_field='event_id', db_constraint=True, to_field='id', related_name='deliveries', on_delete=OnDelete.CASCADE)),
                ('message_id', fields.CharField(unique=True, max_length=40)),
                ('status', fields.CharField(default='pending', max_length=10)),
                ('attempts', fields.IntField(default=0)),
                ('next_attempt_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('last_status_code', fields.IntField(null=True)),
                ('last_error', fields.TextField(default='', unique=False)),
                ('delivered_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'webhook_deliveries', 'app': 'models', 'indexes': [Index(fields=['status', 'next_attempt_at']), Index(fields=['endpoint_id', 'id']), Index(fields=['event_id'])], 'pk_attr': 'id', 'table_description': 'One event for one endpoint: the queue row the worker claims, retries and finally marks'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookAttempt',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('delivery', fields.ForeignKeyField('models.WebhookDelivery', source_field='delivery_id', db_constraint=True, to_field='id', related_name='attempt_log', on_delete=OnDelete.CASCADE)),
                ('attempted_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('duration_ms', fields.IntField()),
                ('status_code', fields.IntField(null=True)),
                ('error', fields.TextField(default='', unique=False)),
                ('request_headers', fields.TextField(default='', unique=False)),
                ('response_headers', fields.TextField(default='', unique=False)),
                ('response_body', fields.TextField(default='', unique=False)),
            ],
            options={'table': 'webhook_attempts', 'app': 'models', 'indexes': [Index(fields=['delivery_id', 'id'])], 'pk_attr': 'id', 'table_description': 'One try of a delivery: when, how long, what was sent and what came back (truncated).'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Application',
            name='receipts_enabled',
            field=fields.BooleanField(default=False, db_default=False),
        ),
        ops.AlterModelOptions(
            name='OutboundEmail',
            options={'table': 'outbound_emails', 'app': 'models', 'indexes': [Index(fields=['status', 'next_attempt_at']), Index(fields=['feedback_id']), Index(fields=['reply_id']), Index(fields=['user_id']), Index(fields=['to_address', 'kind', 'created_at'])], 'pk_attr': 'id', 'table_description': 'An e-mail waiting to be sent, or sent already (the outbox): a public reply to the'},
        ),
        ops.AlterField(
            model_name='OutboundEmail',
            name='application',
            field=fields.ForeignKeyField('models.Application', source_field='application_id', null=True, db_constraint=True, to_field='id', related_name='outbound_emails', on_delete=OnDelete.CASCADE),
        ),
        ops.AlterField(
            model_name='OutboundEmail',
            name='feedback',
            field=fields.ForeignKeyField('models.Feedback', source_field='feedback_id', null=True, db_constraint=True, to_field='id', related_name='outbound_emails', on_delete=OnDelete.CASCADE),
        ),
        ops.AlterField(
            model_name='OutboundEmail',
            name='reply',
            field=fields.ForeignKeyField('models.Reply', source_field='reply_id', null=True, db_constraint=True, to_field='id', related_name='outbound_emails', on_delete=OnDelete.CASCADE),
        ),
        ops.AddField(
            model_name='OutboundEmail',
            name='content',
            field=fields.TextField(default='', db_default='', unique=False),
        ),
        ops.AddField(
            model_name='OutboundEmail',
            name='kind',
            field=fields.CharField(default='reply', db_default='reply', max_length=16),
        ),
        ops.AddField(
            model_name='OutboundEmail',
            name='user',
            field=fields.ForeignKeyField('models.User', source_field='user_id', null=True, db_constraint=True, to_field='id', related_name='outbound_emails', on_delete=OnDelete.CASCADE),
        ),
        ops.AddIndex(
            model_name='OutboundEmail',
            index=Index(fields=['user_id']),
        ),
        ops.AddIndex(
            model_name='OutboundEmail',
            index=Index(fields=['to_address', 'kind', 'created_at']),
        ),
    ]
