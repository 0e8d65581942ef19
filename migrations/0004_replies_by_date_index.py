from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0003_email_and_sentiment')]

    initial = False

    operations = [
        ops.RemoveIndex(
            model_name='Reply',
            name=None,
            fields=['application_id', 'created_at'],
        ),
        ops.AddIndex(
            model_name='Reply',
            index=Index(fields=['application_id', 'created_at', 'id']),
        ),
    ]
