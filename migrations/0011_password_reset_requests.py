"""Password reset e-mails sent, kept for an hour to limit how many a user gets."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0010_random_attachment_ids')]

    initial = False

    operations = [
        ops.CreateModel(
            name='PasswordResetRequest',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='password_reset_requests', on_delete=OnDelete.CASCADE)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'password_reset_requests', 'app': 'models', 'indexes': [Index(fields=['user_id', 'created_at'])], 'pk_attr': 'id', 'table_description': 'A password reset e-mail sent to a user, kept for an hour to limit how many are sent.'},
            bases=['Model'],
        ),
    ]
