"""Replies and notes per application and UTC day, counted on write (``reply_days``), so that the
replies list by date reports its total without counting the day's replies. Existing replies are
counted once here.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields

DAY_OF_REPLY = {
    "sqlite": "substr(created_at, 1, 10)",
    "postgres": "(created_at AT TIME ZONE 'UTC')::date",
}


async def count_existing_replies(apps, schema_editor) -> None:
    client = schema_editor.client
    day = DAY_OF_REPLY[client.capabilities.dialect]
    await client.execute_script(
        f"INSERT INTO reply_days (application_id, day, count) "
        f"SELECT application_id, {day}, COUNT(*) FROM replies GROUP BY application_id, {day}"
    )


async def forget_counts(apps, schema_editor) -> None:
    """The table goes with the migration's reversal."""


class Migration(migrations.Migration):
    dependencies = [('models', '0005_search_indexes')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ReplyDay',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('application', fields.ForeignKeyField('models.Application', source_field='application_id', db_constraint=True, to_field='id', related_name='reply_days', on_delete=OnDelete.CASCADE)),
                ('day', fields.DateField()),
                ('count', fields.IntField(default=0)),
            ],
            options={'table': 'reply_days', 'app': 'models', 'unique_together': (('application_id', 'day'),), 'pk_attr': 'id', 'table_description': 'How many replies and notes an application got on one UTC day, counted on write.'},
            bases=['Model'],
        ),
        ops.RunPython(count_existing_replies, forget_counts),
    ]
