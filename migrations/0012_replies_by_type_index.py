from tortoise import migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [("models", "0011_password_reset_requests")]

    initial = False

    operations = [
        ops.AddIndex(
            model_name="Reply",
            index=Index(fields=["application_id", "type", "created_at", "id"]),
        ),
    ]
