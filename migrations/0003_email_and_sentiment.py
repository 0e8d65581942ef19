from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0002_web_app')]

    initial = False

    operations = [
        ops.CreateModel(
            name='InboundEmail',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('message_id', fields.CharField(unique=True, max_length=255)),
                ('feedback', fields.ForeignKeyField('models.Feedback', source_field='feedback_id', db_constraint=True, to_field='id', related_name='inbound_emails', on_delete=OnDelete.CASCADE)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'inbound_emails', 'app': 'models', 'pk_attr': 'id', 'table_description': 'The Message-ID of every e-mail turned into a thread or a reply, so a redelivery is ignored.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='OutboundEmail',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('application', fields.ForeignKeyField('models.Application', source_field='application_id', db_constraint=True, to_field='id', related_name='outbound_emails', on_delete=OnDelete.CASCADE)),
                ('feedback', fields.ForeignKeyField('models.Feedback', source_field='feedback_id', db_constraint=True, to_field='id', related_name='outbound_emails', on_delete=OnDelete.CASCADE)),
                ('reply', fields.ForeignKeyField('models.Reply', source_field='reply_id', db_constraint=True, to_field='id', related_name='outbound_emails', on_delete=OnDelete.CASCADE)),
                ('to_address', fields.CharField(max_length=254)),
                ('message_id', fields.CharField(unique=True, max_length=255)),
                ('status', fields.CharField(default='pending', max_length=8)),
                ('attempts', fields.IntField(default=0)),
                ('next_attempt_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('last_error', fields.TextField(default='', unique=False)),
                ('sent_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'outbound_emails', 'app': 'models', 'indexes': [Index(fields=['status', 'next_attempt_at']), Index(fields=['feedback_id'])], 'pk_attr': 'id', 'table_description': 'A public reply waiting to be e-mailed to the customer, or sent already (the outbox).'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Feedback',
            name='sentiment_corrected',
            field=fields.BooleanField(default=False),
        ),
    ]
