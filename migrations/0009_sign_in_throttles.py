"""Sign-in throttles taken atomically before the password check replace the failures counted after it."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0008_organization_roles')]

    initial = False

    operations = [
        ops.CreateModel(
            name='SignInThrottle',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('key', fields.CharField(unique=True, max_length=80)),
                ('window_started_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('admitted', fields.IntField(default=0)),
                ('last_admitted_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('last_refused', fields.BooleanField(default=False)),
            ],
            options={'table': 'sign_in_throttles', 'app': 'models', 'indexes': [Index(fields=['window_started_at'])], 'pk_attr': 'id', 'table_description': 'Sign-in attempts admitted in the current window for one key (an account, an address or both).'},
            bases=['Model'],
        ),
        ops.DeleteModel(name='SignInFailure'),
    ]
