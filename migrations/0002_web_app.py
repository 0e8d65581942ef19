from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from tortoise.indexes import Index


class Migration(migrations.Migration):
    dependencies = [("models", "0001_initial")]

    initial = False

    operations = [
        ops.CreateModel(
            name="SignInFailure",
            fields=[
                ("id", fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ("key", fields.CharField(max_length=300)),
                ("created_at", fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={
                "table": "sign_in_failures",
                "app": "models",
                "indexes": [Index(fields=["key", "created_at"])],
                "pk_attr": "id",
                "table_description": "A failed sign-in, kept for a while to rate-limit guessing per account and per address.",
            },
            bases=["Model"],
        ),
        ops.AddIndex(
            model_name="Feedback",
            index=Index(fields=["application_id", "archived", "sentiment", "id"]),
        ),
        ops.AddIndex(
            model_name="Feedback",
            index=Index(fields=["application_id", "created_at"]),
        ),
    ]
