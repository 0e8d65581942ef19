from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0012_replies_by_type_index')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Application',
            name='allowed_origins',
            field=fields.TextField(default='', db_default='', unique=False),
        ),
        ops.AddField(
            model_name='Application',
            name='capture_enabled',
            field=fields.BooleanField(default=True, db_default=True),
        ),
        ops.AddField(
            model_name='Application',
            name='opens_per_minute',
            field=fields.IntField(null=True),
        ),
        ops.AddField(
            model_name='Application',
            name='submits_per_minute',
            field=fields.IntField(null=True),
        ),
        ops.AddField(
            model_name='Application',
            name='submits_per_minute_total',
            field=fields.IntField(null=True),
        ),
        ops.AddField(
            model_name='Application',
            name='uploads_per_minute',
            field=fields.IntField(null=True),
        ),
    ]
