"""Bytes uploaded per application and UTC day, counted on write (``upload_days``), so that the
daily upload quota reads one row instead of summing the day's files. Today's uploads still on
record (free, or claimed by a thread) are counted once here; earlier days are of no use to the
quota, and files of replies (e-mail) never counted.
"""

from datetime import UTC, datetime

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.migrations import operations as ops


async def count_todays_uploads(apps, schema_editor) -> None:
    client = schema_editor.client
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if client.capabilities.dialect == "postgres":
        marks, values = ("$1::date", "$2"), [start.date(), start]
    else:
        # SQLite keeps dates and date-times as ISO text, as app.repositories.sql writes them.
        marks, values = ("?", "?"), [start.date().isoformat(), start.isoformat(" ")]
    await client.execute_query(
        "INSERT INTO upload_days (application_id, day, bytes) "
        f"SELECT application_id, {marks[0]}, SUM(size) FROM attachments "
        f"WHERE reply_id IS NULL AND created_at >= {marks[1]} GROUP BY application_id",
        values,
    )


async def forget_counts(apps, schema_editor) -> None:
    """The table goes with the migration's reversal."""


class Migration(migrations.Migration):
    dependencies = [("models", "0018_search_database")]

    initial = False

    operations = [
        ops.CreateModel(
            name="UploadDay",
            fields=[
                ("id", fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ("application", fields.ForeignKeyField("models.Application", source_field="application_id", db_constraint=True, to_field="id", related_name="upload_days", on_delete=OnDelete.CASCADE)),
                ("day", fields.DateField()),
                ("bytes", fields.BigIntField(default=0)),
            ],
            options={"table": "upload_days", "app": "models", "unique_together": (("application_id", "day"),), "pk_attr": "id", "table_description": "Bytes an application took through uploads on one UTC day, counted on write."},
            bases=["Model"],
        ),
        ops.RunPython(count_todays_uploads, forget_counts),
    ]
